//! The user IR file in the project state, through the same `serialize_fields` and
//! `deserialize_fields` calls nice-plug's wrappers make when a host saves and loads a project:
//! round trip, missing file, changed file, older states, a state from a newer Longtail; and the
//! preparation of the file with the edit parameters.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use longtail::ir::edit::{self, EditSettings};
use longtail::ir::store::{STATE_VERSION, SavedIrFile};
use longtail::ir::wav;
use longtail::params::LongtailParams;
use longtail::preparer::{IrSource, prepare_ir};
use longtail::rng::Rng;
use nice_plug::prelude::Params;

#[path = "support/alloc_guard.rs"]
mod alloc_guard;

// Decoding and restoring run under the allocation guard (see `ir_mutation.rs`).
#[cfg(not(feature = "assert_process_allocs"))]
#[global_allocator]
static GUARD: alloc_guard::AllocGuard = alloc_guard::AllocGuard;

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("longtail-irstate-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn noise(len: usize, seed: u64) -> Vec<f32> {
    let mut rng = Rng::new(seed);
    (0..len).map(|_| 0.5 * rng.bipolar()).collect()
}

fn write_ir(path: &Path, seed: u64) -> Vec<Vec<f32>> {
    let channels = vec![noise(4000, seed), noise(4000, seed + 1)];
    wav::write_f32(path, 44_100, &channels).unwrap();
    channels
}

/// The samples of the current file.
fn current_samples(params: &LongtailParams) -> Option<Vec<Vec<f32>>> {
    params
        .ir_file
        .current()
        .map(|(file, _)| file.ir.channels.clone())
}

fn saved_field(fields: &BTreeMap<String, String>) -> SavedIrFile {
    serde_json::from_str(&fields["ir-file"]).unwrap()
}

#[test]
fn state_round_trip_keeps_the_file_and_its_samples() {
    let dir = temp_dir("round");
    let path = dir.join("hall.wav");
    let samples = write_ir(&path, 1);
    let original = LongtailParams::default();
    assert_eq!(original.ir_file.generation(), 0);
    original.ir_file.load_paths(&[&path]).unwrap();
    assert!(original.ir_file.status().contains("loaded hall.wav"));
    assert_ne!(original.ir_file.generation(), 0);

    let fields = original.serialize_fields();
    let saved = saved_field(&fields);
    assert_eq!(saved.version, STATE_VERSION);
    assert_eq!(saved.paths, [path.to_string_lossy()]);
    assert_eq!(saved.hash.len(), 16);
    assert_eq!(
        (saved.sample_rate, saved.num_channels, saved.num_frames),
        (44_100, 2, 4000)
    );
    // Noise compresses little; the embedded copy stays near the raw size (32 kB here).
    assert!(
        saved.samples.len() < 4 * 32_000 * 4 / 3 + 100,
        "{}",
        saved.samples.len()
    );

    let restored = LongtailParams::default();
    restored.deserialize_fields(&fields);
    assert_eq!(current_samples(&restored), Some(samples.clone()));
    assert!(
        restored.ir_file.status().contains("loaded hall.wav from"),
        "{}",
        restored.ir_file.status()
    );

    // Without the file, the embedded copy: bit-exact, and said so.
    std::fs::remove_file(&path).unwrap();
    let elsewhere = LongtailParams::default();
    elsewhere.deserialize_fields(&fields);
    assert_eq!(current_samples(&elsewhere), Some(samples));
    let status = elsewhere.ir_file.status();
    assert!(
        status.contains("is not there: using the copy of hall.wav saved in the project"),
        "{status}"
    );
    // And that state saves the same copy again.
    assert_eq!(
        saved_field(&elsewhere.serialize_fields()).samples,
        saved.samples
    );
}

#[test]
fn a_changed_file_gives_the_embedded_copy() {
    let dir = temp_dir("changed");
    let path = dir.join("room.wav");
    let samples = write_ir(&path, 3);
    let original = LongtailParams::default();
    original.ir_file.load_paths(&[&path]).unwrap();
    let fields = original.serialize_fields();
    let changed = write_ir(&path, 5);
    assert_ne!(changed, samples);

    let restored = LongtailParams::default();
    restored.deserialize_fields(&fields);
    assert_eq!(current_samples(&restored), Some(samples));
    let status = restored.ir_file.status();
    assert!(
        status.contains("has changed since the project was saved: using the copy"),
        "{status}"
    );
}

#[test]
fn older_states_load() {
    let dir = temp_dir("old");
    let path = dir.join("plate.wav");
    let samples = write_ir(&path, 7);

    // A state from before the IR file existed: no "ir-file" field at all.
    let params = LongtailParams::default();
    params.deserialize_fields(&BTreeMap::new());
    assert_eq!(params.ir_file.generation(), 0);

    // Version 0 (or written by hand): a path and nothing else loads the file.
    let mut fields = BTreeMap::new();
    fields.insert(
        "ir-file".to_string(),
        format!("{{\"paths\":[{:?}]}}", path.to_string_lossy()),
    );
    params.deserialize_fields(&fields);
    assert_eq!(current_samples(&params), Some(samples));
    assert!(params.ir_file.status().contains("loaded plate.wav"));

    // A path that is not there, without a copy: the current IR stays, and the status says why.
    let generation = params.ir_file.generation();
    fields.insert(
        "ir-file".to_string(),
        "{\"version\":1,\"paths\":[\"/nonexistent/ir.wav\"]}".to_string(),
    );
    params.deserialize_fields(&fields);
    assert_eq!(params.ir_file.generation(), generation);
    let status = params.ir_file.status();
    assert!(
        status.contains("'/nonexistent/ir.wav' is not there, and the project holds no copy"),
        "{status}"
    );
}

#[test]
fn a_state_from_a_newer_longtail_is_refused_and_the_ir_kept() {
    let dir = temp_dir("future");
    let path = dir.join("cathedral.wav");
    let samples = write_ir(&path, 9);
    let params = LongtailParams::default();
    params.ir_file.load_paths(&[&path]).unwrap();
    let generation = params.ir_file.generation();

    let other = dir.join("other.wav");
    write_ir(&other, 11);
    let future = SavedIrFile {
        version: STATE_VERSION + 1,
        paths: vec![other.to_string_lossy().into_owned()],
        ..SavedIrFile::default()
    };
    let mut fields = BTreeMap::new();
    fields.insert(
        "ir-file".to_string(),
        serde_json::to_string(&future).unwrap(),
    );
    params.deserialize_fields(&fields);
    assert_eq!(params.ir_file.generation(), generation);
    assert_eq!(current_samples(&params), Some(samples));
    let status = params.ir_file.status();
    assert!(
        status.contains("saved by a newer Longtail (state version 2"),
        "{status}"
    );
    assert!(status.contains("kept the current IR"), "{status}");

    // A damaged embedded copy is refused too, keeping the IR.
    let mut damaged = saved_field(&params.serialize_fields());
    damaged.paths = vec!["/nonexistent/x.wav".into()];
    damaged.samples.replace_range(10..20, "AAAAAAAAAA");
    fields.insert(
        "ir-file".to_string(),
        serde_json::to_string(&damaged).unwrap(),
    );
    params.deserialize_fields(&fields);
    assert_eq!(params.ir_file.generation(), generation);
    assert!(
        params.ir_file.status().contains("damaged"),
        "{}",
        params.ir_file.status()
    );
}

#[test]
fn loading_a_bad_file_keeps_the_current_one() {
    let dir = temp_dir("bad");
    let path = dir.join("good.wav");
    let samples = write_ir(&path, 13);
    let params = LongtailParams::default();
    params.ir_file.load_paths(&[&path]).unwrap();
    let bad = dir.join("bad.wav");
    std::fs::write(&bad, "not audio").unwrap();
    let err = params.ir_file.load_paths(&[&bad]).unwrap_err();
    assert!(err.to_string().contains("not a recognised audio file"));
    assert_eq!(current_samples(&params), Some(samples));
    assert!(params.ir_file.status().ends_with("kept the current IR"));
}

/// The preparation step takes the file the audio thread saw (by generation) and the edit
/// parameters; files get the automatic trim and normalisation, built-ins play as generated.
#[test]
fn preparation_uses_the_file_and_the_edit_parameters() {
    let dir = temp_dir("prepare");
    let path = dir.join("ir.wav");
    write_ir(&path, 15);
    let params = LongtailParams::default();
    params.ir_file.load_paths(&[&path]).unwrap();
    let (file, generation) = params.ir_file.current().unwrap();

    let file_edits = params.edit_settings(true, None);
    assert_eq!(file_edits, EditSettings::FILE_DEFAULT);
    assert_eq!(params.edit_settings(false, None), EditSettings::NONE);
    let prepared = prepare_ir(
        IrSource::File(generation),
        &file_edits,
        48_000,
        &params.ir_file,
    )
    .unwrap();
    let (expected, _) = edit::prepare(&file.ir, &file_edits, 48_000).unwrap();
    assert_eq!(prepared, expected);
    assert_eq!(prepared.sample_rate, 48_000);
    let energy = edit::output_energy(&prepared.channels, prepared.layout);
    assert!((energy - 1.0).abs() < 1e-4, "normalised: {energy}");

    // A stale generation (the file changed meanwhile) is refused, not guessed.
    assert!(
        prepare_ir(
            IrSource::File(generation + 1),
            &file_edits,
            48_000,
            &params.ir_file
        )
        .is_err()
    );

    // The high cut parameter's top (20 kHz) is off in a session that cannot filter there.
    let high = EditSettings {
        high_cut_hz: Some(20_000.0),
        ..file_edits
    };
    let at_32k = prepare_ir(IrSource::File(generation), &high, 32_000, &params.ir_file).unwrap();
    let plain_32k = prepare_ir(
        IrSource::File(generation),
        &file_edits,
        32_000,
        &params.ir_file,
    );
    assert_eq!(at_32k, plain_32k.unwrap());
    assert!(edit::prepare(&file.ir, &high, 32_000).is_err());

    let builtin = longtail::ir::builtin::BuiltinIr::Plate;
    let ir = prepare_ir(
        IrSource::Builtin(builtin),
        &EditSettings::NONE,
        48_000,
        &params.ir_file,
    )
    .unwrap();
    assert_eq!(ir, builtin.generate(48_000));
}

/// Slot B's file has a state of its own ("ir-file-b") beside the first IR's: each comes back
/// into its own slot, and a state from before slot B existed leaves it empty and Off.
#[test]
fn the_second_slots_file_round_trips_on_its_own() {
    use longtail::params::SecondIrParam;

    let dir = temp_dir("slot-b");
    let (path_a, path_b) = (dir.join("a.wav"), dir.join("b.wav"));
    let samples_a = write_ir(&path_a, 11);
    let samples_b = write_ir(&path_b, 12);
    let original = LongtailParams::default();
    original.ir_file.load_paths(&[&path_a]).unwrap();
    original.ir_file_b.load_paths(&[&path_b]).unwrap();
    let fields = original.serialize_fields();
    assert!(fields.contains_key("ir-file-b"), "{:?}", fields.keys());

    let restored = LongtailParams::default();
    restored.deserialize_fields(&fields);
    assert_eq!(current_samples(&restored), Some(samples_a));
    let b = restored
        .ir_file_b
        .current()
        .map(|(file, _)| file.ir.channels.clone());
    assert_eq!(b, Some(samples_b));

    let mut older = fields.clone();
    older.remove("ir-file-b");
    let old_project = LongtailParams::default();
    old_project.deserialize_fields(&older);
    assert_eq!(old_project.ir_file_b.generation(), 0);
    assert_eq!(old_project.ir_b_source.value(), SecondIrParam::Off);
    assert_eq!(old_project.blend.value(), 0.0);
    assert!(old_project.ir_b_source_now().is_none());
}
