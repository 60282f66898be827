//! `bench`: the harness contract, host threads, pacing, fixed work, harness and matrix modes.

use super::*;

#[test]
fn bench_prints_the_harness_contract_fields() {
    let stdout = cli_stdout(&[
        "bench",
        "--ir-seconds",
        "0.5",
        "--block",
        "64,100",
        "--seconds",
        "1",
        "--json",
    ]);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    for field in [
        "\"kind\":\"perf\"",
        "\"engine\":\"longtail\"",
        "\"variant\":",
        "\"backend\":\"cpu\"",
        "\"block\":64",
        "\"rate\":48000",
        "\"channels\":2",
        "\"ir_taps\":24000",
        "\"instances\":1",
        "\"audio_s\":",
        "\"cpu_s\":",
        "\"rtf\":",
        "\"threads\":",
        "\"blk_med_us\":",
        "\"blk_p99_us\":",
        "\"blk_max_us\":",
        "\"oncpu_p99_us\":",
        "\"oncpu_max_us\":",
        "\"offcpu_max_us\":",
        "\"steal_ms\":",
        "\"deadline_us\":1333.33",
        "\"max_over_deadline\":",
        "\"latency_samples\":0",
        "\"late_blocks\":0",
        // Offline mode wakes the workers as it waits for them; only real-time wakes count.
        "\"wakes_per_s\":0.0",
    ] {
        assert!(lines[0].contains(field), "{field} missing in {}", lines[0]);
    }
    // The layout is the plan's, head first.
    let plan = longtail::engine::PartitionPlan::new(
        24_000,
        64,
        longtail::engine::LatencyMode::Zero,
        longtail::engine::PlanLimits::default(),
    );
    let levels: Vec<String> = plan
        .levels
        .iter()
        .map(|l| format!("{}x{}", l.partition_size, l.num_partitions))
        .collect();
    let layout = format!("\"layout\":\"head64 {}\"", levels.join(" "));
    assert!(
        lines[0].contains(&layout),
        "{layout} missing in {}",
        lines[0]
    );
    assert!(lines[1].contains("\"block\":100"));
}

/// `--host-threads` spreads the instances over paced host threads: one line per thread with its
/// own share and deadline statistics, then the session's line with the sums.
#[test]
fn bench_spreads_instances_over_host_threads() {
    let stdout = cli_stdout(&[
        "bench",
        "--ir-seconds",
        "0.2",
        "--instances",
        "5",
        "--host-threads",
        "2",
        "--block",
        "128",
        "--seconds",
        "0.5",
        "--paced",
        "--backend",
        "cpu",
        "--json",
    ]);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    assert!(
        lines[0].contains("\"host_threads\":2,\"host_thread\":0"),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].contains("\"host_threads\":2,\"host_thread\":1"),
        "{}",
        lines[1]
    );
    assert!(
        lines[2].contains("\"host_threads\":2,\"host_thread\":null"),
        "{}",
        lines[2]
    );
    assert_eq!(json_number(lines[0], "instances"), 3.0);
    assert_eq!(json_number(lines[1], "instances"), 2.0);
    assert_eq!(json_number(lines[2], "instances"), 5.0);
    let worst_p99 = json_number(lines[0], "blk_p99_us").max(json_number(lines[1], "blk_p99_us"));
    assert_eq!(json_number(lines[2], "blk_p99_us"), worst_p99);
    let lates = json_number(lines[0], "late_blocks") + json_number(lines[1], "late_blocks");
    assert_eq!(json_number(lines[2], "late_blocks"), lates);
    assert_eq!(json_number(lines[2], "audio_s"), 0.5);

    let refused = cli(&["bench", "--host-threads", "0", "--json"]);
    assert!(!refused.status.success());
}

/// `--pace` names how the host releases blocks, and `--check` compares the first instance's
/// output with its offline render: an offline run is that render exactly. (Whether a faster host
/// loses results depends on the machine's timing, so only the fields are checked for it.)
#[test]
fn bench_paces_like_the_hosts_and_checks_against_the_offline_render() {
    let run = |pace: &str| {
        let stdout = cli_stdout(&[
            "bench",
            "--ir-seconds",
            "0.3",
            "--block",
            "64",
            "--seconds",
            "0.5",
            "--backend",
            "cpu",
            "--pace",
            pace,
            "--check",
            "--json",
        ]);
        assert_eq!(stdout.lines().count(), 1, "{stdout}");
        stdout.trim().to_string()
    };
    let offline = run("offline");
    assert!(
        offline.contains("\"pace\":\"offline\",\"snr_vs_offline_db\":300.0"),
        "{offline}"
    );
    assert!(offline.contains("\"paced\":false"), "{offline}");
    for pace in ["fast", "split:256", "ahead:0.1x2"] {
        let line = run(pace);
        assert!(line.contains(&format!("\"pace\":\"{pace}\"")), "{line}");
        assert!(line.contains("\"paced\":true"), "{line}");
        let snr = json_number(&line, "snr_vs_offline_db");
        assert!((-300.0..=300.0).contains(&snr), "{line}");
    }
    let plain = cli_stdout(&["bench", "--ir-seconds", "0.1", "--seconds", "0.1", "--json"]);
    assert!(plain.contains("\"snr_vs_offline_db\":null"), "{plain}");
    for bad in ["ahead:x", "ahead:0.2x0", "split:0", "slow"] {
        let refused = cli(&["bench", "--pace", bad]);
        assert!(!refused.status.success(), "{bad} was taken");
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert!(stderr.contains("is not a pace"), "{bad}: {stderr}");
    }
}

/// A number field of a JSON line.
fn json_number(line: &str, field: &str) -> f64 {
    let key = format!("\"{field}\":");
    let start = line
        .find(&key)
        .unwrap_or_else(|| panic!("{field} missing in {line}"))
        + key.len();
    let rest = &line[start..];
    let end = rest.find([',', '}']).unwrap_or(rest.len());
    rest[..end]
        .parse()
        .unwrap_or_else(|_| panic!("{field} is not a number in {line}"))
}

#[test]
fn bench_fixed_work_measures_the_machine_with_the_same_fields() {
    // 200 us calls for 2 s of audio: 0.3 s of spinning. Windows' thread clock (and Wine's) only
    // advances at the scheduler's tick (10 to 15.6 ms), so a call reads 0 or a whole tick; in
    // 0.5 s of 50 us calls (19 ms of work) it could miss every call, as it once did in CI.
    // Here about twenty ticks land, each inside a call four times in five.
    let stdout = cli_stdout(&[
        "bench",
        "--fixed-work-us",
        "200",
        "--block",
        "64",
        "--seconds",
        "2",
        "--warmup-s",
        "0",
        "--json",
    ]);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 1, "{stdout}");
    let line = lines[0];
    assert!(line.contains("\"engine\":\"fixed-work\""), "{line}");
    assert!(
        line.contains("\"layout\":\"fixed work 200.0 us\""),
        "{line}"
    );
    assert_eq!(json_number(line, "ir_taps"), 0.0);
    assert_eq!(json_number(line, "threads"), 1.0);
    // Every call spins at least its 200 us, and the thread's own CPU time covers the work.
    assert!(json_number(line, "blk_med_us") >= 200.0, "{line}");
    assert!(json_number(line, "cpu_main_s") >= 0.15, "{line}");
    assert!(json_number(line, "oncpu_max_us") > 0.0, "{line}");
    assert!(json_number(line, "offcpu_max_us") >= 0.0, "{line}");

    let refused = cli(&["bench", "--fixed-work-us=-3", "--json"]);
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("--fixed-work-us") && stderr.contains("microseconds"),
        "{stderr}"
    );
}

/// `--latency N`: the offload mode, reported in `latency_samples`, with no head and every
/// level on a worker thread.
#[test]
fn bench_offload_reports_its_latency_and_runs_every_level_on_workers() {
    let stdout = cli_stdout(&[
        "bench",
        "--ir-seconds",
        "1",
        "--block",
        "64",
        "--seconds",
        "0.5",
        "--latency",
        "2048",
        "--backend",
        "cpu",
        "--json",
    ]);
    let line = stdout.lines().next().expect("a JSON line");
    assert_eq!(json_number(line, "latency_samples"), 2048.0, "{line}");
    assert!(line.contains("\"layout\":\"head0 256x"), "{line}");
    let plan = longtail::engine::PartitionPlan::new(
        48_000,
        64,
        longtail::engine::LatencyMode::Offload(2048),
        longtail::engine::PlanLimits::default(),
    );
    // The calling thread and one worker per level.
    assert_eq!(
        json_number(line, "threads"),
        1.0 + plan.levels.len() as f64,
        "{line}"
    );
}

#[test]
fn bench_harness_mode_writes_the_convolution() {
    let dir = temp_dir("bench");
    let input = [noise(4800, 30, 0.1), noise(4800, 31, 0.1)];
    let ir = [noise(1000, 32, 0.2), noise(1000, 33, 0.2)];
    write_raw(&dir.join("in.f32"), &input);
    write_raw(&dir.join("ir.f32"), &ir);
    let out = dir.join("out.f32");
    let stdout = cli_stdout(&[
        "bench",
        "--input",
        dir.join("in.f32").to_str().unwrap(),
        "--ir",
        dir.join("ir.f32").to_str().unwrap(),
        "--block",
        "128",
        "--rate",
        "48000",
        "--channels",
        "2",
        "--warmup-s",
        "0",
        "--variant",
        "t",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(stdout.contains("\"variant\":\"t\""));
    // Timed as the peers' harnesses time their blocks: no thread-clock reads around the calls,
    // so no per-call CPU figures (the generated workload has them, see above).
    for field in [
        "cpu_process_s",
        "rtf_process",
        "oncpu_p99_us",
        "oncpu_max_us",
        "offcpu_max_us",
        "oncpu_max_over_deadline",
    ] {
        assert!(
            stdout.contains(&format!("\"{field}\":null")),
            "{field}: {stdout}"
        );
    }
    // The whole run's CPU figures stay: the peers' scripts read them. Only `>= 0`, since
    // Windows' CPU clocks tick at 15.6 ms and this 0.1 s run may read 0 there.
    for field in ["cpu_s", "rtf"] {
        let value = json_number(&stdout, field);
        assert!(value.is_finite() && value >= 0.0, "{field}: {stdout}");
    }
    assert_eq!(std::fs::metadata(&out).unwrap().len(), 4800 * 2 * 4);
    let got = read_raw(&out, 2);
    for (channel, actual) in got.iter().enumerate() {
        let mut expected = direct(&input[channel], &ir[channel]);
        expected.truncate(4800);
        let snr = snr_db(actual, &expected);
        assert!(snr > 100.0, "channel {channel}: SNR {snr:.1} dB");
    }
}

/// Matrix mode of the harness contract: `--channels 3 --outputs 2` reads an IR of 6 channels
/// (channel i*2+o for input i to output o) and writes 2 output channels, each the sum of its
/// paths; without `--outputs`, 3 channels are the diagonal. The JSON line says both.
#[test]
fn bench_matrix_mode_convolves_every_path() {
    let dir = temp_dir("bench-matrix");
    let input: Vec<Vec<f32>> = (0..3).map(|c| noise(2400, 40 + c, 0.1)).collect();
    let ir: Vec<Vec<f32>> = (0..6).map(|c| noise(700, 50 + c, 0.2)).collect();
    write_raw(&dir.join("in.f32"), &input);
    for (outputs, ir_channels) in [(Some("2"), 6), (None, 3)] {
        write_raw(&dir.join("ir.f32"), &ir[..ir_channels]);
        let (input_path, ir_path, out) =
            (dir.join("in.f32"), dir.join("ir.f32"), dir.join("out.f32"));
        let mut args = vec![
            "bench",
            "--input",
            input_path.to_str().unwrap(),
            "--ir",
            ir_path.to_str().unwrap(),
            "--block",
            "100",
            "--channels",
            "3",
            "--warmup-s",
            "0",
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend(outputs.map(|m| ["--outputs", m]).into_iter().flatten());
        let line: serde_json::Value = serde_json::from_str(cli_stdout(&args).trim()).unwrap();
        let num_outputs = if outputs.is_some() { 2 } else { 3 };
        assert_eq!(line["channels"], 3, "{line}");
        assert_eq!(line["outputs"], num_outputs, "{line}");
        assert_eq!(line["paths"], ir_channels, "{line}");
        let got = read_raw(&out, num_outputs);
        for (o, actual) in got.iter().enumerate() {
            let mut expected = vec![0.0f64; 2400];
            for (i, x) in input.iter().enumerate() {
                let h = if outputs.is_some() {
                    &ir[i * 2 + o]
                } else if i == o {
                    &ir[i]
                } else {
                    continue;
                };
                expected
                    .iter_mut()
                    .zip(direct(x, h))
                    .for_each(|(e, v)| *e += v);
            }
            let snr = snr_db(actual, &expected);
            assert!(snr > 120.0, "{outputs:?} output {o}: SNR {snr:.1} dB");
        }
    }
    // More than 64 a side is refused by the arguments.
    let result = cli(&["bench", "--channels", "65", "--outputs", "2"]);
    assert!(!result.status.success());
}
