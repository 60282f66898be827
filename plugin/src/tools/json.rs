//! JSON text for the tools' one-line reports (`bench`, `status`, `bench-gpu`), written by hand
//! so the reports need no serialisation crate.
//!
//! Uses nothing of the crate.

use std::fmt::Write as _;

/// `text` as a JSON string literal, quotes included.
pub fn json_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
