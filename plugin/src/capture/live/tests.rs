//! The desk and the deck without a host: blocks of a fixed size, the plugin's own output a
//! constant, and a room that feeds the outputs back into the inputs one block later (the
//! audio server's round trip) through a known IR.

use std::sync::Arc;

use super::result::{Captured, save_into};
use super::take::{FADE_SECONDS, MARGIN_SECONDS, Setup};
use super::{Deck, Desk, Phase, link};
use crate::capture::synthetic::band_limit;
use crate::capture::tests::snr_db;
use crate::rng::Rng;

const RATE: u32 = 48_000;
const BLOCK: usize = 256;
/// What the plugin itself outputs, on every channel.
const PLUGIN_OUT: f32 = 0.25;
/// The lead-in's frames before the sweep: [`FADE_SECONDS`] at [`RATE`].
const LEAD: usize = 480;
/// The room's delay before its first arrival, in samples.
const ROOM_DELAY: usize = 300;

fn setup() -> Setup {
    Setup {
        sweep_seconds: 3.0,
        tail_seconds: 1.0,
        ..Setup::default()
    }
}

/// Decaying noise under a direct sound of 0.1, 60 dB down over 12 000 samples, after
/// [`ROOM_DELAY`].
fn room() -> Vec<f64> {
    let mut rng = Rng::new(7);
    let len = 12_000;
    let decay = (-(1000f64.ln()) / len as f64).exp();
    let mut ir = vec![0.0; ROOM_DELAY];
    ir.extend((0..len).map(|idx| 0.02 * decay.powi(idx) * rng.gaussian()));
    ir[ROOM_DELAY] = 0.1;
    ir
}

/// A stereo bus in the room: output 0 feeds input 0 through `room` one block later, and the
/// inputs carry `extra` on top.
struct Rig {
    desk: Arc<Desk>,
    deck: Deck,
    room: Vec<f64>,
    /// Every output 0 sample so far.
    played: Vec<f64>,
    /// Every output block as the deck left it, channel 0.
    output: Vec<f32>,
    extra: f32,
}

impl Rig {
    fn new() -> Self {
        let (desk, mut deck) = link();
        deck.activate(RATE, 2, 2, false);
        Self {
            desk,
            deck,
            room: room(),
            played: Vec::new(),
            output: Vec::new(),
            extra: 0.0,
        }
    }

    /// One block: the inputs (the room's answer to what was played up to a block ago), the
    /// deck's record, the plugin's output, the deck's play.
    fn block(&mut self) {
        let now = self.played.len();
        let mut inputs = [vec![self.extra; BLOCK], vec![self.extra; BLOCK]];
        for (frame, sample) in inputs[0].iter_mut().enumerate() {
            let t = now + frame;
            // The room hears the sweep alone: the user stops the music before measuring, and
            // the plugin's own output before the take (its lead-in's fade) is left out here.
            let heard: f64 = (0..self.room.len().min((t + 1).saturating_sub(BLOCK + LEAD)))
                .map(|k| self.room[k] * self.played[t - BLOCK - k])
                .sum();
            *sample += heard as f32;
        }
        let [left, right] = &mut inputs;
        let mut channels: [&mut [f32]; 2] = [left, right];
        self.deck.record(&channels, BLOCK);
        for channel in channels.iter_mut() {
            channel.fill(PLUGIN_OUT);
        }
        self.deck.play(&mut channels, BLOCK);
        self.played
            .extend(channels[0].iter().map(|&s| f64::from(s)));
        self.output.extend_from_slice(channels[0]);
    }

    /// Blocks until the deck has sent the take back and the service has analysed it.
    fn run_to_end(&mut self) -> Phase {
        for _ in 0..100_000 {
            self.block();
            self.desk.service();
            let phase = self.desk.phase();
            if !matches!(
                phase,
                Phase::Waiting | Phase::Recording(_) | Phase::Analysing
            ) {
                return phase;
            }
        }
        panic!("the take never ended");
    }
}

fn done(phase: Phase) -> Arc<Captured> {
    match phase {
        Phase::Done(captured) => captured,
        other => panic!("no IR: {other:?}"),
    }
}

#[test]
fn a_room_played_and_recorded_through_the_deck_comes_back() {
    let mut rig = Rig::new();
    assert_eq!(rig.desk.phase(), Phase::Idle);
    rig.desk.start(setup(), RATE, 2, 2).unwrap();
    assert_eq!(rig.desk.phase(), Phase::Waiting);
    assert!(
        rig.desk.start(setup(), RATE, 2, 2).is_err(),
        "one take at a time"
    );
    for _ in 0..3 {
        rig.block();
    }
    assert!(matches!(rig.desk.phase(), Phase::Recording(share) if share > 0.0));
    let captured = done(rig.run_to_end());

    // The lag is the room's delay and the block's round trip, less the default 5 ms kept.
    let report = &captured.capture.report;
    let arrival = ROOM_DELAY + BLOCK;
    assert_eq!(report.lag_samples, arrival - 240);
    let truth: Vec<f64> = std::iter::repeat_n(0.0, BLOCK)
        .chain(rig.room.iter().copied())
        .skip(report.lag_samples)
        .collect();
    let mut estimate: Vec<f64> = captured.capture.channels[0]
        .iter()
        .map(|&s| f64::from(s))
        .collect();
    estimate.resize(truth.len(), 0.0);
    let (truth, estimate) = (
        band_limit(&truth, RATE, 100.0, 10_000.0),
        band_limit(&estimate, RATE, 100.0, 10_000.0),
    );
    let snr = snr_db(&estimate, &truth, 216..truth.len());
    eprintln!(
        "recovered room: {snr:.1} dB, peak-to-noise {:.1} dB",
        report.peak_to_noise_db
    );
    assert!(snr >= 60.0, "{snr:.1} dB");

    // The output: the plugin's own faded out, the sweep on output 0, then the plugin's again.
    let fade = (FADE_SECONDS * f64::from(RATE)) as usize;
    assert_eq!(rig.output[0], PLUGIN_OUT);
    assert!(rig.output[fade..fade + 1_000].iter().any(|s| s.abs() > 0.1));
    let run = rig.output.len();
    assert!(run as f64 >= (1.5 + MARGIN_SECONDS) * f64::from(RATE));
    for _ in 0..10 {
        rig.block();
    }
    assert!(rig.output[run + fade..].iter().all(|&s| s == PLUGIN_OUT));
    assert!(rig.output.iter().all(|s| s.abs() <= 0.51));
}

#[test]
fn a_cancelled_take_fades_out_and_the_plugin_plays_on() {
    let mut rig = Rig::new();
    rig.desk.start(setup(), RATE, 2, 2).unwrap();
    for _ in 0..40 {
        rig.block();
    }
    rig.desk.cancel();
    let cancelled_at = rig.output.len();
    assert_eq!(rig.run_to_end(), Phase::Cancelled);
    for _ in 0..10 {
        rig.block();
    }
    // The sweep fades out over the next FADE_SECONDS (never louder than its envelope), then the
    // plugin's output fades in and plays on.
    let fade = (FADE_SECONDS * f64::from(RATE)) as usize;
    for (frame, s) in rig.output[cancelled_at..cancelled_at + fade]
        .iter()
        .enumerate()
    {
        assert!(
            s.abs() <= 0.502 * super::take::fade_gain(frame, fade),
            "{frame}: {s}"
        );
    }
    // Each fade ends within the blocks that hold it: two of 256 frames each.
    let end = cancelled_at + 4 * BLOCK;
    assert!(rig.output[end..].iter().all(|&s| s == PLUGIN_OUT));
    assert!(!rig.deck.is_playing());
}

#[test]
fn a_new_activation_or_another_bus_ends_the_take() {
    let mut rig = Rig::new();
    rig.desk.start(setup(), RATE, 2, 2).unwrap();
    rig.block();
    rig.deck.activate(44_100, 2, 2, false);
    rig.desk.service();
    assert!(matches!(rig.desk.phase(), Phase::Failed(why) if why.contains("restarted")));

    // Made for a rate the plugin no longer runs at: refused when the audio thread sees it.
    rig.desk.start(setup(), RATE, 2, 2).unwrap();
    assert!(matches!(rig.run_to_end(), Phase::Failed(why) if why.contains("sample rate")));

    let mut offline = Rig::new();
    offline.deck.activate(RATE, 2, 2, true);
    offline.desk.start(setup(), RATE, 2, 2).unwrap();
    assert!(matches!(offline.run_to_end(), Phase::Failed(why) if why.contains("offline")));
}

#[test]
fn settings_the_bus_cannot_run_are_refused_before_anything_plays() {
    let desk = link().0;
    let refused = |setup: Setup, inputs: usize| desk.start(setup, RATE, inputs, 2).unwrap_err();
    assert!(refused(setup(), 0).contains("no input"));
    let three = Setup {
        outputs: vec![2],
        ..setup()
    };
    assert!(refused(three, 2).contains("output 3"));
    let only_loopback = Setup {
        loopback: Some(0),
        ..setup()
    };
    assert!(refused(only_loopback, 2).contains("microphone"));
    let none_but_a_stray_loopback = Setup {
        inputs: Vec::new(),
        loopback: Some(0),
        ..setup()
    };
    assert!(refused(none_but_a_stray_loopback, 2).contains("microphone"));
    let loud = Setup {
        level_db: 3.0,
        ..setup()
    };
    assert!(refused(loud, 2).contains("-60 to 0"));
    assert!(
        desk.start(setup(), 0, 2, 2)
            .unwrap_err()
            .contains("not active")
    );
    assert_eq!(desk.phase(), Phase::Idle);
}

#[test]
fn a_silent_input_is_named() {
    let mut rig = Rig::new();
    let setup = Setup {
        inputs: vec![0, 1],
        ..setup()
    };
    rig.desk.start(setup, RATE, 2, 2).unwrap();
    assert!(
        matches!(rig.run_to_end(), Phase::Failed(why) if why.starts_with("input 2 recorded silence")),
        "{:?}",
        rig.desk.phase()
    );
}

#[test]
fn a_clipped_recording_is_shown_at_once_and_refused() {
    let mut rig = Rig::new();
    rig.extra = 1.2;
    rig.desk.start(setup(), RATE, 2, 2).unwrap();
    for _ in 0..100 {
        rig.block();
    }
    let (input, frame) = rig
        .desk
        .clipped()
        .expect("the clip is shown while recording");
    assert_eq!(input, 0);
    assert!(rig.desk.take_peaks(1)[0] >= 0.999);
    assert!(frame < 100 * BLOCK);
    assert!(matches!(rig.run_to_end(), Phase::Failed(why) if why.contains("clip")));
}

#[test]
fn a_capture_is_saved_as_a_new_file_in_the_folder() {
    let mut rig = Rig::new();
    rig.desk.start(setup(), RATE, 2, 2).unwrap();
    let captured = done(rig.run_to_end());
    let folder = std::env::temp_dir().join(format!("longtail-capture-save-{}", std::process::id()));
    std::fs::create_dir_all(&folder).unwrap();
    let first = save_into(&captured, &folder).unwrap();
    let second = save_into(&captured, &folder).unwrap();
    assert_ne!(first, second, "a name taken gets a number");
    assert!(second.to_string_lossy().ends_with("(2).wav"));
    let (ir, _) = crate::ir::load(&[first.as_path()]).unwrap();
    assert_eq!(ir.channels, captured.capture.channels);
    assert_eq!(ir.sample_rate, RATE);
    assert_eq!(captured.to_ir().unwrap().channels, ir.channels);
    let names: Vec<_> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "no temporary file is left: {names:?}");
    std::fs::remove_dir_all(&folder).unwrap();
}
