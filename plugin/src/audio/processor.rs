//! The signal path around the engine: the blend of a second IR's engine ([`super::lane`]: one
//! lane per IR), the wet signal's stereo width and ducking ([`super::ducker`]), dry/wet mix with a
//! latency-compensated dry path, output gain, the crossfade between an outgoing and an incoming
//! engine, and the final guard against non-finite output. The plugin and `longtail-cli render`
//! both run this, so offline renders are what the plugin plays.
//!
//! Built off the audio thread ([`Processor::new`] allocates every buffer for the maximum block
//! size); [`Processor::process`] runs on the audio thread and never allocates, locks or waits.
//! Engines that leave the processor are handed back to the caller, who must drop them off the
//! audio thread.

use super::ducker::{DuckSettings, Ducker};
use super::lane::{Lane, LaneBuffers, add_late};
use crate::engine::memory::rings::InputRing;
use crate::engine::plan::{PartitionPlan, max_latency};
use crate::engine::{Engine, LateStats, MAX_CHANNELS};
use crate::ir::mapping::{Bus, ChannelFormat, Dry, dry_source};

/// Length of the crossfade when an engine is swapped, in milliseconds.
pub const DEFAULT_SWAP_FADE_MS: f32 = 50.0;

/// The rate the ducking's times count in until [`Processor::set_sample_rate`] says otherwise.
const DEFAULT_SAMPLE_RATE: f32 = 48_000.0;

/// Per-sample controls for one block, each slice as long as the block.
#[derive(Debug, Clone, Copy)]
pub struct Controls<'a> {
    /// Wet share, `0..=1`: `out = gain * (mix * wet + (1 - mix) * dry)`.
    pub mix: &'a [f32],
    /// Linear output gain.
    pub gain: &'a [f32],
    /// Stereo width of the wet signal, `0..=2` (0 mono, 1 as the IR has it, 2 the side
    /// doubled): `L, R = M ± width · S` with `M = (L + R) / 2`, `S = (L - R) / 2`. Applies on
    /// buses with two outputs only ([`width_applies`]); elsewhere ignored.
    pub width: &'a [f32],
    /// Ducking of the wet signal for this block ([`DuckSettings::OFF`]: none).
    pub duck: DuckSettings,
    /// The ducking's key for this block, one slice per channel as long as the block: a
    /// sidechain. `None` (or no channels): the input is the key.
    pub key: Option<&'a [&'a [f32]]>,
    /// Share of the second IR's wet signal, `0..=1`: `wet = (1 - blend) * A + blend * B`.
    /// Empty, or no second IR: A alone.
    pub blend: &'a [f32],
}

/// Whether the Width control acts on a bus of `num_outputs` outputs: stereo outputs only (the
/// `1 -> 2` and `2 -> 2` buses). Mid and side have no one meaning on wider buses.
pub fn width_applies(num_outputs: usize) -> bool {
    num_outputs == 2
}

/// Width on one block of a stereo wet signal, in place. A width of exactly 1 leaves the samples
/// untouched (not even rounded), so the default output is the engine's. Does not allocate.
pub fn apply_width(left: &mut [f32], right: &mut [f32], width: &[f32]) {
    for ((l, r), &w) in left.iter_mut().zip(right.iter_mut()).zip(width) {
        if w != 1.0 {
            let mid = 0.5 * (*l + *r);
            let side = 0.5 * (*l - *r) * w;
            *l = mid + side;
            *r = mid - side;
        }
    }
}

/// Mix, gain and engine swaps around one [`Engine`], or two blended.
pub struct Processor {
    /// The first IR's engine.
    a: Lane,
    /// The second IR's engine, where one blends in.
    b: Option<Lane>,
    /// The second lane's buffers until its first engine comes.
    b_buffers: Option<LaneBuffers>,
    /// Lowers the wet signal while the key plays.
    ducker: Ducker,
    /// Crossfade length in samples (of swaps, and the rest before a lane parks).
    fade_len: usize,
    /// Largest block the buffers hold; longer host blocks are processed in pieces.
    max_block_size: usize,
    num_inputs: usize,
    num_outputs: usize,
    /// What the bus's channels are, for the dry path of `1 -> N` and `2 -> N` buses.
    format: ChannelFormat,
    /// Copy of the input block (the host buffer is processed in place), per input channel.
    input_buffer: Vec<Vec<f32>>,
    /// Dry history per input channel, to delay the dry path by the engine's latency.
    dry_rings: Vec<InputRing>,
    /// Absolute time of the next sample, for the dry rings.
    time: u64,
    /// Offline rendering: engines wait for their workers (see [`Engine::set_offline`]).
    offline: bool,
    /// Input samples since the last non-zero one (saturating; `u64::MAX` after a reset, when
    /// there is no history). Decides [`is_quiet`](Self::is_quiet).
    silent_samples: u64,
    /// Lateness of the engines that have left this processor, summed (audio thread).
    retired_late: LateStats,
    /// Output samples the final guard replaced with silence because the mix was not finite,
    /// since construction (audio thread). Stays 0 unless something upstream is broken.
    non_finite_outputs: u64,
}

/// Counters of the audio path since the processor was built, read between `process()` calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Health {
    /// Worker lateness of every engine this processor has played, summed.
    pub late: LateStats,
    /// Output samples that were NaN or infinite before the final guard silenced them.
    pub non_finite_outputs: u64,
}

impl Processor {
    /// Wraps `engine`; `swap_fade_samples` is the crossfade length for later swaps. Allocates.
    pub fn new(engine: Box<Engine>, swap_fade_samples: usize) -> Self {
        let config = *engine.config();
        let max_block_size = config.max_block_size;
        // The dry path holds the longest latency an engine swapped in may report.
        let max_latency = max_latency(max_block_size, config.limits).max(engine.latency_samples());
        Self {
            b: None,
            b_buffers: Some(LaneBuffers::new(config.num_outputs, max_block_size)),
            ducker: Ducker::new(DEFAULT_SAMPLE_RATE, max_block_size),
            fade_len: swap_fade_samples.max(1),
            max_block_size,
            num_inputs: config.num_inputs,
            num_outputs: config.num_outputs,
            format: ChannelFormat::Auto,
            input_buffer: vec![vec![0.0f32; max_block_size]; config.num_inputs],
            dry_rings: (0..config.num_inputs)
                .map(|_| InputRing::new(max_block_size + max_latency))
                .collect(),
            time: 0,
            offline: false,
            silent_samples: u64::MAX,
            retired_late: LateStats::default(),
            non_finite_outputs: 0,
            a: Lane::new(engine, LaneBuffers::new(config.num_outputs, max_block_size)),
        }
    }

    /// The engine that is playing (the incoming one during a crossfade).
    pub fn engine(&self) -> &Engine {
        &self.a.engine
    }

    /// The second IR's engine, where one has been given ([`Self::begin_swap_second`]).
    pub fn second_engine(&self) -> Option<&Engine> {
        self.b.as_ref().map(|lane| &*lane.engine)
    }

    /// Whether the second IR's engine is parked (its blend share has rested at zero).
    pub fn second_is_parked(&self) -> bool {
        self.b.as_ref().is_some_and(|lane| lane.parked)
    }

    /// Latency of the signal path, in samples (the current engine's).
    pub fn latency_samples(&self) -> usize {
        self.a.engine.latency_samples()
    }

    /// The session's sample rate, which the ducking's times count in. Does not allocate.
    pub fn set_sample_rate(&mut self, sample_rate: u32) {
        self.ducker.set_sample_rate(sample_rate as f32);
    }

    /// The ducking's reduction now, in dB (0 or more). Does not allocate.
    pub fn duck_reduction_db(&self) -> f32 {
        self.ducker.reduction_db()
    }

    /// Reads the bus as `format` for the dry path ([`crate::ir::mapping::dry_source`]). Does not
    /// allocate.
    pub fn set_format(&mut self, format: ChannelFormat) {
        self.format = format;
    }

    /// Offline rendering waits for worker results so output is deterministic; real-time mode
    /// waits only while the host runs ahead of real time, within a bound, and applies the late
    /// policy otherwise ([`crate::engine::realtime::pace`]). Applies to every engine this processor
    /// plays, including later swaps. Does not allocate.
    pub fn set_offline(&mut self, offline: bool) {
        self.offline = offline;
        self.a.set_offline(offline);
        if let Some(b) = &mut self.b {
            b.set_offline(offline);
        }
    }

    /// Counters since construction: worker lateness of every engine played so far (summed over
    /// swaps) and the samples the non-finite guard caught. Does not allocate.
    pub fn health(&self) -> Health {
        let mut late = self.retired_late;
        self.a.add_late(&mut late);
        if let Some(b) = &self.b {
            b.add_late(&mut late);
        }
        Health {
            late,
            non_finite_outputs: self.non_finite_outputs,
        }
    }

    /// Whether the output is exactly zero and stays so until the input is not: the input has
    /// been exactly zero (or non-finite, which counts as silence) for at least the
    /// [`silence_horizon`] of every engine playing, so nothing of it is left in the wet or the
    /// delayed dry path. Hosts may stop calling `process()` then, until the input comes back.
    /// Does not allocate.
    pub fn is_quiet(&self) -> bool {
        let horizon = [Some(&self.a), self.b.as_ref()]
            .into_iter()
            .flatten()
            .flat_map(|lane| [Some(&lane.engine), lane.fading.as_ref()])
            .flatten()
            .map(|engine| silence_horizon(engine.plan()))
            .max()
            .unwrap_or(0);
        self.silent_samples >= horizon as u64
    }

    /// Whether a crossfade is in progress.
    pub fn is_swapping(&self) -> bool {
        self.a.fading.is_some() || self.b.as_ref().is_some_and(|b| b.fading.is_some())
    }

    /// Starts a crossfade from the current engine to `engine`, which must have the same
    /// channel counts and maximum block size, and at most the latency its dry path holds
    /// ([`max_latency`]: every mode the plugin offers). Returns the engine that can no longer
    /// play (one that was still fading out, if any) for the caller to drop off the audio
    /// thread. Does not allocate.
    #[must_use = "the returned engine must be dropped off the audio thread"]
    pub fn begin_swap(&mut self, engine: Box<Engine>) -> Option<Box<Engine>> {
        debug_assert_eq!(engine.config().num_inputs, self.num_inputs);
        debug_assert_eq!(engine.config().num_outputs, self.num_outputs);
        debug_assert_eq!(engine.config().max_block_size, self.max_block_size);
        debug_assert!(
            engine.latency_samples() + self.max_block_size <= self.dry_rings[0].history_len()
        );
        let displaced = self.a.begin_swap(engine, self.offline);
        if let Some(displaced) = &displaced {
            add_late(&mut self.retired_late, displaced.late_stats());
        }
        displaced
    }

    /// [`Self::begin_swap`] for the second IR's engine: the first one given becomes it at
    /// once (silent until the blend gives it a share), later ones crossfade in. It must have
    /// the first engine's channel counts and block size, and plays aligned where it has its
    /// latency too (a change of latency mode rebuilds both, the second after the first).
    /// Does not allocate.
    #[must_use = "the returned engine must be dropped off the audio thread"]
    pub fn begin_swap_second(&mut self, engine: Box<Engine>) -> Option<Box<Engine>> {
        debug_assert_eq!(engine.config().num_inputs, self.num_inputs);
        debug_assert_eq!(engine.config().num_outputs, self.num_outputs);
        debug_assert_eq!(engine.config().max_block_size, self.max_block_size);
        let displaced = match (&mut self.b, self.b_buffers.take()) {
            (Some(b), _) => b.begin_swap(engine, self.offline),
            (None, Some(buffers)) => {
                let mut lane = Lane::new(engine, buffers);
                lane.set_offline(self.offline);
                // Parked: it starts from silence when the blend first gives it a share.
                lane.parked = true;
                self.b = Some(lane);
                None
            }
            // The buffers wait until the second lane exists: not reached, and harmless if it were.
            (None, None) => Some(engine),
        };
        if let Some(displaced) = &displaced {
            add_late(&mut self.retired_late, displaced.late_stats());
        }
        displaced
    }

    /// Takes the second IR's engine back where its lane is parked and no crossfade holds it
    /// (the second IR was turned off), for the caller to drop off the audio thread; the lane's
    /// buffers wait for the next one. Does not allocate.
    #[must_use = "the returned engine must be dropped off the audio thread"]
    pub fn take_parked_second(&mut self) -> Option<Box<Engine>> {
        let lane = self
            .b
            .take_if(|b| b.parked && b.fading.is_none() && b.finished.is_none())?;
        lane.add_late(&mut self.retired_late);
        let (engine, buffers) = lane.into_parts();
        self.b_buffers = Some(buffers);
        Some(engine)
    }

    /// Whether an engine whose crossfade has finished waits in
    /// [`take_finished`](Self::take_finished).
    pub fn has_finished(&self) -> bool {
        self.a.finished.is_some() || self.b.as_ref().is_some_and(|b| b.finished.is_some())
    }

    /// Takes the engine whose crossfade has finished, if any, for the caller to drop off the
    /// audio thread.
    pub fn take_finished(&mut self) -> Option<Box<Engine>> {
        let finished = self
            .a
            .finished
            .take()
            .or_else(|| self.b.as_mut().and_then(|b| b.finished.take()));
        if let Some(finished) = &finished {
            add_late(&mut self.retired_late, finished.late_stats());
        }
        finished
    }

    /// Clears all history (engines and dry path) and ends any crossfade. Does not allocate; an
    /// engine that was fading out waits in [`take_finished`](Self::take_finished).
    pub fn reset(&mut self) {
        self.a.reset();
        if let Some(b) = &mut self.b {
            b.reset();
        }
        self.dry_rings.iter_mut().for_each(InputRing::clear);
        self.ducker.reset();
        self.time = 0;
        self.silent_samples = u64::MAX;
    }

    /// Processes one host block in place: `channels` holds the input in its first
    /// `num_inputs` slices and receives the output in its first `num_outputs` slices. Blocks
    /// longer than the maximum block size are processed in pieces. Never allocates.
    pub fn process(&mut self, channels: &mut [&mut [f32]], controls: Controls<'_>) {
        let num_frames = channels.first().map_or(0, |c| c.len());
        if channels.len() < self.num_inputs.max(self.num_outputs) {
            // Not the layout this processor was built for: output silence rather than panic.
            channels.iter_mut().for_each(|c| c.fill(0.0));
            return;
        }
        let mut start = 0;
        while start < num_frames {
            let len = (num_frames - start).min(self.max_block_size);
            self.process_piece(channels, start, len, controls);
            start += len;
        }
    }

    fn process_piece(
        &mut self,
        channels: &mut [&mut [f32]],
        start: usize,
        len: usize,
        controls: Controls<'_>,
    ) {
        let range = start..start + len;
        // Samples after the last non-zero one of this piece, over all input channels.
        let mut trailing_silence = len;
        for (buffer, channel) in self.input_buffer.iter_mut().zip(channels.iter()) {
            // A non-finite input sample would stay in the delay lines for the whole IR length
            // and silence the output (NaN is flushed there); treat it as silence instead.
            for (copy, &sample) in buffer[..len].iter_mut().zip(&channel[range.clone()]) {
                *copy = if sample.is_finite() { sample } else { 0.0 };
            }
            if let Some(last) = buffer[..len].iter().rposition(|&sample| sample != 0.0) {
                trailing_silence = trailing_silence.min(len - 1 - last);
            }
        }
        self.silent_samples = if trailing_silence == len {
            self.silent_samples.saturating_add(len as u64)
        } else {
            trailing_silence as u64
        };

        // The wet signal of each lane (each with its outgoing engine during a crossfade), and
        // the blend of the two.
        {
            let mut inputs: [&[f32]; MAX_CHANNELS] = [&[]; MAX_CHANNELS];
            for (slot, buffer) in inputs.iter_mut().zip(&self.input_buffer) {
                *slot = &buffer[..len];
            }
            let inputs = &inputs[..self.num_inputs];
            // No blend: the second lane's share is zero (it parks in time).
            let blend = controls
                .blend
                .get(range.clone())
                .filter(|_| self.b.is_some());
            let (a_needed, b_needed) = blend.map_or((true, false), |blend| {
                (
                    blend.iter().any(|&b| b < 1.0),
                    blend.iter().any(|&b| b > 0.0),
                )
            });
            let run_a = self.a.schedule(a_needed, len, self.fade_len);
            if run_a {
                self.a.run(inputs, len, self.fade_len);
            }
            let run_b = self
                .b
                .as_mut()
                .is_some_and(|b| b.schedule(b_needed, len, self.fade_len));
            if let Some(b) = self.b.as_mut().filter(|_| run_b) {
                b.run(inputs, len, self.fade_len);
            }
            if let (Some(b), Some(blend), true) = (&self.b, blend, run_b) {
                for (wet, other) in self.a.wet.iter_mut().zip(&b.wet) {
                    for ((a, &b), &share) in wet[..len].iter_mut().zip(&other[..len]).zip(blend) {
                        // A parked lane's samples are stale: its share is exactly 0 here.
                        let a_value = if run_a { *a } else { 0.0 };
                        *a = a_value + share * (b - a_value);
                    }
                }
            }
        }

        if width_applies(self.num_outputs)
            && let [left, right] = &mut self.a.wet[..]
        {
            apply_width(
                &mut left[..len],
                &mut right[..len],
                &controls.width[range.clone()],
            );
        }

        {
            let mut key: [&[f32]; MAX_CHANNELS] = [&[]; MAX_CHANNELS];
            let num_keys = match controls.key {
                Some(sidechain) if !sidechain.is_empty() => {
                    for (slot, channel) in key.iter_mut().zip(sidechain) {
                        *slot = &channel[range.clone()];
                    }
                    sidechain.len().min(MAX_CHANNELS)
                }
                _ => {
                    for (slot, buffer) in key.iter_mut().zip(&self.input_buffer) {
                        *slot = &buffer[..len];
                    }
                    self.num_inputs
                }
            };
            self.ducker
                .process(&key[..num_keys], &mut self.a.wet, len, &controls.duck);
        }

        // The dry path, delayed by the engine's latency so it stays aligned with the wet path.
        for (ring, buffer) in self.dry_rings.iter_mut().zip(&self.input_buffer) {
            ring.write_slice(self.time, &buffer[..len]);
        }
        let delayed_end = (self.time + len as u64).wrapping_sub(self.latency_samples() as u64);
        self.time += len as u64;

        let (mix, gain) = (&controls.mix[range.clone()], &controls.gain[range.clone()]);
        let mut num_non_finite = 0;
        let bus = Bus::new(self.num_inputs, self.num_outputs, self.format);
        for (output_idx, output) in channels.iter_mut().take(self.num_outputs).enumerate() {
            let wet = &self.a.wet[output_idx][..len];
            let (dry_left, dry_right) = match dry_source(bus, output_idx) {
                Dry::Input(input_idx) => (
                    Some(self.dry_rings[input_idx].window(delayed_end, len)),
                    None,
                ),
                Dry::Mid => (
                    Some(self.dry_rings[0].window(delayed_end, len)),
                    Some(self.dry_rings[1].window(delayed_end, len)),
                ),
                Dry::None => (None, None),
            };
            let output = &mut output[range.clone()];
            for sample_idx in 0..len {
                let dry = match (dry_left, dry_right) {
                    (Some(left), Some(right)) => 0.5 * (left[sample_idx] + right[sample_idx]),
                    (Some(left), None) => left[sample_idx],
                    _ => 0.0,
                };
                let m = mix[sample_idx];
                let value = gain[sample_idx] * (m * wet[sample_idx] + (1.0 - m) * dry);
                // Never pass NaN or infinity to the host; count them, as they mean a bug.
                output[sample_idx] = if value.is_finite() {
                    value
                } else {
                    num_non_finite += 1;
                    0.0
                };
            }
        }
        self.non_finite_outputs += num_non_finite;
    }
}

/// Samples of silent input after which an engine planned as `plan` outputs exactly zero: the
/// tail (`IR length - 1 + latency`), stretched to the end of the last level's zero-padded
/// partitions plus one partition. Past the IR's end its FFT levels compute zeros only up to
/// round-off, and an overlap-save window keeps an input chunk for one computation after its
/// last partition. Does not allocate.
pub fn silence_horizon(plan: &PartitionPlan) -> usize {
    let levels_end = plan
        .levels
        .iter()
        .map(|level| level.ir_end() + level.partition_size)
        .max()
        .unwrap_or(0);
    plan.ir_len.max(levels_end) - 1 + plan.latency_samples()
}
