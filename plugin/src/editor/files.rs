//! Choosing and loading IR files from the editor: the file dialog (rfd: the XDG desktop
//! portal, or zenity), a typed path, or two stereo files for true stereo; or an IR captured
//! in the Capture tab, which has no file. Runs on a helper thread; loads through
//! [`crate::ir::store::IrFileState`].

use std::path::PathBuf;
use std::sync::Arc;

use crate::capture::live::result::Captured;
use crate::ir::store::IrFileState;

/// How the user asked for a file.
#[derive(Debug, Clone)]
pub enum FileRequest {
    /// One file from the file dialog.
    Dialog,
    /// Two stereo files from the file dialog, making a true-stereo IR.
    DialogPair,
    /// Paths given directly (the path field).
    Paths(Vec<PathBuf>),
    /// A captured IR that was not saved: the project keeps its copy
    /// ([`IrFileState::load_ir`], which compresses it: up to 64 MiB of text, so not on the GUI
    /// thread).
    Captured(Arc<Captured>),
}

/// What came of a [`FileRequest`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileOutcome {
    /// The dialog was closed without a choice (or no dialog could be shown).
    Cancelled,
    /// The file is the current file now.
    Loaded,
    /// Nothing changed, for this reason.
    Failed(String),
}

/// Orders the chosen files for [`IrFileState::load_paths`]: one file, or two stereo files
/// sorted by name (so `hall_L.wav` comes before `hall_R.wav`: the left input's first).
pub fn order_paths(mut paths: Vec<PathBuf>) -> Result<Vec<PathBuf>, String> {
    match paths.len() {
        1 => Ok(paths),
        2 => {
            paths.sort();
            Ok(paths)
        }
        count => Err(format!(
            "{count} files were chosen: choose one IR file, or two stereo files (left input's, \
             right input's) for true stereo"
        )),
    }
}

/// Runs `request` (dialog, decoding) to the end. Blocks: call it on a helper thread.
pub fn run_file_request(
    request: FileRequest,
    files: &IrFileState,
    start_dir: Option<PathBuf>,
) -> FileOutcome {
    let chosen = match request {
        FileRequest::Paths(paths) => paths,
        FileRequest::Captured(captured) => {
            let loaded = captured
                .to_ir()
                .and_then(|ir| files.load_ir(ir).map_err(|err| err.to_string()));
            return match loaded {
                Ok(()) => FileOutcome::Loaded,
                Err(message) => {
                    FileOutcome::Failed(format!("{message}; the current IR keeps playing"))
                }
            };
        }
        FileRequest::Dialog | FileRequest::DialogPair => {
            let mut dialog = rfd::FileDialog::new()
                .add_filter("Impulse responses", crate::ir::decode::EXTENSIONS)
                .add_filter("All files", &["*"]);
            if let Some(dir) = start_dir {
                dialog = dialog.set_directory(dir);
            }
            let picked = if matches!(request, FileRequest::DialogPair) {
                dialog
                    .set_title("Longtail: two stereo IR files (true stereo)")
                    .pick_files()
            } else {
                dialog
                    .set_title("Longtail: impulse response")
                    .pick_file()
                    .map(|path| vec![path])
            };
            match picked {
                Some(paths) if !paths.is_empty() => paths,
                _ => return FileOutcome::Cancelled,
            }
        }
    };
    let paths = match order_paths(chosen) {
        Ok(paths) => paths,
        Err(message) => return FileOutcome::Failed(message),
    };
    let refs: Vec<&std::path::Path> = paths.iter().map(PathBuf::as_path).collect();
    match files.load_paths(&refs) {
        Ok(()) => FileOutcome::Loaded,
        Err(err) => FileOutcome::Failed(format!("{err}; the current IR keeps playing")),
    }
}
