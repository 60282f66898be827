//! One capture as the audio thread runs it: the sweep to play and the buffers its recording
//! fills, all allocated by [`Take::new`] off the audio thread, and what the audio thread does
//! with them ([`Take::record`], [`Take::play`]): nothing there allocates, locks or waits.
//!
//! A take's timeline, in frames from the block where the audio thread picked it up:
//!
//! 1. the lead-in: the plugin's own output fades to silence ([`FADE_SECONDS`]), then
//!    [`Setup::delay_seconds`] of silence (time to leave the room, or for the audio server's
//!    connections to be made); nothing is recorded;
//! 2. the run: output `k` of [`Setup::outputs`] plays the sweep and its tail in slot `k`, one
//!    loudspeaker after another, every other output is silent, and the inputs of
//!    [`Setup::inputs`] are recorded from the run's first frame, so recording frame `i` holds what
//!    the inputs carried while sweep frame `i` was written: the audio server's round trip is part
//!    of the measured lag;
//! 3. the recording goes on for [`MARGIN_SECONDS`] past the last slot, for that round trip.
//!
//! After the run the deck ([`super::Deck`]) fades the plugin's output back in.

use crate::capture::recording::CLIP_LEVEL;
use crate::capture::sweep::{
    DEFAULT_LEVEL_DB, DEFAULT_SECONDS, DEFAULT_TAIL_SECONDS, MAX_FILE_SECONDS, SweepSpec,
};
use crate::ir::MAX_MATRIX_SIDE;

/// The lead-in's fade of the plugin's output to silence, and the fade back after the run.
pub const FADE_SECONDS: f64 = 0.01;
/// Longest silence before the sweep ([`Setup::delay_seconds`]), in seconds.
pub const MAX_DELAY_SECONDS: f64 = 60.0;
/// Recording past the last slot's end, for the audio server's round trip (JACK's is a few
/// periods; ALSA's input ring adds `--input-latency`, 0.15 s by default).
pub const MARGIN_SECONDS: f64 = 0.5;

/// What the user asks to capture. Channels count from 0 here (the editor and the flags show
/// them from 1).
#[derive(Debug, Clone, PartialEq)]
pub struct Setup {
    /// The outputs that play the sweep, one loudspeaker each, in the order they play.
    pub outputs: Vec<usize>,
    /// The inputs recorded: the microphones, and the loopback if one is named.
    pub inputs: Vec<usize>,
    /// The input that records the sweep itself (a cable from the output to an input), one of
    /// `inputs`: the lag is measured on it, and it is left out of the IR.
    pub loopback: Option<usize>,
    /// The sweep's peak, in dBFS.
    pub level_db: f64,
    /// The sweep's length, in seconds.
    pub sweep_seconds: f64,
    /// The silence after each sweep for the room to ring out, in seconds: the longest IR.
    pub tail_seconds: f64,
    /// The silence between the lead-in's fade and the first sweep, in seconds (nothing is
    /// recorded): time to leave the room, or for the audio server's connections to be made.
    pub delay_seconds: f64,
}

impl Default for Setup {
    fn default() -> Self {
        Self {
            outputs: vec![0],
            inputs: vec![0],
            loopback: None,
            level_db: DEFAULT_LEVEL_DB,
            sweep_seconds: DEFAULT_SECONDS,
            tail_seconds: DEFAULT_TAIL_SECONDS,
            delay_seconds: 0.0,
        }
    }
}

impl Setup {
    /// The sweep this setup plays at `sample_rate`: one slot per output.
    pub fn spec(&self, sample_rate: u32) -> SweepSpec {
        SweepSpec {
            sample_rate,
            seconds: self.sweep_seconds,
            level_db: self.level_db,
            tail_seconds: self.tail_seconds,
            num_speakers: self.outputs.len(),
            ..SweepSpec::default()
        }
    }

    /// The microphones: the inputs recorded, less the loopback.
    pub fn num_mics(&self) -> usize {
        self.inputs
            .iter()
            .filter(|&&input| Some(input) != self.loopback)
            .count()
    }

    /// How long a take records, in seconds: every slot (as asked), and the margin after them.
    pub fn take_seconds(&self) -> f64 {
        self.outputs.len() as f64 * (self.sweep_seconds + self.tail_seconds) + MARGIN_SECONDS
    }

    /// Refuses a setup the bus of `num_inputs` and `num_outputs` cannot run at `sample_rate`,
    /// with a message for the user.
    pub fn check(
        &self,
        sample_rate: u32,
        num_inputs: usize,
        num_outputs: usize,
    ) -> Result<(), String> {
        if num_inputs == 0 {
            return Err("the plugin has no input on this track: capture needs one".into());
        }
        if self.outputs.is_empty() {
            return Err("choose an output to play the sweep".into());
        }
        if self.outputs.len() > MAX_MATRIX_SIDE {
            return Err(format!("at most {MAX_MATRIX_SIDE} loudspeakers"));
        }
        let mics = self.num_mics();
        if mics == 0 {
            return Err("choose an input to record (a microphone)".into());
        }
        if self.outputs.len() * mics > MAX_MATRIX_SIDE * MAX_MATRIX_SIDE {
            return Err("too many paths for a matrix".into());
        }
        if let Some(&output) = self.outputs.iter().find(|&&o| o >= num_outputs) {
            return Err(format!(
                "output {} is not there: the plugin has {num_outputs}",
                output + 1
            ));
        }
        if let Some(&input) = self.inputs.iter().find(|&&i| i >= num_inputs) {
            return Err(format!(
                "input {} is not there: the plugin has {num_inputs}",
                input + 1
            ));
        }
        if has_duplicates(&self.outputs) || has_duplicates(&self.inputs) {
            return Err("a channel is named twice".into());
        }
        if let Some(loopback) = self.loopback
            && !self.inputs.contains(&loopback)
        {
            return Err(format!(
                "the loopback, input {}, is not among the inputs recorded",
                loopback + 1
            ));
        }
        if !(self.delay_seconds.is_finite()
            && (0.0..=MAX_DELAY_SECONDS).contains(&self.delay_seconds))
        {
            return Err(format!(
                "a delay of {} s before the sweep: from 0 to {MAX_DELAY_SECONDS:.0} s",
                self.delay_seconds
            ));
        }
        self.spec(sample_rate)
            .validate()
            .map_err(|error| error.to_string())?;
        let seconds = self.take_seconds() - MARGIN_SECONDS;
        if self.take_seconds() > MAX_FILE_SECONDS {
            return Err(format!(
                "{} slots of {:.1} s are {seconds:.0} s; a capture lasts at most {:.0} s",
                self.outputs.len(),
                self.sweep_seconds + self.tail_seconds,
                MAX_FILE_SECONDS - MARGIN_SECONDS
            ));
        }
        Ok(())
    }
}

fn has_duplicates(channels: &[usize]) -> bool {
    channels
        .iter()
        .enumerate()
        .any(|(idx, c)| channels[..idx].contains(c))
}

/// How a take ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// The whole recording is there.
    Complete,
    /// The user cancelled it.
    Cancelled,
    /// The host changed something it depends on (why, for the user).
    Interrupted(&'static str),
}

/// One capture's buffers and position. Made off the audio thread; the audio thread only moves
/// through it.
#[derive(Debug)]
pub struct Take {
    /// Counts the desk's takes, from 1.
    pub(super) id: u64,
    pub(super) setup: Setup,
    /// The rate and bus it was made for: the audio thread ends it if they change.
    pub(super) sample_rate: u32,
    pub(super) num_inputs: usize,
    pub(super) num_outputs: usize,
    /// One slot: the sweep, then the tail's zeros.
    pub(super) excitation: Vec<f32>,
    /// One buffer per recorded input, `record_len` frames each.
    pub(super) recording: Vec<Vec<f32>>,
    fade_len: usize,
    /// Frames of the lead-in: the fade, then the delay's silence.
    lead_len: usize,
    /// Frames of the lead-in played so far.
    lead: usize,
    /// Frames recorded so far.
    pub(super) position: usize,
    /// Frames of the run played so far.
    played: usize,
    /// Ending early (cancelled): why, and the frames of the sweep's fade-out played.
    stopping: Option<(Ended, usize)>,
    /// The first clipped sample (recorded input index, frame), if any.
    pub(super) clipped: Option<(usize, usize)>,
    pub(super) ended: Option<Ended>,
}

impl Take {
    /// Allocates a take of `setup` (checked with [`Setup::check`] against the same bus and rate).
    pub fn new(
        id: u64,
        setup: Setup,
        sample_rate: u32,
        num_inputs: usize,
        num_outputs: usize,
    ) -> Self {
        let spec = SweepSpec {
            num_speakers: 1,
            ..setup.spec(sample_rate)
        };
        let excitation = spec.channels().swap_remove(0);
        let margin = (MARGIN_SECONDS * f64::from(sample_rate)).round() as usize;
        let record_len = excitation.len() * setup.outputs.len() + margin;
        let recording = setup.inputs.iter().map(|_| vec![0.0; record_len]).collect();
        let fade_len = ((FADE_SECONDS * f64::from(sample_rate)).round() as usize).max(1);
        let delay_len = (setup.delay_seconds.clamp(0.0, MAX_DELAY_SECONDS) * f64::from(sample_rate))
            .round() as usize;
        Self {
            id,
            setup,
            sample_rate,
            num_inputs,
            num_outputs,
            excitation,
            recording,
            fade_len,
            lead_len: fade_len + delay_len,
            lead: 0,
            position: 0,
            played: 0,
            stopping: None,
            clipped: None,
            ended: None,
        }
    }

    /// Frames the recording holds when complete.
    pub fn record_len(&self) -> usize {
        self.recording.first().map_or(0, Vec::len)
    }

    /// Frames of the lead-in's fade, and of the fade back after the run.
    pub(super) fn fade_len(&self) -> usize {
        self.fade_len
    }

    /// Records this block's inputs (`inputs[c]` is input `c`; `len` frames) where the run has
    /// started, keeping each recorded input's peak in `peaks` (as `f32` bits, raised only).
    /// Audio thread.
    pub(super) fn record(
        &mut self,
        inputs: &[&mut [f32]],
        len: usize,
        peaks: &[std::sync::atomic::AtomicU32],
    ) {
        let skip = (self.lead_len - self.lead).min(len);
        let count = (len - skip).min(self.record_len() - self.position);
        if count == 0 || self.stopping.is_some() {
            return;
        }
        for (idx, (&input, buffer)) in self
            .setup
            .inputs
            .iter()
            .zip(&mut self.recording)
            .enumerate()
        {
            let Some(source) = inputs.get(input) else {
                continue;
            };
            let source = &source[skip..skip + count];
            let target = &mut buffer[self.position..self.position + count];
            let mut peak = 0.0f32;
            for (frame, (t, &s)) in target.iter_mut().zip(source).enumerate() {
                // A non-finite sample is recorded as full scale: it counts as clipping.
                let sample = if s.is_finite() { s } else { 1.0 };
                peak = peak.max(sample.abs());
                if sample.abs() >= CLIP_LEVEL && self.clipped.is_none() {
                    self.clipped = Some((idx, self.position + frame));
                }
                *t = sample;
            }
            if let Some(slot) = peaks.get(idx) {
                slot.fetch_max(peak.to_bits(), std::sync::atomic::Ordering::Relaxed);
            }
        }
        self.position += count;
    }

    /// Replaces this block's output (`len` frames, after the plugin's own) with the lead-in (its
    /// fade, then silence) and then the sweep, and moves the take on by `len` frames; ends it
    /// ([`Ended::Complete`]) once the recording is full. Audio thread.
    pub(super) fn play(&mut self, channels: &mut [&mut [f32]], len: usize) {
        let lead = (self.lead_len - self.lead).min(len);
        for channel in channels.iter_mut() {
            // Past the fade its gain is 0: the delay's silence.
            for (frame, sample) in channel[..lead].iter_mut().enumerate() {
                *sample *= fade_gain(self.lead + frame, self.fade_len);
            }
        }
        let slot_len = self.excitation.len();
        let stopped = self.stopping.map(|(_, done)| done);
        for (channel_idx, channel) in channels.iter_mut().enumerate() {
            let slot = self.setup.outputs.iter().position(|&o| o == channel_idx);
            for (frame, sample) in channel[lead..len].iter_mut().enumerate() {
                let played = self.played + frame;
                let gain = stopped.map_or(1.0, |done| fade_gain(done + frame, self.fade_len));
                *sample = match slot {
                    Some(slot) if played / slot_len == slot => {
                        gain * self.excitation[played % slot_len]
                    }
                    _ => 0.0,
                };
            }
        }
        self.lead += lead;
        self.played += len - lead;
        if let Some((why, done)) = &mut self.stopping {
            *done += len - lead;
            // Stopped before the sweep started: the output is already the delay's silence.
            if *done >= self.fade_len || (self.lead >= self.fade_len && self.played == 0) {
                self.ended = Some(*why);
            }
        } else if self.position >= self.record_len() && self.ended.is_none() {
            self.ended = Some(Ended::Complete);
        }
    }

    /// Ends the take early, `why`: the sweep fades out over the next [`FADE_SECONDS`] and
    /// nothing more is recorded. Audio thread.
    pub(super) fn stop(&mut self, why: Ended) {
        if self.lead == 0 || (self.lead >= self.fade_len && self.played == 0) {
            // Nothing has been played, or the output is the delay's silence: end at once.
            self.ended.get_or_insert(why);
        } else if self.stopping.is_none() {
            self.stopping = Some((why, 0));
        }
    }
}

/// The lead-in's gain at `frame` of `fade_len`: a raised cosine from 1 to 0.
pub(super) fn fade_gain(frame: usize, fade_len: usize) -> f32 {
    let x = (frame as f32 / fade_len as f32).min(1.0);
    0.5 + 0.5 * (std::f32::consts::PI * x).cos()
}

#[cfg(test)]
mod tests {
    use super::*;

    const RATE: u32 = 48_000;

    fn short_setup(delay_seconds: f64) -> Setup {
        Setup {
            sweep_seconds: 0.5,
            tail_seconds: 0.1,
            delay_seconds,
            ..Setup::default()
        }
    }

    /// Runs `take` over `frames` frames in blocks of `block`: the input carries its frame
    /// number (times 1e-6), the plugin's own output is 1. Returns output 0.
    fn run(take: &mut Take, frames: usize, block: usize) -> Vec<f32> {
        let peaks: Vec<std::sync::atomic::AtomicU32> = (0..2)
            .map(|_| std::sync::atomic::AtomicU32::new(0))
            .collect();
        let mut output = Vec::new();
        let mut frame = 0;
        while frame < frames && take.ended.is_none() {
            let len = block.min(frames - frame);
            let mut input: Vec<f32> = (frame..frame + len).map(|f| f as f32 * 1e-6).collect();
            take.record(&[&mut input[..]], len, &peaks);
            let (mut out0, mut out1) = (vec![1.0f32; len], vec![1.0f32; len]);
            take.play(&mut [&mut out0[..], &mut out1[..]], len);
            output.extend_from_slice(&out0);
            frame += len;
        }
        output
    }

    #[test]
    fn the_delay_is_silence_and_nothing_of_it_is_recorded() {
        let setup = short_setup(0.1);
        setup.check(RATE, 2, 2).unwrap();
        let mut take = Take::new(1, setup, RATE, 2, 2);
        let (fade_len, delay_len) = (take.fade_len(), 4_800);
        let lead_len = fade_len + delay_len;
        let output = run(&mut take, 10 * RATE as usize, 1024);
        assert_eq!(take.ended, Some(Ended::Complete));
        assert_eq!(output[0], 1.0);
        assert!(output[1..fade_len].iter().all(|&s| s < 1.0));
        assert!(output[fade_len..lead_len].iter().all(|&s| s == 0.0));
        assert_eq!(
            output[lead_len..lead_len + 100],
            take.excitation[..100],
            "the sweep starts when the delay ends"
        );
        // Recording frame 0 is what the input carried when the sweep's first frame played.
        assert_eq!(take.recording[0][0], lead_len as f32 * 1e-6);
        assert_eq!(take.recording[0][1000], (lead_len + 1000) as f32 * 1e-6);
        assert_eq!(
            output.len(),
            (lead_len + take.record_len()).div_ceil(1024) * 1024
        );
    }

    #[test]
    fn a_take_stopped_in_its_delay_ends_at_once() {
        let mut take = Take::new(1, short_setup(1.0), RATE, 2, 2);
        run(&mut take, 4096, 1024);
        assert!(take.ended.is_none());
        take.stop(Ended::Cancelled);
        assert_eq!(take.ended, Some(Ended::Cancelled));
        // Stopped in the fade: ends once the output is silent, without playing the sweep.
        let mut take = Take::new(2, short_setup(1.0), RATE, 2, 2);
        let output = run(&mut take, 256, 256);
        take.stop(Ended::Cancelled);
        assert!(take.ended.is_none());
        let output = [output, run(&mut take, 4096, 256)].concat();
        assert_eq!(take.ended, Some(Ended::Cancelled));
        assert!(output.len() <= 1024 && output[take.fade_len()..].iter().all(|&s| s == 0.0));
    }

    #[test]
    fn a_delay_out_of_range_is_refused() {
        for delay in [-1.0, f64::NAN, MAX_DELAY_SECONDS + 1.0] {
            let error = short_setup(delay).check(RATE, 2, 2).unwrap_err();
            assert!(error.contains("delay"), "{error}");
        }
        short_setup(MAX_DELAY_SECONDS).check(RATE, 2, 2).unwrap();
    }
}
