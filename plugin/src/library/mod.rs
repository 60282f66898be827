//! The IR library: the IR files under the folders a user adds, each with what its header says
//! (name, folder, channels, length, sample rate) or the one-line reason it cannot play, read
//! without decoding the samples ([`crate::ir::decode::read_info`]).
//!
//! The scan runs off the audio and UI threads (the CLI's `ir-list` and the editor's browser
//! call it from a thread of their own) and is bounded: at most [`ScanLimits::max_files`] files
//! and [`ScanLimits::max_depth`] folders deep. Unreadable folders are listed with their reason
//! and skipped. A folder is entered once, by its canonical path, so a symlink loop (or two roots
//! that overlap) ends; canonical paths work on Windows too, which has no inode numbers. Entries
//! come sorted by path within each root, roots in the order given.
//!
//! The folders and the favourites live in the user's settings file, shared by every instance
//! and merged on each write ([`settings`]). What the editor's browser shows of a scan (search,
//! favourites, next and previous) is worked out in [`browse`].

pub mod browse;
pub mod settings;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::Relaxed;

use crate::ir::decode::{EXTENSIONS, FileInfo, read_info};

/// Bounds of one scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScanLimits {
    /// Files listed at most, over all roots; the scan stops there and says so.
    pub max_files: usize,
    /// Folders below a root entered at most (the root is depth 0).
    pub max_depth: usize,
}

impl Default for ScanLimits {
    fn default() -> Self {
        Self {
            max_files: 20_000,
            max_depth: 16,
        }
    }
}

/// One IR file of the library.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The file.
    pub path: PathBuf,
    /// The root it was found under (one of the folders the user added).
    pub root: PathBuf,
    /// What its header says, or why it cannot play (one line).
    pub info: Result<FileInfo, String>,
}

impl Entry {
    /// The file's name without its folder.
    pub fn name(&self) -> String {
        crate::ir::file_name(&self.path)
    }

    /// Its length in seconds, where the header states the frames.
    pub fn seconds(&self) -> Option<f64> {
        let info = self.info.as_ref().ok()?;
        Some(info.num_frames? as f64 / f64::from(info.sample_rate.max(1)))
    }
}

/// What a scan found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scan {
    pub entries: Vec<Entry>,
    /// Folders that could not be read (or were deeper than the limit), with why.
    pub skipped: Vec<(PathBuf, String)>,
    /// The file limit (or [`scan_until`]'s stop) ended the scan before its end.
    pub truncated: bool,
}

/// Lists the IR files under `roots` within `limits`. Blocking file I/O: call off the audio
/// and UI threads.
pub fn scan(roots: &[PathBuf], limits: ScanLimits) -> Scan {
    scan_until(roots, limits, &AtomicBool::new(false))
}

/// [`scan`], ending early (as if at the file limit: [`Scan::truncated`]) once `stop` is set,
/// before the next folder or file: the editor sets it when its window closes, so that closing
/// never waits for a slow disk.
pub fn scan_until(roots: &[PathBuf], limits: ScanLimits, stop: &AtomicBool) -> Scan {
    let mut scan = Scan::default();
    let mut entered = HashSet::new();
    for root in roots {
        let first = scan.entries.len();
        scan_root(root, limits, stop, &mut entered, &mut scan);
        scan.entries[first..].sort_by(|a, b| a.path.cmp(&b.path));
        if scan.truncated {
            break;
        }
    }
    scan
}

/// One root of [`scan`]: depth-first, each folder's entries in name order.
fn scan_root(
    root: &Path,
    limits: ScanLimits,
    stop: &AtomicBool,
    entered: &mut HashSet<PathBuf>,
    scan: &mut Scan,
) {
    let mut stack = vec![(root.to_path_buf(), 0usize)];
    while let Some((folder, depth)) = stack.pop() {
        if stop.load(Relaxed) {
            scan.truncated = true;
            return;
        }
        let canonical = match std::fs::canonicalize(&folder) {
            Ok(canonical) => canonical,
            Err(err) => {
                scan.skipped.push((folder, err.to_string()));
                continue;
            }
        };
        if !entered.insert(canonical) {
            continue;
        }
        let mut children = match std::fs::read_dir(&folder) {
            Ok(children) => children.filter_map(Result::ok).collect::<Vec<_>>(),
            Err(err) => {
                scan.skipped.push((folder, err.to_string()));
                continue;
            }
        };
        children.sort_by_key(std::fs::DirEntry::file_name);
        let mut subfolders = Vec::new();
        for child in children {
            let path = child.path();
            // Follows symlinks: a linked folder is scanned (once), a linked file listed.
            let Ok(metadata) = std::fs::metadata(&path) else {
                continue;
            };
            if metadata.is_dir() {
                if depth < limits.max_depth {
                    subfolders.push(path);
                } else {
                    scan.skipped
                        .push((path, format!("deeper than {} folders", limits.max_depth)));
                }
            } else if is_ir_file(&path) {
                if scan.entries.len() >= limits.max_files || stop.load(Relaxed) {
                    scan.truncated = true;
                    return;
                }
                scan.entries.push(Entry {
                    info: read_info(&path, crate::ir::IR_LIMITS)
                        .map_err(|err| err.in_file(&crate::ir::file_name(&path)).to_string()),
                    path,
                    root: root.to_path_buf(),
                });
            }
        }
        stack.extend(subfolders.into_iter().rev().map(|path| (path, depth + 1)));
    }
}

/// Whether `path` has one of the decoder's [`EXTENSIONS`] (case-insensitive), as the file
/// dialog offers them.
pub fn is_ir_file(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| EXTENSIONS.iter().any(|known| e.eq_ignore_ascii_case(known)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("longtail-library-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn write_wav(path: &Path, channels: usize, frames: usize) {
        let data: Vec<Vec<f32>> = (0..channels).map(|_| vec![0.25; frames]).collect();
        crate::ir::wav::write_f32(path, 48_000, &data).unwrap();
    }

    #[test]
    fn lists_nested_files_with_their_headers_and_the_broken_with_a_reason() {
        let dir = temp_dir("nested");
        std::fs::create_dir_all(dir.join("halls/big")).unwrap();
        write_wav(&dir.join("a.wav"), 2, 4800);
        write_wav(&dir.join("halls/b.WAV"), 4, 960);
        write_wav(&dir.join("halls/big/c.wav"), 1, 48_000);
        std::fs::write(dir.join("halls/broken.wav"), b"RIFF....WAVEjunk").unwrap();
        std::fs::write(dir.join("notes.txt"), b"not an IR").unwrap();
        let scan = scan(std::slice::from_ref(&dir), ScanLimits::default());
        let names: Vec<String> = scan.entries.iter().map(Entry::name).collect();
        assert_eq!(names, ["a.wav", "b.WAV", "c.wav", "broken.wav"]);
        let info = scan.entries[1].info.as_ref().unwrap();
        assert_eq!(
            (info.num_channels, info.sample_rate, info.num_frames),
            (4, 48_000, Some(960))
        );
        assert_eq!(scan.entries[2].seconds(), Some(1.0));
        let reason = scan.entries[3].info.as_ref().unwrap_err();
        assert!(
            !reason.contains('\n') && reason.contains("broken.wav"),
            "{reason}"
        );
        assert!(scan.entries.iter().all(|e| e.root == dir));
        assert!(!scan.truncated && scan.skipped.is_empty());

        let limited = super::scan(
            std::slice::from_ref(&dir),
            ScanLimits {
                max_files: 2,
                max_depth: 16,
            },
        );
        assert_eq!(limited.entries.len(), 2);
        assert!(limited.truncated);
        let shallow = super::scan(
            std::slice::from_ref(&dir),
            ScanLimits {
                max_files: 10,
                max_depth: 1,
            },
        );
        assert_eq!(shallow.entries.len(), 3, "{:?}", shallow.entries);
        assert_eq!(shallow.skipped.len(), 1);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_loop_and_a_missing_root_end_the_scan() {
        let dir = temp_dir("loop");
        std::fs::create_dir_all(dir.join("a/b")).unwrap();
        write_wav(&dir.join("a/b/x.wav"), 1, 10);
        std::os::unix::fs::symlink(dir.join("a"), dir.join("a/b/back")).unwrap();
        std::os::unix::fs::symlink(&dir, dir.join("a/root")).unwrap();
        let missing = dir.join("missing");
        let scan = scan(
            &[dir.clone(), missing.clone(), dir.join("a")],
            ScanLimits::default(),
        );
        assert_eq!(scan.entries.len(), 1, "{:?}", scan.entries);
        assert_eq!(scan.skipped.len(), 1);
        assert_eq!(scan.skipped[0].0, missing);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
