//! The factory and its descriptor, the parameters with their defaults, processing with ragged
//! blocks, sample-accurate automation and 0-frame calls.

use std::ffi::CStr;

use clack_extensions::params::ParamInfoFlags;
use longtail::ir::builtin::BuiltinIr;
use longtail_tests::{MIN_SNR_DB, RNG_SEED, reference_convolution, snr_db};

use super::*;

#[test]
fn factory_offers_exactly_longtail() {
    let entry = load_entry();
    let factory = entry
        .get_plugin_factory()
        .expect("the entry offers a plugin factory");
    assert_eq!(factory.plugin_count(), 1);
    let descriptors: Vec<_> = factory.plugin_descriptors().collect();
    assert_eq!(descriptors.len(), 1);
    let descriptor = descriptors[0];
    assert_eq!(descriptor.id(), Some(PLUGIN_ID));
    assert_eq!(descriptor.name(), Some(c"Longtail"));

    let vendor = descriptor
        .vendor()
        .expect("a vendor")
        .to_str()
        .expect("UTF-8 vendor");
    assert!(!vendor.trim().is_empty(), "empty vendor");
    let lower = vendor.to_lowercase();
    for placeholder in [
        "your name",
        "template",
        "todo",
        "example",
        "moist",
        "nih-plug",
        "nice-plug",
    ] {
        assert!(
            !lower.contains(placeholder),
            "vendor {vendor:?} looks like a template placeholder"
        );
    }
    assert_eq!(
        descriptor
            .version()
            .map(|v| v.to_str().expect("UTF-8 version")),
        Some(env!("CARGO_PKG_VERSION"))
    );
    let features: Vec<&CStr> = descriptor.features().collect();
    for feature in [c"audio-effect", c"reverb"] {
        assert!(
            features.contains(&feature),
            "features {features:?} lack {feature:?}"
        );
    }
}

#[test]
fn parameters_are_listed_with_their_defaults() {
    let mut host = TestHost::new();
    let descs = host.param_descs();
    let mut names: Vec<&str> = descs.iter().map(|desc| desc.name.as_str()).collect();
    names.sort_unstable();
    let mut expected = [BACKEND, IMPULSE_RESPONSE, LATENCY, MIX, GAIN, WIDTH]
        .into_iter()
        .chain(IR_EDIT_FLOATS)
        .chain([IR_SOURCE, REVERSE, NORMALIZE, CHANNEL_FORMAT])
        .chain([PREDELAY_SYNC, PREDELAY_NOTE])
        .chain(DUCKING)
        .chain(SECOND_IR)
        .collect::<Vec<_>>();
    expected.sort_unstable();
    assert_eq!(names, expected, "parameters: {descs:#?}");
    let mut ids: Vec<u32> = descs.iter().map(|desc| desc.id.get()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), descs.len(), "parameter ids are not unique");

    for desc in &descs {
        // The Channel format rebuilds the engine and changes what the bus means: a setting
        // saved with the project, not automation.
        assert_eq!(
            desc.flags.contains(ParamInfoFlags::IS_AUTOMATABLE),
            desc.name != CHANNEL_FORMAT,
            "{} automatable",
            desc.name
        );
        assert_eq!(desc.min, 0.0, "{}", desc.name);
        assert_eq!(
            host.value(desc.id),
            desc.default,
            "{} starts at its default",
            desc.name
        );
        // Enum parameters are stepped, with one step per entry.
        let (stepped, max) = match desc.name.as_str() {
            IMPULSE_RESPONSE | "Impulse response B" => (true, 4.0),
            // Off, Built-in, File.
            "IR B source" => (true, 2.0),
            // Auto, CPU, GPU.
            BACKEND => (true, 2.0),
            // Auto, Speakers, Ambisonics, Discrete.
            CHANNEL_FORMAT => (true, 3.0),
            // Zero, Low CPU, Offload 512 to 4096.
            LATENCY => (true, 5.0),
            // Input, Sidechain.
            IR_SOURCE | REVERSE | NORMALIZE | PREDELAY_SYNC | "Duck key" => (true, 1.0),
            // 1/64 to 1/2, plain, dotted and triplet.
            PREDELAY_NOTE => (true, 15.0),
            _ => (false, 1.0),
        };
        assert_eq!(
            desc.flags.contains(ParamInfoFlags::IS_STEPPED),
            stepped,
            "{}",
            desc.name
        );
        assert_eq!(desc.max, max, "{}", desc.name);
    }

    let by_name = |name: &str| descs.iter().find(|desc| desc.name == name).unwrap();
    assert!((by_name(MIX).default - f64::from(DEFAULT_MIX)).abs() < 1e-6);
    assert_eq!(
        by_name(IMPULSE_RESPONSE).default,
        2.0,
        "Hall is the default IR"
    );
    assert_eq!(by_name(LATENCY).default, LATENCY_ZERO);
    assert_eq!(by_name(BACKEND).default, 0.0, "Auto is the default backend");

    let gain = by_name(GAIN);
    assert_eq!(host.value_to_text(gain.id, gain.default), "0.0 dB");
    let minus_six = host.text_to_value(gain.id, c"-6 dB");
    assert!(minus_six > 0.0 && minus_six < gain.default);
    assert_eq!(host.value_to_text(gain.id, minus_six), "-6.0 dB");
    let mix = by_name(MIX);
    assert_eq!(host.value_to_text(mix.id, mix.default), "35%");
    let ir = by_name(IMPULSE_RESPONSE);
    assert_eq!(host.value_to_text(ir.id, IR_PLATE), "Plate");
    assert_eq!(host.value_to_text(ir.id, 4.0), "Wide hall (true stereo)");
    let latency = by_name(LATENCY);
    assert_eq!(host.value_to_text(latency.id, LATENCY_LOW_CPU), "Low CPU");
    assert_eq!(
        host.value_to_text(latency.id, LATENCY_OFFLOAD_2048),
        "Offload 2048"
    );
    host.assert_threading_respected();
}

/// Default settings (Hall, mix 35 %, zero latency), seconds of noise then silence, in blocks
/// of changing sizes: the output is the exact mix of the dry signal and the convolution, and
/// the reverb keeps ringing after the input stops.
#[test]
fn processes_changing_block_sizes_with_default_settings() {
    let mut host = TestHost::new();
    host.activate(MAX_BLOCK);
    assert_eq!(host.latency(), 0);

    let sound = 2 * SAMPLE_RATE as usize;
    let total = sound + SAMPLE_RATE as usize;
    let mut input = stereo_noise(total, RNG_SEED);
    input.iter_mut().for_each(|x| x[sound..].fill(0.0));
    let sizes = block_sizes(total, MAX_BLOCK as usize);
    assert!(sizes.contains(&1) && sizes.contains(&(MAX_BLOCK as usize)));
    let run = host.process([&input[0], &input[1]], &sizes, &[]);

    assert_finite(&run);
    assert_keeps_processing(&run);
    let hall_tail = tail_of(BuiltinIr::Hall, 0);
    assert!(
        run.tails.iter().all(|&tail| tail == hall_tail),
        "tails {:?}",
        &run.tails[..4]
    );
    let hall = BuiltinIr::Hall.generate(SAMPLE_RATE);
    for (channel, (output, x)) in run.outputs.iter().zip(&input).enumerate() {
        assert!(rms(output) > 0.05, "channel {channel} is (nearly) silent");
        let ringing = rms(&output[sound + SWAP_FADE_SAMPLES..]);
        assert!(
            ringing > 1e-3,
            "channel {channel}: no tail after the input stops ({ringing})"
        );
        let expected = mixed_reference(x, &hall.channels[channel], DEFAULT_MIX);
        let snr = snr_db(output, &expected);
        assert!(snr >= MIN_SNR_DB, "channel {channel}: SNR {snr:.1} dB");
    }
    host.assert_threading_respected();
}

/// Parameter events inside blocks take effect at their sample offset: mix to 0 (the output
/// becomes the dry input), output gain to -6 dB, then mix to 1 at unity gain (the output
/// becomes the convolution alone).
#[test]
fn automation_is_sample_accurate() {
    let mut host = TestHost::new();
    let mix = host.param(MIX);
    let gain = host.param(GAIN);
    let minus_six_db = host.text_to_value(gain, c"-6 dB");
    let unity = host.text_to_value(gain, c"0 dB");
    host.activate(MAX_BLOCK);

    let total = 2 * SAMPLE_RATE as usize;
    let input = stereo_noise(total, RNG_SEED + 10);
    let sizes = block_sizes(total, MAX_BLOCK as usize);
    let starts = block_starts(&sizes);
    // Offset 100 inside the first long block after 0.25 s.
    let block = (0..sizes.len())
        .find(|&idx| starts[idx] >= SAMPLE_RATE as usize / 4 && sizes[idx] > 100)
        .expect("a long block");
    let mix_to_dry = starts[block] + 100;
    let gain_down = mix_to_dry + 4_001;
    let wet_only = gain_down + 4_003;

    // The reference run without automation, then the same input after a reset.
    let plain = host.process([&input[0], &input[1]], &sizes, &[]);
    host.reset();
    let automation = [
        Automation {
            at: mix_to_dry,
            param: mix,
            value: 0.0,
        },
        Automation {
            at: gain_down,
            param: gain,
            value: minus_six_db,
        },
        Automation {
            at: wet_only,
            param: gain,
            value: unity,
        },
        Automation {
            at: wet_only,
            param: mix,
            value: 1.0,
        },
    ];
    let automated = host.process([&input[0], &input[1]], &sizes, &automation);
    assert_finite(&automated);

    let hall = BuiltinIr::Hall.generate(SAMPLE_RATE);
    let minus_six_gain = 10f64.powf(-6.0 / 20.0);
    for (channel, x) in input.iter().enumerate() {
        let (before, after) = (&plain.outputs[channel], &automated.outputs[channel]);
        // Nothing changes before the first event (and reset() restores the initial state)...
        let first_difference = before.iter().zip(after).position(|(a, b)| a != b);
        // ...and the mix starts moving exactly at the event's sample.
        assert_eq!(first_difference, Some(mix_to_dry), "channel {channel}");

        // Fully dry once the mix has been smoothed to 0.
        for idx in mix_to_dry + SMOOTHING_SAMPLES..gain_down {
            let error = (after[idx] - x[idx]).abs();
            assert!(
                error <= 1e-6,
                "channel {channel} sample {idx}: dry error {error}"
            );
        }
        // Dry at -6 dB once the gain has been smoothed.
        for idx in gain_down + SMOOTHING_SAMPLES..wet_only {
            let error = (f64::from(after[idx]) - minus_six_gain * f64::from(x[idx])).abs();
            assert!(
                error <= 1e-5,
                "channel {channel} sample {idx}: gain error {error}"
            );
        }
        // Wet only, at unity gain: the convolution of the whole input (the engine kept running).
        let from = wet_only + SMOOTHING_SAMPLES;
        let wet = reference_convolution(x, &hall.channels[channel]);
        let snr = snr_db(&after[from..], &wet[from..total]);
        assert!(snr >= MIN_SNR_DB, "channel {channel}: wet SNR {snr:.1} dB");
    }
    assert_eq!(host.value(mix), 1.0);
    host.assert_threading_respected();
}

/// `process()` calls with 0 frames, first thing after activation and between ordinary blocks,
/// change nothing: the output is bit for bit that of an instance that never got them.
/// (nice-plug's CLAP wrapper answers them itself, with a debug warning, and does not call the
/// plugin; the soak test calls the plugin's own `process()` with 0 frames.)
#[test]
fn empty_process_calls_change_nothing() {
    let total = SAMPLE_RATE as usize / 2;
    let input = stereo_noise(total, RNG_SEED + 40);
    let sizes = block_sizes(total, MAX_BLOCK as usize);
    let mut with_empty = vec![0, 0];
    for (block_idx, &size) in sizes.iter().enumerate() {
        with_empty.push(size);
        if block_idx % 16 == 3 {
            with_empty.extend([0, 0]);
        }
    }

    let mut plain = TestHost::new();
    plain.activate(MAX_BLOCK);
    let expected = plain.process([&input[0], &input[1]], &sizes, &[]);
    let mut host = TestHost::new();
    host.activate(MAX_BLOCK);
    let run = host.process([&input[0], &input[1]], &with_empty, &[]);
    assert_finite(&run);
    assert!(rms(&run.outputs[0]) > 0.05);
    for channel in 0..2 {
        let mismatch = run.outputs[channel]
            .iter()
            .zip(&expected.outputs[channel])
            .position(|(x, y)| x.to_bits() != y.to_bits());
        assert_eq!(mismatch, None, "channel {channel}: first differing sample");
    }
    host.assert_threading_respected();
}
