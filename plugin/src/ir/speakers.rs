//! Speaker sets and WAV channel masks: the speakers Longtail knows for each width, in WAV
//! channel order, the `WAVE_FORMAT_EXTENSIBLE` mask a render of each carries, and whether a
//! file's mask agrees with a bus. Uses nothing else of the crate but [`super::IrError`].

use super::IrError;

/// A speaker set, in WAV channel order (speakers by ascending mask bit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpeakerSet {
    /// Its name ("7.1.4").
    pub name: &'static str,
    /// One label per channel ("L", "R", "C", "LFE", "Ls", ...).
    pub labels: &'static [&'static str],
    /// Its `WAVE_FORMAT_EXTENSIBLE` channel mask; 0 where WAV's 18 speaker bits cannot name
    /// it (9.1.6's wide and top-middle speakers).
    pub wav_mask: u32,
}

/// The speaker sets Longtail knows, one per width. 5.1.4 and 7.1.2 have the same sides
/// channel for channel (L R C LFE and three left/right pairs), so one entry stands for both,
/// with 5.1.4's mask (WAV has no top-middle speakers).
pub const SPEAKER_SETS: &[SpeakerSet] = &[
    SpeakerSet {
        name: "quad",
        labels: &["L", "R", "Ls", "Rs"],
        wav_mask: 0x33,
    },
    SpeakerSet {
        name: "5.0",
        labels: &["L", "R", "C", "Ls", "Rs"],
        wav_mask: 0x37,
    },
    SpeakerSet {
        name: "5.1",
        labels: &["L", "R", "C", "LFE", "Ls", "Rs"],
        wav_mask: 0x3F,
    },
    SpeakerSet {
        name: "7.0",
        labels: &["L", "R", "C", "Lrs", "Rrs", "Lss", "Rss"],
        wav_mask: 0x637,
    },
    SpeakerSet {
        name: "7.1",
        labels: &["L", "R", "C", "LFE", "Lrs", "Rrs", "Lss", "Rss"],
        wav_mask: 0x63F,
    },
    SpeakerSet {
        name: "5.1.4 / 7.1.2",
        labels: &["L", "R", "C", "LFE", "Ls", "Rs", "Ltf", "Rtf", "Ltr", "Rtr"],
        wav_mask: 0x2D03F,
    },
    SpeakerSet {
        name: "7.1.4",
        labels: &[
            "L", "R", "C", "LFE", "Lrs", "Rrs", "Lss", "Rss", "Ltf", "Rtf", "Ltr", "Rtr",
        ],
        wav_mask: 0x2D63F,
    },
    SpeakerSet {
        name: "9.1.6",
        labels: &[
            "L", "R", "C", "LFE", "Ls", "Rs", "Lrs", "Rrs", "Lw", "Rw", "Ltf", "Rtf", "Ltm", "Rtm",
            "Ltr", "Rtr",
        ],
        wav_mask: 0,
    },
];

/// WAV's speaker bits in order, each with its name and side (`L`, `R`, `C` or `LFE`).
const WAV_SPEAKERS: [(&str, &str); 18] = [
    ("FL", "L"),
    ("FR", "R"),
    ("FC", "C"),
    ("LFE", "LFE"),
    ("BL", "L"),
    ("BR", "R"),
    ("FLC", "L"),
    ("FRC", "R"),
    ("BC", "C"),
    ("SL", "L"),
    ("SR", "R"),
    ("TC", "C"),
    ("TFL", "L"),
    ("TFC", "C"),
    ("TFR", "R"),
    ("TBL", "L"),
    ("TBC", "C"),
    ("TBR", "R"),
];

/// The side of a label of [`SPEAKER_SETS`]: `LFE`, `C`, `L` or `R`.
pub fn label_side(label: &str) -> &'static str {
    match label {
        "LFE" => "LFE",
        "C" => "C",
        label if label.starts_with('L') => "L",
        _ => "R",
    }
}

/// The speakers a mask names, in channel order ("FL FR FC LFE ..."; unknown bits as `bit N`).
pub fn mask_names(mask: u32) -> String {
    (0..32)
        .filter(|bit| mask & (1 << bit) != 0)
        .map(|bit| {
            WAV_SPEAKERS
                .get(bit)
                .map_or_else(|| format!("bit {bit}"), |(name, _)| (*name).to_string())
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Refuses a file whose channel mask does not agree with `set`: a speaker count other than
/// the set's, or a channel whose side (left, right, centre, LFE) is not the set's there.
pub fn check_mask(mask: u32, set: &SpeakerSet) -> Result<(), IrError> {
    let sides: Vec<Option<&str>> = (0..32)
        .filter(|bit| mask & (1 << bit) != 0)
        .map(|bit| WAV_SPEAKERS.get(bit).map(|(_, side)| *side))
        .collect();
    let agrees = sides.len() == set.labels.len()
        && sides
            .iter()
            .zip(set.labels)
            .all(|(side, label)| *side == Some(label_side(label)));
    if agrees {
        Ok(())
    } else {
        Err(IrError::MaskMismatch {
            mask: format!("{mask:#x} ({})", mask_names(mask)),
            bus: format!("{} ({})", set.name, set.labels.join(" ")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_set_with_a_mask_agrees_with_it_and_not_with_the_first_n_bits() {
        for set in SPEAKER_SETS {
            if set.wav_mask != 0 {
                assert_eq!(check_mask(set.wav_mask, set).ok(), Some(()), "{}", set.name);
            }
        }
        let set_714 = SPEAKER_SETS.iter().find(|s| s.name == "7.1.4").unwrap();
        // hound's mask for 12 channels: the first 12 bits (BC and TC are centres).
        let message = check_mask(0xFFF, set_714).unwrap_err().to_string();
        assert!(message.contains("FLC FRC BC SL SR TC"), "{message}");
        assert!(message.contains("7.1.4 (L R C LFE"), "{message}");
        // 5.1 with side surrounds agrees with 5.1.
        let set_51 = SPEAKER_SETS.iter().find(|s| s.name == "5.1").unwrap();
        assert!(check_mask(0x60F, set_51).is_ok());
        assert!(check_mask(0x3F << 1, set_51).is_err());
    }
}
