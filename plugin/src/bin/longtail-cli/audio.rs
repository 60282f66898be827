//! The runners of the subcommands that read or write audio files: `render` (a file through
//! the plugin's engine), `ir-info` (what an IR file holds and what the default edits would do),
//! `ir-list` (the IR library's scan of folders) and `demo` (the built-in dry signal through
//! every built-in IR).
//!
//! Uses the library's IR loading, edits, WAV writing and offline render, and the demo's dry
//! signal from `longtail::tools`.

use std::path::{Path, PathBuf};

use longtail::audio::ducker::DuckSettings;
use longtail::engine::{Executor, GpuPolicy, LatencyMode, MAX_CHANNELS};
use longtail::ir::builtin::BuiltinIr;
use longtail::ir::decay::bands::Bands;
use longtail::ir::decay::estimate::estimate;
use longtail::ir::decode::{self, Limits};
use longtail::ir::edit::{self, EditSettings};
use longtail::ir::mapping::{Bus, ChannelFormat, check_file_mask, map, wav_mask};
use longtail::ir::{Ir, IrError, single_file_mask, speakers, wav};
use longtail::render::{Blend, BlockSizes, RenderOptions, RenderReport, render, render_blended};
use longtail::tools::demo;

/// A second IR's files and its share of the wet signal, `0..=1` (render's `--ir-b`, `--blend`).
pub(crate) struct SecondIr<'a> {
    pub(crate) paths: &'a [&'a Path],
    pub(crate) blend: f32,
}

pub(crate) fn run_render(
    ir_paths: &[&Path],
    second: Option<SecondIr<'_>>,
    input_path: &Path,
    key_path: Option<&Path>,
    output_path: &Path,
    options: RenderOptions,
    edits: &EditSettings,
) -> Result<(), String> {
    let (source, infos) = longtail::ir::load(ir_paths).map_err(|err| format!("IR: {err}"))?;
    let input = read_signal(input_path, "input")?;
    let key = match key_path {
        Some(path) => {
            let key = read_signal(path, "key")?;
            if key.sample_rate != input.sample_rate {
                return Err(format!(
                    "key '{}' is at {} Hz and the input at {} Hz; use one rate",
                    path.display(),
                    key.sample_rate,
                    input.sample_rate
                ));
            }
            key.channels
        }
        None => Vec::new(),
    };
    let outputs = options
        .outputs
        .unwrap_or_else(|| longtail::render::num_outputs_for(input.channels.len(), &source));
    let bus = Bus::new(input.channels.len(), outputs, options.format);
    check_file_mask(single_file_mask(&infos), source.channels.len(), bus)
        .map_err(|err| format!("IR: {err}"))?;
    if options.width != 1.0 && !longtail::audio::processor::width_applies(outputs) {
        return Err(format!(
            "--width applies to stereo outputs (1 -> 2 and 2 -> 2 buses); this render's bus is \
             {} -> {outputs}",
            input.channels.len()
        ));
    }
    let options = RenderOptions {
        outputs: Some(outputs),
        ..options
    };
    // The IR follows the input's rate, as it follows the session's rate in the plugin.
    let (ir, report) =
        edit::prepare(&source, edits, input.sample_rate).map_err(|err| format!("IR: {err}"))?;
    // The second IR: the same edits, the same bus.
    let second_ir = match &second {
        Some(second) => {
            let (source_b, infos_b) =
                longtail::ir::load(second.paths).map_err(|err| format!("IR B: {err}"))?;
            check_file_mask(single_file_mask(&infos_b), source_b.channels.len(), bus)
                .map_err(|err| format!("IR B: {err}"))?;
            let (ir_b, _) = edit::prepare(&source_b, edits, input.sample_rate)
                .map_err(|err| format!("IR B: {err}"))?;
            Some((ir_b, second.blend))
        }
        None => None,
    };
    let blend = second_ir.as_ref().map(|(ir_b, blend)| Blend {
        ir: ir_b,
        blend: *blend,
    });
    let (output, render_report) = render_blended(&ir, blend, &input.channels, &key, options)
        .map_err(|err| err.to_string())?;
    wav::write_f32_masked(output_path, input.sample_rate, &output, wav_mask(bus))
        .map_err(|err| format!("cannot write '{}': {err}", output_path.display()))?;
    println!(
        "rendered {} -> {} ({} ch, {} frames, IR {} ch {} taps, {})",
        input_path.display(),
        output_path.display(),
        output.len(),
        output.first().map_or(0, Vec::len),
        ir.channels.len(),
        ir.len(),
        ir.layout.name()
    );
    if let Some((from, to)) = report.resampled {
        println!("  IR resampled from {from} Hz to {to} Hz");
    }
    print_report(&render_report);
    Ok(())
}

/// Reads an audio file the render plays (`what`: "input" or "key"): 1 to 64 channels, at least
/// one frame, every sample finite.
fn read_signal(path: &Path, what: &str) -> Result<decode::Audio, String> {
    let limits = Limits {
        max_channels: MAX_CHANNELS,
        max_seconds: None,
    };
    let (audio, _) = decode::read(path, limits).map_err(|err| match err {
        IrError::UnsupportedChannels(n) => {
            format!(
                "{what} '{}' has {n} channels; supported are 1 to {MAX_CHANNELS}",
                path.display()
            )
        }
        other => format!("{what}: {other}"),
    })?;
    if audio.num_frames() == 0 {
        return Err(format!("{what} '{}' has no samples", path.display()));
    }
    if let Some((channel, frame)) = first_non_finite(&audio.channels) {
        return Err(format!(
            "{what} '{}' contains a non-finite sample (NaN or infinity) at frame {frame}, channel {channel}",
            path.display()
        ));
    }
    Ok(audio)
}

pub(crate) fn run_ir_info(
    paths: &[&Path],
    rate: Option<u32>,
    auto_trim_db: f64,
    bus: Option<Bus>,
) -> Result<(), String> {
    let (ir, infos) = longtail::ir::load(paths).map_err(|err| err.to_string())?;
    for (path, info) in paths.iter().zip(&infos) {
        println!("file:       {}", path.display());
        println!("format:     {} ({} bytes)", info.format, info.file_bytes);
        println!("rate:       {} Hz", info.sample_rate);
        println!("channels:   {}", info.num_channels);
        if let Some(mask) = info.channel_mask {
            println!("mask:       {mask:#x} ({})", speakers::mask_names(mask));
        }
    }
    let peak = edit::peak(&ir.channels);
    println!("length:     {} frames ({:.3} s)", ir.len(), ir.seconds());
    println!("peak:       {:.2} dBFS", 20.0 * peak.max(1e-30).log10());
    let layout = match (ir.layout, paths.len()) {
        (longtail::ir::IrLayout::TrueStereo, 2) => {
            "true stereo from two files (LL, LR from the first; RL, RR from the second)".into()
        }
        (longtail::ir::IrLayout::TrueStereo, _) => "true stereo (LL, LR, RL, RR)".into(),
        (longtail::ir::IrLayout::Matrix { .. }, files) if files > 1 => {
            format!("{} from one file per input", ir.layout)
        }
        (longtail::ir::IrLayout::Channels(_), _) => {
            format!("{}: its meaning comes from the bus (--outputs)", ir.layout)
        }
        (layout, _) => layout.to_string(),
    };
    println!("layout:     {layout}");
    if let Some(bus) = bus {
        let mapped = check_file_mask(single_file_mask(&infos), ir.channels.len(), bus)
            .and_then(|()| map(ir.layout, bus))
            .map_err(|err| format!("on {bus}: {err}"))?;
        println!("bus:        {}", mapped.summary(ir.layout));
        for line in mapped.lines() {
            println!("  {line}");
        }
    }
    let session_rate = rate.unwrap_or(ir.sample_rate);
    let edits = EditSettings {
        auto_trim_db: Some(auto_trim_db),
        ..EditSettings::FILE_DEFAULT
    };
    let (prepared, report) =
        edit::prepare(&ir, &edits, session_rate).map_err(|err| err.to_string())?;
    match report.auto_trim_at_s {
        Some(at) => println!(
            "auto trim:  at {auto_trim_db} dB would cut at {at:.3} s (keeps {:.1} % of the length)",
            100.0 * at / ir.seconds()
        ),
        None => println!("auto trim:  at {auto_trim_db} dB would cut nothing"),
    }
    if let Some((from, to)) = report.resampled {
        println!("resample:   {from} Hz -> {to} Hz");
    }
    if let Some(gain_db) = report.normalize_gain_db {
        println!("normalise:  {gain_db:+.2} dB (unit energy per output)");
    }
    println!(
        "prepared:   {} frames ({:.3} s) at {session_rate} Hz",
        prepared.len(),
        prepared.seconds()
    );
    print_decays(&prepared);
    Ok(())
}

/// The decay time per octave band of the prepared IR (125 Hz to 8 kHz), as the decay edit
/// estimates it: a T30 where the band's range allows, else a shorter fit (named).
fn print_decays(ir: &Ir) {
    let octaves = Bands::OCTAVES;
    let decays = estimate(&ir.channels, f64::from(ir.sample_rate), &octaves);
    println!("decay:      band     T60 (fit)       range over floor");
    for decay in decays
        .iter()
        .filter(|d| (125.0..=8_000.0).contains(&d.center_hz))
    {
        let hz = if decay.center_hz >= 1000.0 {
            format!("{:.0}k", decay.center_hz / 1000.0)
        } else {
            format!("{:.0}", decay.center_hz)
        };
        let time = match decay.t60_s {
            Some(t60) => format!("{t60:6.2} s (T{:.0})", decay.fit_db - 5.0),
            None => "     - (no decay)".to_string(),
        };
        println!(
            "            {hz:>5} Hz {time:<16} {:5.1} dB",
            decay.range_db
        );
    }
}

pub(crate) fn run_demo(dir: &Path, rate: u32, blocks: BlockSizes, mix: f32) -> Result<(), String> {
    std::fs::create_dir_all(dir)
        .map_err(|err| format!("cannot create '{}': {err}", dir.display()))?;
    let dry = demo::dry_signal(rate);
    let dry_path = dir.join("dry.wav");
    wav::write_f32(&dry_path, rate, &dry)
        .map_err(|err| format!("cannot write '{}': {err}", dry_path.display()))?;
    println!(
        "dry signal: {} ({:.1} s, stereo, {rate} Hz)",
        dry_path.display(),
        demo::DRY_SECONDS
    );
    let options = RenderOptions {
        blocks,
        mix,
        width: 1.0,
        latency_mode: LatencyMode::Zero,
        executor: Executor::Gpu(GpuPolicy::Auto),
        outputs: None,
        format: ChannelFormat::Auto,
        duck: DuckSettings::OFF,
    };
    for builtin in BuiltinIr::ALL {
        let ir = builtin.generate(rate);
        let (output, report) = render(&ir, &dry, options).map_err(|err| err.to_string())?;
        let ir_path = dir.join(format!("ir-{}.wav", builtin.id()));
        wav::write_f32(&ir_path, rate, &ir.channels)
            .map_err(|err| format!("cannot write '{}': {err}", ir_path.display()))?;
        let path = dir.join(format!("demo-{}.wav", builtin.id()));
        wav::write_f32(&path, rate, &output)
            .map_err(|err| format!("cannot write '{}': {err}", path.display()))?;
        println!(
            "{} ({}, {:.1} s) -> {}",
            builtin.name(),
            ir.layout.name(),
            ir.seconds(),
            path.display()
        );
        print_report(&report);
    }
    Ok(())
}

fn print_report(report: &RenderReport) {
    println!(
        "  {} ({} worker threads) | plan {} | {} paths | {:.1} s audio in {:.3} s CPU \
         (audio thread {:.3} s), real-time factor {:.4}",
        report.backend.reason,
        report.num_workers,
        report.plan,
        report.num_paths,
        report.audio_seconds,
        report.cpu_seconds,
        report.audio_thread_cpu_seconds,
        report.real_time_factor()
    );
}

fn first_non_finite(channels: &[Vec<f32>]) -> Option<(usize, usize)> {
    channels.iter().enumerate().find_map(|(channel, samples)| {
        samples
            .iter()
            .position(|s| !s.is_finite())
            .map(|frame| (channel, frame))
    })
}

/// `ir-list`: the library's scan of `folders`, one line (or JSON object) per file on stdout;
/// folders that could not be read and a scan the limit stopped, one line each on stderr.
pub(crate) fn run_ir_list(folders: &[PathBuf], json: bool) -> Result<(), String> {
    use longtail::library::settings::{LibrarySettings, SettingsFile};
    use longtail::library::{ScanLimits, scan};
    let library_folders;
    let folders = if folders.is_empty() {
        library_folders = match SettingsFile::user() {
            Some(file) => file.load().map_err(|err| err.to_string())?.folders,
            None => LibrarySettings::first_run().folders,
        };
        &library_folders[..]
    } else {
        folders
    };
    let limits = ScanLimits::default();
    let found = scan(folders, limits);
    for entry in &found.entries {
        let (path, name, folder) = (
            entry.path.display().to_string(),
            entry.name(),
            entry.root.display().to_string(),
        );
        let line = match (&entry.info, json) {
            (Ok(info), true) => serde_json::json!({
                "path": path, "name": name, "folder": folder,
                "channels": info.num_channels, "frames": info.num_frames,
                "seconds": entry.seconds(), "sample_rate": info.sample_rate,
                "format": info.format,
            })
            .to_string(),
            (Err(error), true) => {
                serde_json::json!({"path": path, "name": name, "folder": folder, "error": error})
                    .to_string()
            }
            (Ok(info), false) => format!(
                "{path}\t{} ch\t{}\t{} Hz\t{}",
                info.num_channels,
                entry
                    .seconds()
                    .map_or_else(|| "length unknown".to_owned(), |s| format!("{s:.3} s")),
                info.sample_rate,
                info.format
            ),
            (Err(error), false) => format!("{path}\trefused: {error}"),
        };
        println!("{line}");
    }
    for (folder, why) in &found.skipped {
        eprintln!("skipped {}: {why}", folder.display());
    }
    if found.truncated {
        eprintln!("stopped at {} files", limits.max_files);
    }
    match found
        .skipped
        .iter()
        .find(|(folder, _)| folders.contains(folder))
    {
        Some((folder, why)) => Err(format!("cannot read '{}': {why}", folder.display())),
        None => Ok(()),
    }
}
