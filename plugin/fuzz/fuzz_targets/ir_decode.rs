//! IR file bytes, any format, through the decoder and the IR checks (`ir::load_bytes`, the path
//! `ir::load` takes after reading the file). The first byte picks the extension the file is
//! named with (a hint to the probe, and a lie as often as not); the rest is the file. Whatever
//! the bytes, the result is an IR or a one-line refusal naming the file.

#![no_main]

use libfuzzer_sys::fuzz_target;

const EXTENSIONS: [&str; 9] = ["wav", "flac", "aiff", "aifc", "ogg", "oga", "wave", "aif", "bin"];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, bytes)) = data.split_first() else {
        return;
    };
    let name = format!("fuzz.{}", EXTENSIONS[usize::from(pick) % EXTENSIONS.len()]);
    match longtail::ir::load_bytes(bytes, &name) {
        Ok((ir, _)) => {
            assert!(!ir.is_empty() && ir.seconds() <= longtail::ir::MAX_IR_SECONDS);
            assert!(ir.channels.iter().flatten().all(|s| s.is_finite()));
        }
        Err(err) => {
            let message = err.to_string();
            assert!(!message.contains('\n') && message.contains(&name), "{message}");
        }
    }
});
