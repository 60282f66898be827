//! The plugin as a VST3 host sees it: the library cargo built (the file the bundler copies into
//! `Longtail.vst3`) loaded through its VST3 entry points with the `vst3` crate's bindings. The
//! factory is scanned, the audio module instantiated, set up for stereo at several sample rates
//! and block sizes, and run as a bounce (set up once with offline mode, which nice-plug hands
//! the plugin as real-time mode); its output must be what `longtail-cli render` computes
//! (the same library function, `longtail::render::render`) for the default settings. Its state
//! is saved and loaded into a second instance, which then plays the same output (to within the
//! rounding of its own stagger phase). [`teardown`] releases instances with tasks just posted
//! to nice-plug's shared task thread, in child processes.

// The bindings' enum constants are `u32` on Linux and `i32` on Windows (C enums follow the
// platform's ABI), so the casts to the API's `i32` do nothing there.
#![cfg_attr(
    windows,
    expect(
        clippy::unnecessary_cast,
        reason = "the vst3 enum constants are already i32 on Windows"
    )
)]

mod host;
mod teardown;

use longtail::engine::Executor;
use longtail::engine::plan::{LatencyMode, PlanLimits, offload_shape};
use longtail::ir::builtin::BuiltinIr;
use longtail::render::{BlockSizes, RenderOptions, render};
use longtail_tests::{RNG_SEED, max_abs_diff, noise, snr_db};
use vst3::Steinberg::Vst::BusDirections_::kOutput;
use vst3::Steinberg::kResultOk;

use host::Module;

/// The plugin's default wet share (the Mix parameter).
const DEFAULT_MIX: f32 = 0.35;

/// One second of stereo noise then half a second of silence, through the default settings
/// (Hall, mix 35 %, zero latency) at 44.1 and 48 kHz and blocks of 64 and 512: the output is
/// the CLI's render of the same input, and a second instance loaded with the first one's state
/// plays the same.
#[test]
fn vst3_processes_like_the_cli_render_and_restores_its_state() {
    let module = Module::load();
    let class = module.audio_class();
    for (rate, block) in [(48_000u32, 64usize), (44_100, 512)] {
        let sound = rate as usize;
        let total = sound + rate as usize / 2;
        let mut input = [
            noise(total, 0.5, RNG_SEED + 200),
            noise(total, 0.5, RNG_SEED + 201),
        ];
        input.iter_mut().for_each(|x| x[sound..].fill(0.0));

        let instance = module.instantiate(&class);
        instance.activate(f64::from(rate), block);
        let output = instance.process(&input, block);
        instance.deactivate();

        let hall = BuiltinIr::Hall.generate(rate);
        let (want, _) = render(
            &hall,
            &input,
            RenderOptions {
                blocks: BlockSizes::Fixed(block),
                mix: DEFAULT_MIX,
                width: 1.0,
                latency_mode: LatencyMode::Zero,
                executor: Executor::Workers,
                outputs: None,
                format: Default::default(),
                duck: longtail::audio::ducker::DuckSettings::OFF,
            },
        )
        .expect("render");
        for channel in 0..2 {
            let want: Vec<f64> = want[channel][..total]
                .iter()
                .map(|&s| f64::from(s))
                .collect();
            let snr = snr_db(&output[channel], &want);
            assert!(
                snr >= 100.0,
                "{rate} Hz, block {block}, channel {channel}: {snr:.1} dB against the render"
            );
        }

        let state = instance.save();
        assert!(!state.is_empty(), "an empty state");
        let restored = module.instantiate(&class);
        restored.load(&state);
        restored.activate(f64::from(rate), block);
        let again = restored.process(&input, block);
        restored.deactivate();
        for channel in 0..2 {
            // In real-time mode each instance staggers its big partitions against the others'
            // (another rounding, about 1e-7): the same output to within that.
            let diff = max_abs_diff(&again[channel], &output[channel]);
            assert!(
                diff < 1e-5,
                "{rate} Hz, block {block}, channel {channel}: the restored instance differs by \
                 up to {diff:e}"
            );
            let want: Vec<f64> = want[channel][..total]
                .iter()
                .map(|&s| f64::from(s))
                .collect();
            let snr = snr_db(&again[channel], &want);
            assert!(
                snr >= 100.0,
                "{rate} Hz, block {block}, channel {channel}: restored, {snr:.1} dB against the \
                 render"
            );
        }
    }
}

/// The latency a VST3 host reads back after activation (`getLatencySamples`): 0 for zero
/// latency, one quantum for low CPU, and the offload mode's L, the latency its plan takes for
/// the block size, with the audio delayed by exactly that much: an impulse through the dry
/// path (mix 0) comes out L samples later.
#[test]
fn vst3_reports_the_latency_of_each_mode() {
    let module = Module::load();
    let class = module.audio_class();
    // The Latency parameter's values: Zero, Low CPU, Offload 512, 1024, 2048, 4096.
    let normalized = |idx: usize| idx as f64 / 5.0;
    let offload =
        |asked: usize, block: usize| offload_shape(asked, block, PlanLimits::default()).0 as u32;
    for (mode, block, expected) in [
        (0, 256, 0),
        (1, 256, 256),
        (4, 64, offload(2048, 64)),
        (5, 512, offload(4096, 512)),
        (2, 64, offload(512, 64)),
    ] {
        let instance = module.instantiate(&class);
        instance.set_param("Latency", normalized(mode));
        instance.set_param("Mix", 0.0);
        instance.activate(48_000.0, block);
        assert_eq!(instance.latency(), expected, "mode {mode}, block {block}");
        let at = 777;
        let len = at + expected as usize + 1_000;
        let mut input = [vec![0.0f32; len], vec![0.0f32; len]];
        input[0][at] = 1.0;
        input[1][at] = 1.0;
        let output = instance.process(&input, block);
        for channel in output {
            let first = channel.iter().position(|&s| s != 0.0);
            assert_eq!(
                first,
                Some(at + expected as usize),
                "mode {mode}, block {block}"
            );
        }
        instance.deactivate();
    }
    assert_eq!(offload(2048, 64), 2048);
    assert_eq!(offload(512, 64), 2048);
}

/// Activation succeeds at any sample rate a host sets up (Steinberg's validator asks for
/// 1 234 567.8 Hz in its "Process Format" test). Outside 1 kHz to 768 kHz the plugin passes the
/// input through unchanged; at 1 kHz it convolves. The output is finite throughout, and nothing
/// in `process()` allocates (this library aborts if it does).
#[test]
fn vst3_activates_at_any_sample_rate() {
    let module = Module::load();
    let class = module.audio_class();
    let instance = module.instantiate(&class);
    let block = 256;
    let input = [
        noise(4_096, 0.5, RNG_SEED + 210),
        noise(4_096, 0.5, RNG_SEED + 211),
    ];
    for (rate, passes_through) in [
        (1.0, true),
        (1_000.0, false),
        (1_234_567.8, true),
        (3e6, true),
        (48_000.0, false),
    ] {
        instance.activate(rate, block);
        let output = instance.process(&input, block);
        instance.deactivate();
        for (channel, samples) in output.iter().enumerate() {
            assert!(
                samples.iter().all(|s| s.is_finite()),
                "{rate} Hz, channel {channel}: non-finite output"
            );
        }
        assert_eq!(
            output == input,
            passes_through,
            "{rate} Hz: the output is the input"
        );
    }
}

/// Every bus the plugin offers, asked for by channel count as VST3 hosts do: it is accepted,
/// the plugin names an arrangement of that many speakers, and it plays finite audio with the
/// dry and wet signals on the outputs the mapping gives them (nothing in `process()`
/// allocates: this library aborts if it does).
#[test]
fn vst3_plays_every_offered_bus() {
    use longtail::ir::IrLayout;
    use longtail::ir::mapping::{Bus, ChannelFormat, Dry, dry_source, map};
    use vst3::Steinberg::Vst::IAudioProcessorTrait as _;

    let module = Module::load();
    let class = module.audio_class();
    let instance = module.instantiate(&class);
    let block = 256;
    for layout in longtail::layouts::AUDIO_IO_LAYOUTS {
        let count = |c: Option<std::num::NonZeroU32>| c.map_or(0, |c| c.get()) as usize;
        let (inputs, outputs) = (
            count(layout.main_input_channels),
            count(layout.main_output_channels),
        );
        let mask = |n: usize| (1u64 << n) - 1;
        instance.activate_bus(48_000.0, block, mask(inputs), mask(outputs));
        let mut named = 0u64;
        // SAFETY: a valid out pointer.
        let result = unsafe {
            instance
                .processor
                .getBusArrangement(kOutput as i32, 0, &mut named)
        };
        assert_eq!(result, kResultOk);
        assert_eq!(named.count_ones() as usize, outputs, "{named:#x}");
        let input: Vec<Vec<f32>> = (0..inputs)
            .map(|c| noise(4_096, 0.5, RNG_SEED + 220 + c as u64))
            .collect();
        let output = instance.process_wide(&input, outputs, block);
        instance.deactivate();
        let bus = Bus::new(inputs, outputs, ChannelFormat::Auto);
        let mapping = map(IrLayout::Stereo, bus).expect("the built-ins play on every bus");
        for (output_idx, samples) in output.iter().enumerate() {
            assert!(samples.iter().all(|s| s.is_finite()), "{bus}: {output_idx}");
            let heard = mapping.paths.iter().any(|p| p.output == output_idx)
                || dry_source(bus, output_idx) != Dry::None;
            let energy: f64 = samples.iter().map(|&s| f64::from(s).powi(2)).sum();
            assert_eq!(energy > 1e-3, heard, "{bus}: output {output_idx}");
        }
    }
}
