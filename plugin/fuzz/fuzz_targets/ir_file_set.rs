//! One IR file per input (`ir::load_bytes_set`, the path `ir::load` takes for several files
//! after reading them): the first byte picks how many files (2 to 9) and the extension they
//! are named with; the rest is cut into that many equal pieces, one file each. Whatever the
//! bytes, the result is a matrix IR of one row per file or a one-line refusal naming a file.

#![no_main]

use libfuzzer_sys::fuzz_target;

const EXTENSIONS: [&str; 4] = ["wav", "flac", "aiff", "ogg"];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, bytes)) = data.split_first() else {
        return;
    };
    let count = 2 + usize::from(pick % 8);
    let extension = EXTENSIONS[usize::from(pick / 8) % EXTENSIONS.len()];
    let piece = bytes.len() / count;
    let names: Vec<String> = (0..count).map(|i| format!("row-{i}.{extension}")).collect();
    let files: Vec<(&[u8], &str)> = (0..count)
        .map(|i| (&bytes[i * piece..(i + 1) * piece], names[i].as_str()))
        .collect();
    match longtail::ir::load_bytes_set(&files) {
        Ok((ir, infos)) => {
            assert_eq!(infos.len(), count);
            assert_eq!(ir.channels.len() % count, 0);
            assert!(ir.channels.iter().flatten().all(|s| s.is_finite()));
        }
        Err(err) => {
            let message = err.to_string();
            assert!(!message.contains('\n'), "{message}");
            assert!(names.iter().any(|name| message.contains(name)), "{message}");
        }
    }
});
