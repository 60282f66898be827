//! Buses wider than stereo through CLAP's audio-ports-config: every bus the plugin offers is
//! listed as `longtail::layouts` says, activates and plays (under `assert_process_allocs`) with
//! the reverb on exactly the outputs the mapping gives it; the Channel format setting is saved
//! with the project; and multichannel IR files of different shapes swap in while a 4-channel
//! bus plays, each output the float64 convolution the mapping describes.

use std::time::Instant;

use clack_extensions::audio_ports_config::{AudioPortsConfigBuffer, PluginAudioPortsConfig};
use clack_host::prelude::*;
use longtail::ir::edit::{self, EditSettings};
use longtail::ir::mapping::{Bus, ChannelFormat, map};
use longtail::ir::{Ir, IrLayout};
use longtail::layouts::{AUDIO_IO_LAYOUTS, SIDECHAIN_CHANNELS};
use longtail_tests::{MIN_SNR_DB, RNG_SEED, decaying_noise, matrix_reference, noise, snr_db};

use super::*;

/// `(id, inputs, outputs)` of every configuration the plugin lists.
fn configs(host: &mut TestHost) -> Vec<(ClapId, u32, u32)> {
    let ext = host
        .instance
        .plugin_shared_handle()
        .get_extension::<PluginAudioPortsConfig>()
        .expect("the plugin implements audio-ports-config");
    let handle = host.instance.plugin_handle();
    let mut buffer = AudioPortsConfigBuffer::new();
    (0..ext.count(&handle))
        .map(|index| {
            let config = ext
                .get(&handle, index, &mut buffer)
                .expect("a configuration");
            let count = |port: Option<clack_extensions::audio_ports_config::MainPortInfo>| {
                port.map_or(0, |p| p.channel_count)
            };
            (
                config.id,
                count(config.main_input),
                count(config.main_output),
            )
        })
        .collect()
}

fn select(host: &mut TestHost, id: ClapId) {
    let ext = host
        .instance
        .plugin_shared_handle()
        .get_extension::<PluginAudioPortsConfig>()
        .expect("the plugin implements audio-ports-config");
    ext.select(&host.instance.plugin_handle(), id)
        .expect("the plugin selects an offered configuration");
}

/// Processes `input` (one slice per input channel) in ragged blocks on the audio thread and
/// returns `num_outputs` channels. The outputs are poisoned with NaN before every call.
fn process_wide(host: &mut TestHost, input: &[Vec<f32>], num_outputs: usize) -> Vec<Vec<f32>> {
    let silence = vec![vec![0.0f32; input[0].len()]; SIDECHAIN_CHANNELS];
    process_keyed(host, input, &silence, num_outputs)
}

/// [`process_wide`] with `key` (stereo, as long as the input) on the sidechain port.
fn process_keyed(
    host: &mut TestHost,
    input: &[Vec<f32>],
    key: &[Vec<f32>],
    num_outputs: usize,
) -> Vec<Vec<f32>> {
    let total = input[0].len();
    let max_frames = host.max_frames as usize;
    let sizes = block_sizes(total, max_frames);
    let steady_time = host.steady_time;
    host.steady_time += total as u64;
    let processor = host.processor.as_mut().expect("the plugin is active");
    let outputs = on_audio_thread(|| {
        let started = processor
            .ensure_processing_started()
            .expect("the plugin starts processing");
        let mut in_buffers = vec![vec![0.0f32; max_frames]; input.len()];
        // The stereo sidechain port: CLAP hosts pass every port.
        let mut side_buffers = vec![vec![0.0f32; max_frames]; SIDECHAIN_CHANNELS];
        let mut out_buffers = vec![vec![0.0f32; max_frames]; num_outputs];
        let mut in_ports = AudioPorts::with_capacity(input.len() + SIDECHAIN_CHANNELS, 2);
        let mut out_ports = AudioPorts::with_capacity(num_outputs, 1);
        let mut outputs = vec![Vec::with_capacity(total); num_outputs];
        let mut start = 0;
        for &len in &sizes {
            for (buffer, channel) in in_buffers.iter_mut().zip(input) {
                buffer[..len].copy_from_slice(&channel[start..start + len]);
            }
            for (buffer, channel) in side_buffers.iter_mut().zip(key) {
                buffer[..len].copy_from_slice(&channel[start..start + len]);
            }
            out_buffers.iter_mut().for_each(|b| b.fill(f32::NAN));
            let main: Vec<_> = (in_buffers.iter_mut())
                .map(|b| InputChannel::variable(&mut b[..len]))
                .collect();
            let side: Vec<_> = (side_buffers.iter_mut())
                .map(|b| InputChannel::variable(&mut b[..len]))
                .collect();
            let audio_inputs =
                in_ports.with_input_buffers([main, side].map(|channels| AudioPortBuffer {
                    latency: 0,
                    channels: AudioPortBufferType::f32_input_only(channels),
                }));
            let mut audio_outputs = out_ports.with_output_buffers([AudioPortBuffer {
                latency: 0,
                channels: AudioPortBufferType::f32_output_only(
                    out_buffers.iter_mut().map(|b| &mut b[..len]),
                ),
            }]);
            started
                .process(
                    &audio_inputs,
                    &mut audio_outputs,
                    &EventBuffer::new().as_input(),
                    &mut OutputEvents::void(),
                    Some(steady_time + start as u64),
                    None,
                )
                .expect("process() succeeds");
            for (output, buffer) in outputs.iter_mut().zip(&out_buffers) {
                output.extend_from_slice(&buffer[..len]);
            }
            start += len;
        }
        outputs
    });
    host.poll();
    outputs
}

fn energy(channel: &[f32]) -> f64 {
    channel.iter().map(|&s| f64::from(s) * f64::from(s)).sum()
}

/// Every offered bus, in order: it activates, plays finite audio, and (fully wet) the reverb
/// reaches exactly the outputs its mapping feeds: every one but an LFE.
#[test]
fn every_offered_bus_plays_the_reverb_where_the_mapping_says() {
    let mut host = TestHost::new();
    let listed = configs(&mut host);
    let expected: Vec<(u32, u32)> = AUDIO_IO_LAYOUTS
        .iter()
        .map(|l| {
            let count = |c: Option<std::num::NonZeroU32>| c.map_or(0, |c| c.get());
            (count(l.main_input_channels), count(l.main_output_channels))
        })
        .collect();
    let found: Vec<(u32, u32)> = listed.iter().map(|&(_, i, o)| (i, o)).collect();
    assert_eq!(found, expected, "the configurations hosts see");
    assert!(found.contains(&(12, 12)) && found.contains(&(2, 16)) && found.contains(&(49, 49)));

    let (mix, ir) = (host.param(MIX), host.param(IMPULSE_RESPONSE));
    host.flush(&[(mix, 1.0), (ir, IR_SMALL_ROOM)]);
    let len = SAMPLE_RATE as usize / 8;
    for &(id, inputs, outputs) in &listed {
        select(&mut host, id);
        host.activate(256);
        let input: Vec<Vec<f32>> = (0..inputs)
            .map(|c| noise(len, 0.5, RNG_SEED + 40 + u64::from(c)))
            .collect();
        let output = process_wide(&mut host, &input, outputs as usize);
        host.deactivate();
        assert!(
            output.iter().flatten().all(|s| s.is_finite()),
            "{inputs} -> {outputs}"
        );
        let bus = Bus::new(inputs as usize, outputs as usize, ChannelFormat::Auto);
        let mapping = map(IrLayout::Stereo, bus).expect("the built-ins play on every bus");
        for (output_idx, channel) in output.iter().enumerate() {
            let fed = mapping.paths.iter().any(|p| p.output == output_idx);
            assert_eq!(
                energy(channel) > 1e-3,
                fed,
                "{bus}: output {output_idx} (fed by the mapping: {fed})"
            );
        }
    }
    host.assert_threading_respected();
}

/// The sidechain keys the ducking (Duck 12 dB, Duck key Sidechain, fully wet) on buses from
/// mono to 49 channels: while a loud key plays and the quiet input stays under the threshold,
/// every output is 12 dB (± 0.5) under the same run with a silent key.
#[test]
fn the_sidechain_keys_the_ducking_on_every_width() {
    let mut host = TestHost::new();
    let listed = configs(&mut host);
    let (mix, duck, key_param) = (host.param(MIX), host.param("Duck"), host.param("Duck key"));
    host.flush(&[(mix, 1.0), (duck, 0.5), (key_param, 1.0)]);
    let len = SAMPLE_RATE as usize / 2;
    let loud: Vec<Vec<f32>> = (0..2).map(|c| noise(len, 0.5, RNG_SEED + 60 + c)).collect();
    let silent = vec![vec![0.0f32; len]; SIDECHAIN_CHANNELS];
    for widths in [(1, 1), (2, 2), (1, 2), (12, 12), (2, 16), (49, 49)] {
        let &(id, inputs, outputs) = listed
            .iter()
            .find(|&&(_, i, o)| (i, o) == widths)
            .expect("an offered bus");
        select(&mut host, id);
        let input: Vec<Vec<f32>> = (0..inputs)
            .map(|c| noise(len, 0.01, RNG_SEED + 70 + u64::from(c)))
            .collect();
        let mut runs = [&silent, &loud].map(|key| {
            host.activate(256);
            let output = process_keyed(&mut host, &input, key, outputs as usize);
            host.deactivate();
            output
        });
        let [plain, ducked] = &mut runs;
        // After the attack (10 ms), on every output the reverb reaches.
        let after = SAMPLE_RATE as usize / 20;
        for (output_idx, (p, d)) in plain.iter().zip(ducked.iter()).enumerate() {
            let (p, d) = (energy(&p[after..]), energy(&d[after..]));
            if p < 1e-12 {
                continue;
            }
            let db = 10.0 * (d / p).log10();
            assert!(
                (db + 12.0).abs() <= 0.5,
                "{inputs} -> {outputs}, output {output_idx}: {db:.2} dB"
            );
        }
    }
}

/// A multichannel WAV of `channels` decaying-noise channels, written to the temporary folder.
fn write_ir(name: &str, channels: &[Vec<f32>]) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("longtail-layouts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temporary folder");
    let path = dir.join(name);
    longtail::ir::wav::write_f32(&path, SAMPLE_RATE, channels).expect("writes the IR");
    path
}

/// This host's state, pointing the plugin at `path` (a version 0 `ir-file` with a path and no
/// copy, as a hand-written state may) with the IR source on File. nice-plug's CLAP state is
/// the JSON's length (8 bytes, little-endian), then the JSON.
fn state_with_file(host: &mut TestHost, path: &std::path::Path) -> Vec<u8> {
    let bytes = host.save_state();
    let mut state: serde_json::Value =
        serde_json::from_slice(&bytes[8..]).expect("the state is JSON");
    let saved = serde_json::json!({ "paths": [path.display().to_string()] });
    state["fields"]["ir-file"] = serde_json::Value::String(saved.to_string());
    state["params"]["irsrc"] = serde_json::json!({ "string": "file" });
    let json = serde_json::to_vec(&state).expect("JSON");
    let mut bytes = (json.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(&json);
    bytes
}

/// Plays until `ir` has taken over: a quarter second of silence (the old tails ring out),
/// then half a second of noise whose output must be the float64 convolution the mapping
/// describes; again while the swap is still on its way.
fn play_and_check(host: &mut TestHost, ir: &Ir, label: &str) {
    let (inputs, outputs) = (4, 4);
    let ambisonics = Bus::new(inputs, outputs, ChannelFormat::Ambisonics);
    let mapping = map(ir.layout, ambisonics).expect("maps");
    // The mapping as a matrix IR, checked against the convolution written from the layout.
    let mut channels = vec![vec![0.0f32; ir.len()]; inputs * outputs];
    for path in &mapping.paths {
        for &(channel, w) in &path.terms {
            for (sum, &t) in channels[path.input * outputs + path.output]
                .iter_mut()
                .zip(&ir.channels[channel])
            {
                *sum += w * t;
            }
        }
    }
    let layout = IrLayout::matrix(inputs, outputs).expect("4 x 4");
    let matrix = Ir::with_layout("m", SAMPLE_RATE, layout, channels).expect("valid");
    let len = SAMPLE_RATE as usize / 2;
    let input: Vec<Vec<f32>> = (0..inputs)
        .map(|c| noise(len, 0.5, RNG_SEED + 60 + c as u64))
        .collect();
    let expected = matrix_reference(&matrix, &input, len);
    let silence: Vec<Vec<f32>> = (0..inputs).map(|_| vec![0.0; len / 2]).collect();
    let started = Instant::now();
    loop {
        process_wide(host, &silence, outputs);
        let output = process_wide(host, &input, outputs);
        let worst = output
            .iter()
            .zip(&expected)
            .map(|(actual, expected)| snr_db(actual, expected))
            .fold(f64::INFINITY, f64::min);
        if worst > MIN_SNR_DB {
            return;
        }
        assert!(
            started.elapsed() < PATIENCE,
            "{label}: the output is never the mapping's convolution (worst {worst:.1} dB)"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// On a 4 -> 4 bus read as Ambisonics: a 16-channel file (a dense 4 x 4 matrix) plays as one,
/// a 4-channel AmbiX file swaps in while playing (one channel per output), then a stereo file
/// (its mid on every channel); the Channel format survives save and load.
#[test]
fn multichannel_files_swap_on_an_ambisonics_bus_and_the_format_is_saved() {
    let len = SAMPLE_RATE as usize / 20;
    let dense: Vec<Vec<f32>> = (0..16)
        .map(|c| decaying_noise(len, RNG_SEED + 70 + c))
        .collect();
    let ambix: Vec<Vec<f32>> = (0..4)
        .map(|c| decaying_noise(len / 2, RNG_SEED + 90 + c))
        .collect();
    let stereo: Vec<Vec<f32>> = (0..2)
        .map(|c| decaying_noise(len, RNG_SEED + 95 + c))
        .collect();
    let files = [
        (write_ir("dense-4x4.wav", &dense), dense),
        (write_ir("ambix-foa.wav", &ambix), ambix),
        (write_ir("stereo.wav", &stereo), stereo),
    ];

    let mut host = TestHost::new();
    let (mix, format) = (host.param(MIX), host.param(CHANNEL_FORMAT));
    host.flush(&[(mix, 1.0), (format, 2.0)]);
    let quad = configs(&mut host)
        .into_iter()
        .find(|&(_, i, o)| (i, o) == (4, 4))
        .expect("4 -> 4 is offered");
    select(&mut host, quad.0);
    let first = state_with_file(&mut host, &files[0].0);
    host.load_state(&first);
    host.activate(MAX_BLOCK);
    for (idx, (path, channels)) in files.iter().enumerate() {
        let path = path.as_path();
        if idx > 0 {
            let next = state_with_file(&mut host, path);
            host.load_state(&next);
        }
        // Files play with the file edits' defaults (auto trim, normalised).
        let (source, _) = longtail::ir::load(&[path]).expect("loads");
        assert_eq!(&source.channels, channels);
        let (ir, _) =
            edit::prepare(&source, &EditSettings::FILE_DEFAULT, SAMPLE_RATE).expect("prepares");
        play_and_check(&mut host, &ir, &path.display().to_string());
    }

    // The setting is saved with the project and read back.
    let saved = host.save_state();
    let mut restored = TestHost::new();
    restored.load_state(&saved);
    let format = restored.param(CHANNEL_FORMAT);
    let value = restored.value(format);
    assert!((value - 2.0).abs() < 1e-6, "{value}");
    assert_eq!(restored.value_to_text(format, value), "Ambisonics");
    let fresh = TestHost::new().value(format);
    assert_eq!(restored.value_to_text(format, fresh), "Auto");
    host.assert_threading_respected();
}
