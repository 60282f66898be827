//! Hostile IR files, deterministically: thousands of mutated files made from the seeds (every
//! format, with tags, pictures, ID3, cue and list chunks; `support/seeds.rs`) from a fixed seed,
//! decoded in memory under the allocation guard. Each is refused with one line naming the file
//! and the reason, or loads as a valid IR; nothing aborts, hangs or prints a panic message.
//! The coverage-guided twin of this test is the `ir_decode` fuzz target (`scripts/fuzz.sh`).

#[path = "support/alloc_guard.rs"]
mod alloc_guard;
#[path = "support/seeds.rs"]
mod seeds;

use std::sync::Once;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use longtail::ir::{self, IrError};
use longtail::rng::Rng;

// Where the workspace's test build turns on nice-plug's `assert_process_allocs`, its allocator
// is the global one, and the guard is the kernel's data limit instead (`support/alloc_guard.rs`).
#[cfg(not(feature = "assert_process_allocs"))]
#[global_allocator]
static GUARD: alloc_guard::AllocGuard = alloc_guard::AllocGuard;

/// Mutated files per seed.
const CASES_PER_SEED: usize = 250;

/// One way of damaging `bytes`, chosen by `case`.
fn mutate(bytes: &mut Vec<u8>, case: usize, next: &mut impl FnMut(usize) -> usize) {
    let header = bytes.len().min(256);
    match case % 6 {
        // A few random bytes in the header.
        0 => {
            for _ in 0..1 + next(4) {
                let at = next(header);
                bytes[at] = next(256) as u8;
            }
        }
        // An extreme 32-bit field, either byte order, anywhere in the header.
        1 => {
            let at = next(header - 4);
            let value = [
                0,
                u32::MAX,
                0x7FFF_FFFF,
                0x8000_0000,
                1,
                next(1 << 31) as u32,
            ][next(6)];
            let field = if next(2) == 0 {
                value.to_le_bytes()
            } else {
                value.to_be_bytes()
            };
            bytes[at..at + 4].copy_from_slice(&field);
        }
        // Cut short.
        2 => bytes.truncate(next(bytes.len())),
        // A run of random bytes anywhere.
        3 => {
            let at = next(bytes.len());
            let len = next(bytes.len() - at);
            bytes[at..at + len]
                .iter_mut()
                .for_each(|b| *b = next(256) as u8);
        }
        // A piece of the file repeated (chunks and blocks twice).
        4 => {
            let at = next(bytes.len());
            let len = next((bytes.len() - at).min(512));
            let piece = bytes[at..at + len].to_vec();
            let to = next(bytes.len());
            bytes.splice(to..to, piece);
        }
        // Bytes removed from the middle.
        _ => {
            let at = next(bytes.len());
            let len = next((bytes.len() - at).min(64));
            bytes.drain(at..at + len);
        }
    }
}

#[test]
fn thousands_of_mutated_files_are_refused_with_a_message_or_load_as_valid_irs() {
    watch_panics();
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut rng = Rng::new(0x5EED);
        let mut next = |bound: usize| (rng.next_u64() % bound.max(1) as u64) as usize;
        let (mut refused, mut loaded, mut caught, mut sets) = (0, 0, 0, 0);
        let seeds = seeds::seeds();
        for (seed_idx, (name, original)) in seeds.iter().enumerate() {
            let extension = name.rsplit('.').next().unwrap();
            for case in 0..CASES_PER_SEED {
                let mut bytes = original.clone();
                mutate(&mut bytes, case, &mut next);
                let name = format!("case-{seed_idx}-{case}.{extension}");
                match ir::load_bytes(&bytes, &name) {
                    Ok((ir, _)) => {
                        loaded += 1;
                        assert!(!ir.is_empty() && ir.seconds() <= 60.0, "{name}");
                        assert!(
                            ir.channels.iter().flatten().all(|s| s.is_finite()),
                            "{name}: non-finite samples"
                        );
                    }
                    Err(err) => {
                        refused += 1;
                        check_refusal(&err, &name);
                        caught += usize::from(err.to_string().contains("the decoder failed"));
                    }
                }
                // One file per input: the mutated file as one row of a set with its seed.
                if case % 5 == 0 {
                    let seed_name = format!("seed-{seed_idx}.{extension}");
                    let set = [(&bytes[..], name.as_str()), (&original[..], &seed_name)];
                    match ir::load_bytes_set(&set) {
                        Ok((ir, infos)) => {
                            assert_eq!(infos.len(), 2);
                            assert!(ir.channels.iter().flatten().all(|s| s.is_finite()));
                            sets += 1;
                        }
                        Err(err) => {
                            let message = err.to_string();
                            assert!(!message.contains('\n'), "one line: {message}");
                            assert!(
                                message.contains(&name) || message.contains(&seed_name),
                                "names a file: {message}"
                            );
                        }
                    }
                }
            }
        }
        // Random bytes behind each format's magic: always refused.
        let magics: [(&[u8], &str); 5] = [
            (b"RIFF\x24\x08\x00\x00WAVEfmt ", "wav"),
            (b"fLaC\x00\x00\x00\x22", "flac"),
            (b"FORM\x00\x00\x10\x00AIFFCOMM", "aiff"),
            (b"FORM\x00\x00\x10\x00AIFCFVER", "aifc"),
            (b"OggS\x00\x02", "ogg"),
        ];
        for (magic, extension) in magics {
            for case in 0..60 {
                let mut bytes = magic.to_vec();
                bytes.extend((0..next(5000)).map(|_| next(256) as u8));
                let name = format!("random-{extension}-{case}.{extension}");
                match ir::load_bytes(&bytes, &name) {
                    Ok((ir, _)) => panic!("{name}: random bytes loaded as {} frames", ir.len()),
                    Err(err) => check_refusal(&err, &name),
                }
                refused += 1;
            }
        }
        assert!(sets > 0, "no per-input set loaded");
        done_tx
            .send((seeds.len(), refused, loaded, caught))
            .unwrap();
    });
    match done_rx.recv_timeout(Duration::from_secs(300)) {
        Ok((num_seeds, refused, loaded, caught)) => eprintln!(
            "{num_seeds} seeds: {refused} refused ({caught} of them after a decoder panic), \
             {loaded} loaded"
        ),
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => panic!("loading hung for 300 s"),
        Err(err) => panic!("the mutation thread failed: {err}"),
    }
    assert_eq!(
        PRINTED_PANICS.load(Ordering::Relaxed),
        0,
        "a panic message reached the log"
    );
}

/// The IR library's scan over 1,000 damaged files in nested folders (the kinds above): every one
/// is listed, readable or with a one-line reason that names it; nothing aborts or prints a panic.
#[test]
fn the_library_lists_a_thousand_damaged_files_each_with_its_reason() {
    watch_panics();
    let root = std::env::temp_dir().join(format!("longtail-damaged-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let mut rng = Rng::new(0xD1CE);
    let mut next = |bound: usize| (rng.next_u64() % bound.max(1) as u64) as usize;
    let seeds = seeds::seeds();
    for case in 0..1000 {
        let (name, original) = &seeds[case % seeds.len()];
        let extension = name.rsplit('.').next().unwrap();
        let mut bytes = original.clone();
        mutate(&mut bytes, case, &mut next);
        let folder = root
            .join(format!("f{}", case % 7))
            .join(format!("g{}", case % 3));
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join(format!("case-{case}.{extension}")), bytes).unwrap();
    }
    let scan = longtail::library::scan(std::slice::from_ref(&root), Default::default());
    assert_eq!(scan.entries.len(), 1000);
    assert!(scan.skipped.is_empty() && !scan.truncated);
    let mut refused = 0;
    for entry in &scan.entries {
        if let Err(reason) = &entry.info {
            refused += 1;
            assert!(!reason.contains('\n'), "one line: {reason}");
            assert!(reason.contains(&entry.name()), "names the file: {reason}");
        }
    }
    eprintln!(
        "1000 damaged files: {refused} refused, {} listed",
        1000 - refused
    );
    assert!(refused > 0);
    assert_eq!(
        PRINTED_PANICS.load(Ordering::Relaxed),
        0,
        "a panic message reached the log"
    );
    std::fs::remove_dir_all(root).unwrap();
}

/// Panics whose message reached the panic hook the process had before the decoder's.
static PRINTED_PANICS: AtomicUsize = AtomicUsize::new(0);

/// Counts printed panics in [`PRINTED_PANICS`]. Every test that decodes calls this first, so the
/// counting hook is in place before the decoder chains its quiet hook in front of it.
fn watch_panics() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            PRINTED_PANICS.fetch_add(1, Ordering::Relaxed);
            previous(info);
        }));
    });
}

/// A refusal is one line that names the file and says why.
fn check_refusal(err: &IrError, name: &str) {
    let message = err.to_string();
    assert!(!message.contains('\n'), "one line: {message}");
    assert!(message.contains(name), "names the file: {message}");
    assert!(message.len() > name.len() + 10, "says why: {message}");
}

/// Tag and picture lengths of about 4 GB (symphonia 0.5 allocated them): each file is refused
/// with a message or loads, and the guard sees no big allocation.
#[test]
fn tag_and_picture_lengths_of_4_gb_allocate_nothing_big() {
    watch_panics();
    for (name, bytes) in seeds::hostile() {
        match ir::load_bytes(&bytes, &name) {
            Ok((ir, _)) => assert!(!ir.is_empty(), "{name}"),
            Err(err) => check_refusal(&err, &name),
        }
    }
}

/// The guard itself: a test binary that asks for 2 GiB at once, without touching it (which
/// overcommit would let through), is stopped. Runs this test binary again as a child for the one
/// ignored test below. Wherever a guard exists: with `assert_process_allocs` it is Linux's data
/// limit (`support/alloc_guard.rs`), which prints no line of its own.
#[cfg(any(not(feature = "assert_process_allocs"), target_os = "linux"))]
#[test]
fn the_allocation_guard_stops_a_huge_request() {
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "a_huge_allocation", "--ignored", "--nocapture"])
        .env("LONGTAIL_GUARD_CHILD", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "the child survived: {stderr}");
    assert!(
        stderr.contains("memory allocation of 2147483648 bytes failed"),
        "{stderr}"
    );
    #[cfg(not(feature = "assert_process_allocs"))]
    assert!(
        stderr.contains("allocation guard: refused a single allocation of 2147483648 bytes"),
        "{stderr}"
    );
}

#[test]
#[ignore = "run by the_allocation_guard_stops_a_huge_request as a child process"]
fn a_huge_allocation() {
    if std::env::var_os("LONGTAIL_GUARD_CHILD").is_some() {
        let bytes: Vec<u8> = Vec::with_capacity(std::hint::black_box(2 << 30));
        std::hint::black_box(&bytes);
    }
}

/// The extensions `plugin/fuzz/fuzz_targets/ir_decode.rs` picks from its input's first byte.
const FUZZ_EXTENSIONS: [&str; 9] = [
    "wav", "flac", "aiff", "aifc", "ogg", "oga", "wave", "aif", "bin",
];

/// Writes the fuzz targets' seed corpus into `$LONGTAIL_FUZZ_SEEDS/ir_decode` (each seed behind
/// the byte that names its extension) and `$LONGTAIL_FUZZ_SEEDS/state_restore` (a project
/// state's `ir-file` field holding each seed that loads). Run by `scripts/fuzz.sh`.
#[test]
#[ignore = "writes the fuzz seed corpus; run by scripts/fuzz.sh"]
fn write_fuzz_seeds() {
    use longtail::ir::store::{STATE_VERSION, SavedIrFile, encode_samples};
    let dir = std::path::PathBuf::from(
        std::env::var_os("LONGTAIL_FUZZ_SEEDS").expect("LONGTAIL_FUZZ_SEEDS names the folder"),
    );
    let (decode_dir, state_dir) = (dir.join("ir_decode"), dir.join("state_restore"));
    std::fs::create_dir_all(&decode_dir).unwrap();
    std::fs::create_dir_all(&state_dir).unwrap();
    let seeds = seeds::seeds();
    let mut num_states = 0;
    for (name, bytes) in &seeds {
        let extension = name.rsplit('.').next().unwrap();
        let pick = FUZZ_EXTENSIONS
            .iter()
            .position(|e| *e == extension)
            .unwrap();
        let mut input = vec![pick as u8];
        input.extend(bytes);
        std::fs::write(decode_dir.join(name), input).unwrap();
        if let Ok((ir, _)) = ir::load_bytes(bytes, name) {
            let saved = SavedIrFile {
                version: STATE_VERSION,
                paths: vec![format!("/nonexistent/{name}")],
                hash: "0123456789abcdef".into(),
                name: ir.name.clone(),
                sample_rate: ir.sample_rate,
                num_channels: ir.channels.len(),
                num_frames: ir.len(),
                samples: encode_samples(&ir.channels),
                channel_mask: None,
            };
            let json = serde_json::to_vec(&saved).unwrap();
            std::fs::write(state_dir.join(format!("{name}.json")), json).unwrap();
            num_states += 1;
        }
    }
    eprintln!(
        "fuzz seeds: {} IR files and {num_states} states in {}",
        seeds.len(),
        dir.display()
    );
}
