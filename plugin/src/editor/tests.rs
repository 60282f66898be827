//! The editor's unit tests: the preview, file loads (a captured IR's too), the ordering of
//! chosen files.

use super::*;
use crate::ir::builtin::BuiltinIr;
use crate::ir::edit::EditSettings;
use crate::ir::store::IrFileState;
use crate::preparer::IrSource;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn builtin_key(edits: EditSettings) -> PreviewKey {
    PreviewKey {
        source: IrSource::Builtin(BuiltinIr::SmallRoom),
        edits,
        sample_rate: 48_000,
        bus: crate::ir::mapping::Bus::new(2, 2, Default::default()),
        second: None,
    }
}

#[test]
fn preview_outlines_the_ir_the_engine_plays() {
    let files = IrFileState::default();
    let plain = make_preview(builtin_key(EditSettings::NONE), &files, None);
    let data = plain.result.as_ref().expect("built-in prepares");
    let generated = BuiltinIr::SmallRoom.generate(48_000);
    assert_eq!(data.num_frames, generated.len());
    assert_eq!(data.num_channels, generated.channels.len());
    assert!(
        data.picture
            .columns
            .iter()
            .all(|c| c.len() == PREVIEW_COLUMNS)
    );

    // A reversed IR's loudest column moves from the start to the end.
    let reversed = make_preview(
        builtin_key(EditSettings {
            reverse: true,
            ..EditSettings::NONE
        }),
        &files,
        None,
    );
    let loudest = |data: &PreviewData| {
        let column = &data.picture.columns[0];
        (0..column.len())
            .max_by(|&a, &b| {
                let level = |i: usize| (-column[i].0).max(column[i].1);
                level(a).total_cmp(&level(b))
            })
            .expect("columns")
    };
    let reversed = reversed.result.expect("reverse prepares");
    assert!(loudest(data) < PREVIEW_COLUMNS / 4);
    assert!(loudest(&reversed) > PREVIEW_COLUMNS * 3 / 4);

    // A trim keeps the picture it is drawn over; a stretch makes a new one.
    let last = Some(Arc::clone(&data.picture));
    let trimmed = make_preview(
        builtin_key(EditSettings {
            trim_start_ms: 5.0,
            ..EditSettings::NONE
        }),
        &files,
        last.clone(),
    );
    let trimmed = trimmed.result.expect("trim prepares");
    assert!(trimmed.num_frames < data.num_frames);
    assert!(Arc::ptr_eq(&trimmed.picture, &data.picture));
    let stretched = make_preview(
        builtin_key(EditSettings {
            stretch: 1.5,
            ..EditSettings::NONE
        }),
        &files,
        last,
    );
    let stretched = stretched.result.expect("stretch prepares");
    assert!(!Arc::ptr_eq(&stretched.picture, &data.picture));
    assert!(stretched.picture.frames > data.picture.frames);
}

#[test]
fn a_loaded_file_is_previewed_and_a_bad_one_keeps_it() {
    let files = IrFileState::default();
    let outcome = run_file_request(FileRequest::Paths(vec![fixture("ir-16.wav")]), &files, None);
    assert_eq!(outcome, FileOutcome::Loaded);
    let (_, generation) = files.current().expect("loaded");
    let key = PreviewKey {
        source: IrSource::File(generation),
        edits: EditSettings::NONE,
        sample_rate: 44_100,
        bus: crate::ir::mapping::Bus::new(2, 2, Default::default()),
        second: None,
    };
    let preview = make_preview(key, &files, None);
    let data = preview.result.expect("file prepares");
    assert_eq!(data.name, "ir-16.wav");

    // A file that is not audio: refused with the reason, the loaded file stays.
    let outcome = run_file_request(FileRequest::Paths(vec![fixture("README.md")]), &files, None);
    match outcome {
        FileOutcome::Failed(message) => {
            assert!(message.contains("current IR keeps playing"), "{message}")
        }
        other => panic!("expected a failure, got {other:?}"),
    }
    assert_eq!(files.current().map(|(_, g)| g), Some(generation));

    // A preview of a file generation that is gone says so instead of showing another IR.
    files.clear();
    assert!(make_preview(key, &files, None).result.is_err());
}

#[test]
fn chosen_files_are_one_or_an_ordered_pair() {
    let one = order_paths(vec![PathBuf::from("/a/hall.wav")]).expect("one file");
    assert_eq!(one, vec![PathBuf::from("/a/hall.wav")]);
    let pair = order_paths(vec![
        PathBuf::from("/a/hall_R.wav"),
        PathBuf::from("/a/hall_L.wav"),
    ])
    .expect("a pair");
    assert_eq!(
        pair,
        vec![
            PathBuf::from("/a/hall_L.wav"),
            PathBuf::from("/a/hall_R.wav")
        ]
    );
    let three = vec![PathBuf::from("a"), PathBuf::from("b"), PathBuf::from("c")];
    assert!(order_paths(three).unwrap_err().contains("3 files"));
    assert!(order_paths(Vec::new()).is_err());
}

#[test]
fn a_captured_ir_loads_as_the_projects_copy() {
    use crate::capture::extract::{Capture, Report};
    use crate::capture::live::result::Captured;
    let channels: Vec<Vec<f32>> = (0..2)
        .map(|c| (0..4800).map(|i| 0.5 / (1 + i + c) as f32).collect())
        .collect();
    let captured = Captured {
        capture: Capture {
            sample_rate: 48_000,
            num_speakers: 1,
            num_mics: 2,
            channels,
            report: Report {
                peak_to_noise_db: 60.0,
                noise_floor_db: -90.0,
                lag_samples: 0,
                length_samples: 4800,
                from_loopback: false,
                channels: Vec::new(),
            },
        },
        name: "Capture 2026-12-07 18:30:12".into(),
        file_name: "Capture 2026-12-07 18-30-12.wav".into(),
        outline_db: vec![-60.0; 512],
    };
    let files = IrFileState::default();
    let request = FileRequest::Captured(Arc::new(captured));
    assert_eq!(run_file_request(request, &files, None), FileOutcome::Loaded);
    let (file, _) = files.current().expect("loaded");
    assert_eq!(file.ir.name, "Capture 2026-12-07 18:30:12");
    assert_eq!(file.ir.channels.len(), 2);
    // No file: the project keeps the copy.
    assert!(file.paths.is_empty() && !file.embedded.is_empty());
}
