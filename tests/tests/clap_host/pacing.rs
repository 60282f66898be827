//! A host in real-time mode that runs ahead of real time (REAPER's anticipative processing,
//! Bitwig): 0.2, 0.5 and 1 s ahead at each of 3 starts, with blocks of 64, 128, 512 and 1024
//! samples and a ragged sequence, for every built-in IR. The plugin's output must be the
//! offline render's (an instance in offline render mode, the same blocks): >= 100 dB, fully
//! wet. A late result or a dropped chunk leaves a hole of hundreds of samples in the reverb,
//! tens of dB below that. `process()` runs under `assert_process_allocs`, waits included.
//! Each runs alone on the machine (no other test's host exists meanwhile, `host::alone`).

use clack_extensions::render::RenderMode;
use longtail::ir::builtin::BuiltinIr;
use longtail_tests::ahead::{BLOCKS, LEADS_S, PACED_S, PAUSE, STARTS};
use longtail_tests::{AheadHost, MIN_SNR_DB, RNG_SEED, snr_db};

use super::*;

/// A host with `builtin` fully wet, in `mode`, active with blocks up to `max_block`.
fn host_with(builtin: BuiltinIr, mode: RenderMode, max_block: usize) -> TestHost {
    let mut host = TestHost::new();
    host.set_render_mode(mode);
    let (ir, mix) = (host.param(IMPULSE_RESPONSE), host.param(MIX));
    let index = BuiltinIr::ALL.iter().position(|&b| b == builtin).unwrap();
    host.flush(&[(ir, index as f64), (mix, 1.0)]);
    host.activate(max_block as u32);
    host
}

fn ahead_of_real_time_equals_the_offline_render(builtin: BuiltinIr) {
    // Alone on the machine: see `host::alone`.
    let _machine = alone();
    for blocks in BLOCKS {
        let hosts: Vec<AheadHost> = LEADS_S
            .iter()
            .map(|&lead_s| AheadHost::new(SAMPLE_RATE, lead_s, PACED_S, PAUSE))
            .collect();
        let lens: Vec<usize> = hosts.iter().map(|host| host.total(STARTS)).collect();
        let total: usize = lens.iter().sum();
        let input = stereo_noise(total, RNG_SEED + 70);
        let sizes: Vec<Vec<usize>> = lens.iter().map(|&len| blocks.sizes(len)).collect();

        let mut offline = host_with(builtin, RenderMode::Offline, blocks.max());
        let mut expected = [Vec::new(), Vec::new()];
        let mut realtime = host_with(builtin, RenderMode::Realtime, blocks.max());
        let mut got = [Vec::new(), Vec::new()];
        let mut pos = 0;
        for ((mut pacer, len), sizes) in hosts.into_iter().zip(&lens).zip(&sizes) {
            let part = [&input[0][pos..pos + len], &input[1][pos..pos + len]];
            let reference = offline.process(part, sizes, &[]);
            let run = realtime.process_paced(part, sizes, &mut |start| pacer.before(start));
            assert_finite(&run);
            for channel in 0..2 {
                expected[channel].extend_from_slice(&reference.outputs[channel]);
                got[channel].extend_from_slice(&run.outputs[channel]);
            }
            pos += len;
        }
        for channel in 0..2 {
            let want: Vec<f64> = expected[channel].iter().map(|&s| f64::from(s)).collect();
            let snr = snr_db(&got[channel], &want);
            let case = format!(
                "{} {blocks:?}, {LEADS_S:?} s ahead x{STARTS}, channel {channel}: {snr:.1} dB",
                builtin.id()
            );
            println!("{case}");
            assert!(snr >= MIN_SNR_DB, "{case} against the offline render");
        }
        realtime.assert_threading_respected();
    }
}

mod ahead_of_real_time_is_the_offline_render {
    longtail_tests::test_every_builtin_ir!(super::ahead_of_real_time_equals_the_offline_render);
}
