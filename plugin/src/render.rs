//! Offline rendering through the plugin's own signal path ([`Processor`] around [`Engine`]):
//! used by `longtail-cli render` and `demo`. Runs on the calling thread, allocates its buffers
//! up front and then calls `process()` block by block exactly as a host would.
//!
//! The output has `input length + IR length - 1` frames and is time-aligned with the input:
//! the engine's latency (0, one quantum in low-CPU mode, L in the offload mode) is rendered and
//! cut off.

use std::time::Instant;

use crate::audio::ducker::DuckSettings;
use crate::audio::processor::{Controls, Processor};
use crate::cpu_time;
use crate::engine::realtime::denormals::ScopedFtz;
use crate::engine::{Engine, EngineConfig, EngineError, Executor, LatencyMode, PlanLimits};
use crate::ir::Ir;
use crate::ir::mapping::ChannelFormat;
use crate::rng::Rng;

/// Seed of the `random` block-size sequence, so random renders are reproducible.
pub const RANDOM_BLOCKS_SEED: u64 = 0xB10C_5EED;
/// Largest block of the `random` block-size sequence.
pub const RANDOM_BLOCKS_MAX: usize = 1024;

/// Host block sizes for a render.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockSizes {
    /// Every block has this many samples (the last may be shorter).
    Fixed(usize),
    /// Seeded random sizes in `[1, RANDOM_BLOCKS_MAX]`.
    Random,
}

impl BlockSizes {
    /// The largest block of the sequence: the engine's maximum block size.
    pub fn max(self) -> usize {
        match self {
            Self::Fixed(size) => size.max(1),
            Self::Random => RANDOM_BLOCKS_MAX,
        }
    }
}

/// How to render.
#[derive(Debug, Clone, Copy)]
pub struct RenderOptions {
    /// Host block sizes.
    pub blocks: BlockSizes,
    /// Wet share, linear: `out = mix * wet + (1 - mix) * dry`.
    pub mix: f32,
    /// Stereo width of the wet signal, `0..=2` (1: as the IR has it), on two-output buses
    /// ([`crate::audio::processor::Controls::width`]).
    pub width: f32,
    /// Zero latency, low CPU, or the offload mode with its latency.
    pub latency_mode: LatencyMode,
    /// Where the levels after the first run (CPU workers, or the GPU with CPU standbys).
    pub executor: Executor,
    /// Output channels; `None`: [`num_outputs_for`].
    pub outputs: Option<usize>,
    /// What the channels of a bus wider than stereo are ([`crate::ir::mapping`]).
    pub format: ChannelFormat,
    /// Ducking of the wet signal ([`DuckSettings::OFF`]: none); its key is the input unless
    /// [`render_keyed`] is given one.
    pub duck: DuckSettings,
}

/// What a render did, for reports.
#[derive(Debug, Clone)]
pub struct RenderReport {
    /// The partition plan, one line.
    pub plan: String,
    /// Where the worker levels ran and why.
    pub backend: crate::engine::BackendReport,
    /// Latency the plugin would report, in samples.
    pub latency_samples: usize,
    /// Paths convolved.
    pub num_paths: usize,
    /// Seconds of audio rendered (input plus tail).
    pub audio_seconds: f64,
    /// CPU seconds of the whole process (audio thread and workers) during the render.
    pub cpu_seconds: f64,
    /// CPU seconds of the rendering thread alone (what a host's audio thread would spend).
    pub audio_thread_cpu_seconds: f64,
    /// Worker threads the engine ran.
    pub num_workers: usize,
    /// Wall-clock seconds spent in `process()` calls.
    pub wall_seconds: f64,
}

impl RenderReport {
    /// CPU seconds per second of audio.
    pub fn real_time_factor(&self) -> f64 {
        self.cpu_seconds / self.audio_seconds.max(f64::MIN_POSITIVE)
    }
}

/// The number of output channels for `num_inputs` inputs and `ir` when none is asked for: a
/// matrix's own outputs; as many as the inputs past stereo (`N -> N`); an IR of one row per
/// input past stereo width (`inputs x M` channels, `M > 2`) its `M`; else stereo when the input
/// or the IR is stereo (or true stereo), else mono.
pub fn num_outputs_for(num_inputs: usize, ir: &Ir) -> usize {
    let channels = ir.channels.len();
    if let Some(outputs) = ir.layout.matrix_outputs() {
        outputs
    } else if num_inputs > 2 {
        num_inputs
    } else if channels.is_multiple_of(num_inputs.max(1)) && channels / num_inputs.max(1) > 2 {
        channels / num_inputs.max(1)
    } else if num_inputs >= 2 || channels >= 2 {
        2
    } else {
        1
    }
}

/// Renders `input` (one `Vec` per channel, 1 to 64 channels, at the IR's sample rate) through
/// `ir`, mapped onto the bus by [`crate::ir::mapping`]. Returns the output channels and a
/// report.
pub fn render(
    ir: &Ir,
    input: &[Vec<f32>],
    options: RenderOptions,
) -> Result<(Vec<Vec<f32>>, RenderReport), EngineError> {
    render_keyed(ir, input, &[], options)
}

/// A second IR and its share of the wet signal, `0..=1`: `wet = (1 - blend) * A + blend * B`.
#[derive(Debug, Clone, Copy)]
pub struct Blend<'a> {
    pub ir: &'a Ir,
    pub blend: f32,
}

/// [`render`] with `key` (one `Vec` per channel, at the input's rate) as the ducking's key, in
/// place of the input: a sidechain. Shorter keys are followed by silence, longer ones cut; no
/// channels: the input is the key.
pub fn render_keyed(
    ir: &Ir,
    input: &[Vec<f32>],
    key: &[Vec<f32>],
    options: RenderOptions,
) -> Result<(Vec<Vec<f32>>, RenderReport), EngineError> {
    render_blended(ir, None, input, key, options)
}

/// [`render_keyed`] with a second IR blended in (`second`, at the first's rate, mapped onto the
/// same bus), as the plugin's Blend does: two engines in one processor. The output is as long
/// as the longer IR's.
pub fn render_blended(
    ir: &Ir,
    second: Option<Blend<'_>>,
    input: &[Vec<f32>],
    key: &[Vec<f32>],
    options: RenderOptions,
) -> Result<(Vec<Vec<f32>>, RenderReport), EngineError> {
    let _ftz = ScopedFtz::enable();
    let num_inputs = input.len();
    let num_outputs = options
        .outputs
        .unwrap_or_else(|| num_outputs_for(num_inputs, ir));
    let config = EngineConfig {
        max_block_size: options.blocks.max(),
        num_inputs,
        num_outputs,
        latency_mode: options.latency_mode,
        limits: PlanLimits::default(),
        executor: options.executor,
    };
    let engine = Engine::new_mapped(ir, config, options.format)?;
    let backend = engine.backend_report();
    let plan = engine.plan().describe();
    let num_paths = engine.num_paths();
    let latency = engine.latency_samples();
    let num_workers = engine.num_workers();
    let second_engine = match second {
        Some(second) => Some(Engine::new_mapped(second.ir, config, options.format)?),
        None => None,
    };
    let ir_len = ir.len().max(second.map_or(0, |second| second.ir.len()));
    let mut processor = Processor::new(Box::new(engine), 1);
    if let Some(engine) = second_engine {
        // A new processor takes its first second engine and hands nothing back.
        let none = processor.begin_swap_second(Box::new(engine));
        debug_assert!(none.is_none());
    }
    processor.set_format(options.format);
    processor.set_sample_rate(ir.sample_rate);
    // A render waits for the workers: deterministic, and equal to real time with no late block.
    processor.set_offline(true);

    let input_len = input.first().map_or(0, Vec::len);
    let total = input_len + ir_len - 1 + latency;
    // In place, as a host does it: inputs in the first channels, outputs replace them.
    let num_channels = num_inputs.max(num_outputs);
    let mut channels: Vec<Vec<f32>> = (0..num_channels)
        .map(|channel_idx| {
            let mut channel = input.get(channel_idx).cloned().unwrap_or_default();
            channel.resize(total, 0.0);
            channel
        })
        .collect();
    let key: Vec<Vec<f32>> = key
        .iter()
        .map(|channel| {
            let mut channel = channel.clone();
            channel.resize(total, 0.0);
            channel
        })
        .collect();
    let max_block = config.max_block_size;
    let mix = vec![options.mix; max_block];
    let gain = vec![1.0f32; max_block];
    let width = vec![options.width; max_block];
    let blend = vec![second.map_or(0.0, |second| second.blend.clamp(0.0, 1.0)); max_block];

    let mut rng = Rng::new(RANDOM_BLOCKS_SEED);
    let cpu_start = cpu_time::process_seconds();
    let thread_cpu_start = cpu_time::thread_seconds();
    let wall_start = Instant::now();
    let mut start = 0;
    while start < total {
        let len = match options.blocks {
            BlockSizes::Fixed(size) => size.max(1),
            BlockSizes::Random => rng.range(1, RANDOM_BLOCKS_MAX),
        }
        .min(total - start);
        let mut block: Vec<&mut [f32]> = channels
            .iter_mut()
            .map(|c| &mut c[start..start + len])
            .collect();
        let key_block: Vec<&[f32]> = key.iter().map(|c| &c[start..start + len]).collect();
        processor.process(
            &mut block,
            Controls {
                mix: &mix[..len],
                gain: &gain[..len],
                width: &width[..len],
                duck: options.duck,
                key: (!key_block.is_empty()).then_some(&key_block[..]),
                blend: &blend[..len],
            },
        );
        start += len;
    }
    let wall_seconds = wall_start.elapsed().as_secs_f64();
    let audio_thread_cpu_seconds = cpu_time::thread_seconds() - thread_cpu_start;
    let cpu_seconds = cpu_time::process_seconds() - cpu_start;

    channels.truncate(num_outputs);
    for channel in &mut channels {
        channel.drain(..latency);
    }
    let report = RenderReport {
        plan,
        backend,
        latency_samples: latency,
        num_paths,
        audio_seconds: total as f64 / f64::from(ir.sample_rate),
        cpu_seconds,
        audio_thread_cpu_seconds,
        num_workers,
        wall_seconds,
    };
    Ok((channels, report))
}
