//! What a complete take gives: the IR deconvolved from its recording ([`analyse`], on the
//! preparation thread), its picture for the editor, and the file it is saved to
//! ([`save_to_library`]: a 32-bit float WAV in the library's first folder, named by the date).
//! Off the audio thread; allocates and writes files.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use super::take::Take;
use crate::capture::extract::{Capture, ExtractOptions, extract};
use crate::capture::sweep::Excitation;
use crate::ir::decode::Audio;
use crate::ir::{Ir, IrLayout, wav};
use crate::library::settings::{SettingsFile, default_folder};

/// Columns of [`Captured::outline_db`].
pub const OUTLINE_COLUMNS: usize = 512;
/// A recorded input that never reaches this (-120 dBFS) recorded nothing.
const SILENCE: f32 = 1e-6;
/// The outline's floor, in dB under full scale.
pub const OUTLINE_FLOOR_DB: f32 = -150.0;

/// A captured IR, its figures, and what the editor draws of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Captured {
    /// The IR, its figures (peak-to-noise ratio, noise floor, lag, length) and its shape.
    pub capture: Capture,
    /// Its name: "Capture" and the date and time (UTC) it was analysed.
    pub name: String,
    /// The file name it is saved under: the name with `-` for the time's colons, and `.wav`.
    pub file_name: String,
    /// Every channel's peak level over [`OUTLINE_COLUMNS`] equal stretches of the IR, in dB
    /// re full scale (at least [`OUTLINE_FLOOR_DB`]).
    pub outline_db: Vec<f32>,
}

impl Captured {
    /// The IR as the plugin plays it: one channel per microphone, or a `K x N` matrix with
    /// several loudspeakers (as a file of `K * N` channels is read).
    pub fn to_ir(&self) -> Result<Ir, String> {
        let capture = &self.capture;
        let layout = layout(capture.num_speakers, capture.num_mics)
            .ok_or_else(|| format!("{} channels cannot be played", capture.channels.len()))?;
        Ir::with_layout(
            self.name.clone(),
            capture.sample_rate,
            layout,
            capture.channels.clone(),
        )
        .map_err(|error| error.to_string())
    }
}

/// How an IR of `num_speakers` loudspeakers to `num_mics` microphones plays: one channel per
/// microphone (as a file of that many channels is read), or a `K x N` matrix with several
/// loudspeakers.
pub fn layout(num_speakers: usize, num_mics: usize) -> Option<IrLayout> {
    match num_speakers {
        1 => IrLayout::from_channel_count(num_mics),
        k => IrLayout::matrix(k, num_mics),
    }
}

/// Deconvolves a complete take ([`extract`], with the take's loopback), or says why it cannot:
/// clipping, a recording with no sweep in it, ... Takes the recording out of the take (no copy:
/// a long take's recording is tens of megabytes).
pub fn analyse(take: &mut Take) -> Result<Captured, String> {
    let setup = &take.setup;
    let excitation = Excitation::from_file(
        take.sample_rate,
        std::slice::from_ref(&take.excitation),
        Some(setup.outputs.len()),
    )
    .map_err(|error| error.to_string())?;
    // A silent input is a routing problem, not a room: say so before the deconvolution does
    // in its own words.
    if let Some(input) = setup
        .inputs
        .iter()
        .zip(&take.recording)
        .find_map(|(&input, samples)| {
            let silent = samples.iter().all(|s| s.abs() < SILENCE);
            silent.then_some(input)
        })
    {
        return Err(format!(
            "input {} recorded silence: connect the microphone to the plugin's input (in the \
             standalone, its JACK input with --connect-jack-inputs, or its ALSA one with \
             --input-device)",
            input + 1
        ));
    }
    let recording = Audio {
        sample_rate: take.sample_rate,
        channels: std::mem::take(&mut take.recording),
    };
    let options = ExtractOptions {
        loopback: setup
            .loopback
            .and_then(|input| setup.inputs.iter().position(|&i| i == input)),
        ..ExtractOptions::default()
    };
    let capture = extract(&excitation, &recording, options).map_err(|error| {
        // The command line's words name its flags; here the inputs are named by number.
        error
            .to_string()
            .replace("--loopback", "the loopback input")
    })?;
    let (name, file_name) = names(SystemTime::now());
    Ok(Captured {
        outline_db: outline(&capture.channels),
        capture,
        name,
        file_name,
    })
}

/// The captured IR's peaks over [`OUTLINE_COLUMNS`] stretches, in dB.
fn outline(channels: &[Vec<f32>]) -> Vec<f32> {
    let len = channels.first().map_or(0, Vec::len);
    (0..OUTLINE_COLUMNS)
        .map(|column| {
            let (start, end) = (
                column * len / OUTLINE_COLUMNS,
                (column + 1) * len / OUTLINE_COLUMNS,
            );
            let peak = channels
                .iter()
                .flat_map(|channel| &channel[start..end.max(start)])
                .fold(0.0f32, |peak, s| peak.max(s.abs()));
            (20.0 * peak.max(1e-30).log10()).max(OUTLINE_FLOOR_DB)
        })
        .collect()
}

/// The name and file name of an IR captured at `now`: "Capture 2026-12-07 18:30:12" (UTC) and
/// "Capture 2026-12-07 18-30-12.wav".
pub fn names(now: SystemTime) -> (String, String) {
    let seconds = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (year, month, day) = civil_date(seconds / 86_400);
    let time = seconds % 86_400;
    let (hour, minute, second) = (time / 3600, time / 60 % 60, time % 60);
    let date = format!("{year:04}-{month:02}-{day:02}");
    (
        format!("Capture {date} {hour:02}:{minute:02}:{second:02}"),
        format!("Capture {date} {hour:02}-{minute:02}-{second:02}.wav"),
    )
}

/// The Gregorian date of a day counted from 1970-01-01 (Howard Hinnant's `civil_from_days`).
fn civil_date(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let day_of_era = z % 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = year_of_era + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

/// The library's first folder (the first of `library.json`'s folders, or the default
/// `Impulse Responses` folder where the file has none or cannot be read), created when
/// missing. Errs where there is no folder at all.
pub fn library_folder() -> Result<PathBuf, String> {
    let settings = SettingsFile::user().map(|file| file.load());
    let folder = match settings {
        Some(Ok(settings)) if !settings.folders.is_empty() => settings.folders[0].clone(),
        Some(Ok(_)) => {
            return Err(
                "the library has no folder: add one in the Library tab, then save again".into(),
            );
        }
        _ => default_folder().ok_or_else(|| {
            "there is no library folder (no settings file, and no documents folder for the \
             default one): add a folder in the Library tab"
                .to_string()
        })?,
    };
    std::fs::create_dir_all(&folder).map_err(|error| {
        format!(
            "cannot create the library folder '{}': {error}",
            folder.display()
        )
    })?;
    Ok(folder)
}

/// Writes the captured IR into [`library_folder`] and returns its path.
pub fn save_to_library(captured: &Captured) -> Result<PathBuf, String> {
    save_into(captured, &library_folder()?)
}

/// Writes the captured IR into `folder` as a 32-bit float WAV (past two channels with no
/// speaker positions, as `longtail-cli deconvolve` writes it), through a temporary file renamed
/// into place, so the library never lists a half-written file. Never overwrites: a name taken
/// gets a number.
pub fn save_into(captured: &Captured, folder: &Path) -> Result<PathBuf, String> {
    let stem = captured.file_name.trim_end_matches(".wav");
    let path = (1..1000)
        .map(|n| match n {
            1 => folder.join(&captured.file_name),
            n => folder.join(format!("{stem} ({n}).wav")),
        })
        .find(|path| !path.exists())
        .ok_or_else(|| {
            format!(
                "'{}' holds too many captures of that name",
                folder.display()
            )
        })?;
    let partial = folder.join(format!(".{stem}.wav.part"));
    let capture = &captured.capture;
    wav::write_f32_masked(&partial, capture.sample_rate, &capture.channels, 0)
        .and_then(|()| std::fs::rename(&partial, &path).map_err(hound::Error::IoError))
        .map_err(|error| {
            let _ = std::fs::remove_file(&partial);
            format!("cannot write '{}': {error}", path.display())
        })?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_carry_the_utc_date_and_time() {
        // 2026-12-07 18:30:12 UTC.
        let now = UNIX_EPOCH + std::time::Duration::from_secs(1_796_668_212);
        let (name, file) = names(now);
        assert_eq!(name, "Capture 2026-12-07 18:30:12");
        assert_eq!(file, "Capture 2026-12-07 18-30-12.wav");
        assert_eq!(civil_date(0), (1970, 1, 1));
        assert_eq!(civil_date(11_016), (2000, 2, 29));
    }
}
