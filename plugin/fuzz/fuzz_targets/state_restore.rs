//! A project state's `ir-file` field, as the host hands it back (JSON text), through
//! `IrFileState::restore`: paths, hash, name, shape and the compressed samples. Restoring never
//! panics or allocates what the input cannot hold; an embedded IR that is used is a valid one.
//! Paths in the input are taken as they are (mostly missing files, so the embedded copy is
//! decoded).

#![no_main]

use libfuzzer_sys::fuzz_target;
use longtail::ir::store::{IrFileState, SavedIrFile};

fuzz_target!(|data: &[u8]| {
    let Ok(saved) = serde_json::from_slice::<SavedIrFile>(data) else {
        return;
    };
    let state = IrFileState::default();
    state.restore(saved);
    if let Some((file, _)) = state.current() {
        assert!(!file.ir.is_empty());
        assert!(file.ir.channels.iter().flatten().all(|s| s.is_finite()));
    }
    assert!(!state.status().contains('\n'));
});
