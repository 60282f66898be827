//! The IR library's user settings: the folders the user added and the favourite files, in
//! `library.json` in the platform's config folder ([`SettingsFile::user`]), not in a project's
//! state. Every plugin instance in a host (threads of one process, or several processes)
//! shares the file, so a write merges ([`SettingsFile::apply`]: lock, re-read, change, write
//! a temporary file, sync, rename). A file this build cannot read whole (not JSON, from a
//! newer version, too large) is refused with an error that names it, and never overwritten.
//!
//! Blocking file I/O that allocates: call off the audio thread (the editor's browser and the
//! CLI call it from threads of their own).

use std::collections::HashSet;
use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use thiserror::Error;

/// The settings format this build writes; files up to it are read, later ones refused.
pub const VERSION: u32 = 1;
/// A settings file larger than this is refused before it is read (the longest lists fit).
pub const MAX_FILE_BYTES: u64 = 4 << 20; // 4 MiB
/// Most folders, and most favourites, a settings file holds.
pub const MAX_ENTRIES: usize = 10_000;
/// Names the folder that holds `library.json`, in place of the platform's (tests, portable use).
pub const CONFIG_DIR_ENV: &str = "LONGTAIL_CONFIG_DIR";

const FILE_NAME: &str = "library.json";

/// The folder a new library starts with: `Impulse Responses` in the user's documents folder
/// (XDG documents on Linux, Documents on Windows and macOS); `None` where there is none.
pub fn default_folder() -> Option<PathBuf> {
    dirs::document_dir().map(|documents| documents.join("Impulse Responses"))
}

/// What the settings file holds, less its version. Both lists keep the order the user added in
/// and hold no duplicates. Paths are compared as given (component by component), not
/// canonicalised, since a folder may sit on a drive that is not plugged in.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LibrarySettings {
    /// The library's root folders, scanned in this order ([`super::scan`]).
    #[serde(default)]
    pub folders: Vec<PathBuf>,
    /// The favourite IR files.
    #[serde(default)]
    pub favourites: Vec<PathBuf>,
}

/// The file's layout: the version first, for a reader to check before anything else.
#[derive(serde::Serialize)]
struct OnDisk<'a> {
    version: u32,
    #[serde(flatten)]
    settings: &'a LibrarySettings,
}

impl LibrarySettings {
    /// What a user without a settings file has: the [`default_folder`] (whether or not it
    /// exists yet; the scan lists a missing one as skipped) and no favourites.
    pub fn first_run() -> Self {
        let mut settings = Self::default();
        settings.folders.extend(default_folder());
        settings
    }

    /// Applies `changes` in order and returns whether anything changed. Errs, leaving `self`
    /// half changed, where a list would outgrow [`MAX_ENTRIES`] or a path cannot be stored.
    fn apply_changes(&mut self, changes: &[Change], file: &Path) -> Result<bool, SettingsError> {
        let mut changed = false;
        for change in changes {
            let (list, path, add) = match change {
                Change::AddFolder(path) => (&mut self.folders, path, true),
                Change::RemoveFolder(path) => (&mut self.folders, path, false),
                Change::AddFavourite(path) => (&mut self.favourites, path, true),
                Change::RemoveFavourite(path) => (&mut self.favourites, path, false),
            };
            match (add, list.iter().position(|listed| listed == path)) {
                // JSON holds text only: serde refuses a path that is not Unicode.
                (true, None) if path.to_str().is_none() => {
                    return Err(SettingsError::NotUnicode(path.clone()));
                }
                (true, None) => list.push(path.clone()),
                (false, Some(idx)) => drop(list.remove(idx)),
                _ => continue,
            }
            changed = true;
        }
        self.check_bounds(file).map(|()| changed)
    }

    fn check_bounds(&self, file: &Path) -> Result<(), SettingsError> {
        for (list, what) in [(&self.folders, "folders"), (&self.favourites, "favourites")] {
            if list.len() > MAX_ENTRIES {
                return Err(SettingsError::TooMany(file.to_path_buf(), what));
            }
        }
        Ok(())
    }
}

/// One edit, applied by [`SettingsFile::apply`] to the file as it is at that moment, so edits
/// other instances made in between are kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Appends a root folder, unless it is listed already.
    AddFolder(PathBuf),
    /// Drops a root folder, if listed.
    RemoveFolder(PathBuf),
    /// Appends a favourite file, unless it is listed already.
    AddFavourite(PathBuf),
    /// Drops a favourite file, if listed.
    RemoveFavourite(PathBuf),
}

/// Why the settings could not be read or written. Each names the file (the first field), so
/// the editor can show the message as it is; nothing is overwritten after any of them.
#[derive(Debug, Error)]
pub enum SettingsError {
    /// The file, its folder or its lock could not be opened, read, written or renamed.
    #[error("{}: {}", .0.display(), .1)]
    Io(PathBuf, #[source] std::io::Error),
    /// Not a settings file (not JSON, no version number, wrong field types), and why.
    #[error("{} is not a library settings file ({}); fix or remove it", .0.display(), .1)]
    Invalid(PathBuf, String),
    /// From a newer Longtail (its version): rewriting it in this format would lose data.
    #[error("{} is from a newer Longtail (version {}); left as it is", .0.display(), .1)]
    FutureVersion(PathBuf, u64),
    /// The file, or the one a write would make, is larger than [`MAX_FILE_BYTES`].
    #[error("{} would be larger than {MAX_FILE_BYTES} bytes", .0.display())]
    TooLarge(PathBuf),
    /// A list (`"folders"` or `"favourites"`) has, or would get, over [`MAX_ENTRIES`] paths.
    #[error("{} would list more than {MAX_ENTRIES} {}", .0.display(), .1)]
    TooMany(PathBuf, &'static str),
    /// A path to add (not the file's) is not valid Unicode, which JSON cannot hold.
    #[error("{} cannot be stored in the library settings: not valid Unicode", .0.display())]
    NotUnicode(PathBuf),
}

/// The settings file of one user: where it is, and the locked read-modify-rename that writes
/// it. Holds no handle between calls, so any number of values may name the same file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsFile {
    /// The settings file (for the editor to show).
    pub path: PathBuf,
}

impl SettingsFile {
    /// The user's file: `library.json` in the folder [`CONFIG_DIR_ENV`] names, or else in
    /// `longtail/` of the platform's config folder (`$XDG_CONFIG_HOME` or `~/.config`,
    /// `%APPDATA%`, `~/Library/Application Support`). `None` where neither is known.
    pub fn user() -> Option<Self> {
        let folder = match std::env::var_os(CONFIG_DIR_ENV) {
            Some(folder) if !folder.is_empty() => PathBuf::from(folder),
            _ => dirs::config_dir()?.join("longtail"),
        };
        Some(Self::at(folder.join(FILE_NAME)))
    }

    /// The file at `path`; its lock and temporary files go next to it (`library.json.lock`).
    pub fn at(path: PathBuf) -> Self {
        Self { path }
    }

    /// The settings as the file has them, or [`LibrarySettings::first_run`] where there is no
    /// file. Reads without the lock: writers replace the file by rename, so a reader sees the
    /// old file or the new one whole. Blocking file I/O.
    pub fn load(&self) -> Result<LibrarySettings, SettingsError> {
        Ok(self.read()?.unwrap_or_else(LibrarySettings::first_run))
    }

    /// Applies `changes` to the file as it is now and returns the merged settings: locks (waiting
    /// for other writers), re-reads (no file: [`LibrarySettings::first_run`]) and, where the
    /// changes change anything, writes; creates the folder where needed. Writes nothing where
    /// the file cannot be read whole or a list would outgrow [`MAX_ENTRIES`]. Blocking I/O.
    pub fn apply(&self, changes: &[Change]) -> Result<LibrarySettings, SettingsError> {
        if let Some(folder) = self.path.parent() {
            std::fs::create_dir_all(folder).map_err(|err| io_error(folder, err))?;
        }
        let lock_path = self.path.with_extension("json.lock");
        let lock = File::options().append(true).create(true).open(&lock_path);
        // Held until this returns, after the rename: every writer, in this process or another,
        // reads the file only after the previous writer's rename.
        let lock = lock.and_then(|lock| lock.lock().map(|()| lock));
        let _lock = lock.map_err(|err| io_error(&lock_path, err))?;
        let mut settings = self.read()?.unwrap_or_else(LibrarySettings::first_run);
        if settings.apply_changes(changes, &self.path)? {
            self.write(&settings)?;
        }
        Ok(settings)
    }

    /// The file's settings, `None` where there is no file. Checks the length before reading,
    /// and reads at most one byte past the bound in case the file grew meanwhile.
    fn read(&self) -> Result<Option<LibrarySettings>, SettingsError> {
        let file = match File::open(&self.path) {
            Ok(file) => file,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(err) => return Err(io_error(&self.path, err)),
        };
        // Where the length is unknown, `take` still bounds the read.
        let num_bytes = file.metadata().map_or(0, |metadata| metadata.len());
        let mut bytes = Vec::with_capacity(num_bytes.min(MAX_FILE_BYTES) as usize);
        if num_bytes <= MAX_FILE_BYTES {
            let read = file.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes);
            read.map_err(|err| io_error(&self.path, err))?;
        }
        if num_bytes.max(bytes.len() as u64) > MAX_FILE_BYTES {
            return Err(SettingsError::TooLarge(self.path.clone()));
        }
        self.parse(&bytes).map(Some)
    }

    /// Parses the file's bytes. The version is checked before the fields, so a newer file
    /// whose fields changed type is reported as newer, not as broken.
    fn parse(&self, bytes: &[u8]) -> Result<LibrarySettings, SettingsError> {
        let invalid = |reason: String| SettingsError::Invalid(self.path.clone(), reason);
        let value: serde_json::Value =
            serde_json::from_slice(bytes).map_err(|err| invalid(err.to_string()))?;
        let version = value.get("version").and_then(serde_json::Value::as_u64);
        let version = version.ok_or_else(|| invalid("no version number".into()))?;
        if version > u64::from(VERSION) {
            return Err(SettingsError::FutureVersion(self.path.clone(), version));
        }
        let mut settings: LibrarySettings =
            serde_json::from_value(value).map_err(|err| invalid(err.to_string()))?;
        settings.check_bounds(&self.path)?;
        // A hand-edited file may list a path twice; the first keeps its place.
        for list in [&mut settings.folders, &mut settings.favourites] {
            let mut seen = HashSet::new();
            list.retain(|path| seen.insert(path.clone()));
        }
        Ok(settings)
    }

    /// Writes `settings` to a temporary file next to the file, syncs it and renames it over
    /// the file. Call with the lock held: the temporary file's name is fixed.
    fn write(&self, settings: &LibrarySettings) -> Result<(), SettingsError> {
        let on_disk = OnDisk {
            version: VERSION,
            settings,
        };
        let mut bytes = serde_json::to_vec_pretty(&on_disk)
            .map_err(|err| SettingsError::Invalid(self.path.clone(), err.to_string()))?;
        bytes.push(b'\n');
        if bytes.len() as u64 > MAX_FILE_BYTES {
            return Err(SettingsError::TooLarge(self.path.clone()));
        }
        let temp_path = self.path.with_extension("json.tmp");
        let written = File::create(&temp_path)
            .and_then(|mut temp| temp.write_all(&bytes).and_then(|()| temp.sync_all()))
            .and_then(|()| std::fs::rename(&temp_path, &self.path));
        if let Err(err) = written {
            // Best effort: a stale temporary file is truncated by the next write anyway.
            let _ = std::fs::remove_file(&temp_path);
            return Err(io_error(&self.path, err));
        }
        // Makes the rename itself durable. Best effort: the new file is in place either way,
        // and Windows cannot open a folder as a file.
        #[cfg(unix)]
        if let Some(folder) = self.path.parent() {
            let _ = File::open(folder).and_then(|folder| folder.sync_all());
        }
        Ok(())
    }
}

fn io_error(path: &Path, source: std::io::Error) -> SettingsError {
    SettingsError::Io(path.to_path_buf(), source)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A settings file in a fresh folder of its own, and that folder.
    fn fresh_file(name: &str) -> (SettingsFile, PathBuf) {
        let dir =
            std::env::temp_dir().join(format!("longtail-settings-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        (SettingsFile::at(dir.join("library.json")), dir)
    }

    /// Checks that `apply` and `load` both refuse the file and that it keeps its bytes.
    fn refused(file: &SettingsFile) -> SettingsError {
        let before = std::fs::read(&file.path).unwrap();
        let err = file.apply(&[Change::AddFolder("/b".into())]).unwrap_err();
        assert!(err.to_string().contains("library.json"), "{err}");
        assert!(file.load().is_err());
        assert_eq!(std::fs::read(&file.path).unwrap(), before);
        err
    }

    #[test]
    fn changes_round_trip_in_order_without_duplicates() {
        let (_, dir) = fresh_file("round-trip");
        let file = SettingsFile::at(dir.join("nested/library.json"));
        let mut changes = vec![
            Change::AddFolder("/irs/b".into()),
            Change::AddFolder("/irs/a".into()),
            Change::AddFolder("/irs/b/".into()),
            Change::AddFavourite("/irs/a/hall.wav".into()),
            Change::AddFavourite("/irs/b/plate.wav".into()),
            Change::RemoveFavourite("/irs/a/hall.wav".into()),
        ];
        changes.extend(default_folder().map(Change::RemoveFolder));
        let expected = LibrarySettings {
            folders: vec!["/irs/b".into(), "/irs/a".into()],
            favourites: vec!["/irs/b/plate.wav".into()],
        };
        assert_eq!(file.apply(&changes).unwrap(), expected);
        assert_eq!(file.load().unwrap(), expected);
        let text = std::fs::read_to_string(&file.path).unwrap();
        assert!(text.contains(&format!("\"version\": {VERSION}")), "{text}");
        assert!(!dir.join("nested/library.json.tmp").exists());
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_missing_file_gives_the_default_folder_and_no_favourites() {
        let (file, dir) = fresh_file("missing");
        let first_run = file.load().unwrap();
        assert_eq!(first_run.folders, Vec::from_iter(default_folder()));
        assert!(first_run.favourites.is_empty());
        // A change that changes nothing writes nothing, so the default still follows the OS.
        let unchanged = file.apply(&[Change::RemoveFavourite("/x.wav".into())]);
        assert_eq!(unchanged.unwrap(), first_run);
        assert!(!file.path.exists());
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_file_from_a_newer_version_is_refused_and_left_untouched() {
        let (file, dir) = fresh_file("future");
        std::fs::write(&file.path, br#"{"version": 2, "folders": {"a": "b"}}"#).unwrap();
        let err = refused(&file);
        assert!(matches!(err, SettingsError::FutureVersion(_, 2)), "{err:?}");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_file_that_is_not_settings_is_refused_and_left_untouched() {
        let (file, dir) = fresh_file("garbage");
        let truncated = br#"{"version": 1, "folders": ["/a""#;
        for garbage in [&truncated[..], b"[]", b"", b"\xff\xfe"] {
            std::fs::write(&file.path, garbage).unwrap();
            assert!(matches!(refused(&file), SettingsError::Invalid(..)));
        }
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn an_oversized_file_or_list_is_refused() {
        let (file, dir) = fresh_file("oversized");
        // Sparse, so the test writes little: the length is checked before reading.
        let oversized = File::create(&file.path).unwrap();
        oversized.set_len(MAX_FILE_BYTES + 1).unwrap();
        // Closed before the writes below: Windows (Wine here) refuses to rename over a file
        // this process still holds open.
        drop(oversized);
        assert!(matches!(refused(&file), SettingsError::TooLarge(_)));

        let mut full = LibrarySettings::default();
        full.favourites
            .extend((0..=MAX_ENTRIES).map(|idx| format!("/{idx}.wav").into()));
        file.write(&full).unwrap();
        let err = refused(&file);
        assert!(matches!(err, SettingsError::TooMany(_, "favourites")));
        full.favourites.pop();
        file.write(&full).unwrap();
        assert_eq!(file.load().unwrap(), full);
        let err = file.apply(&[Change::AddFavourite("/one-more.wav".into())]);
        assert!(matches!(err, Err(SettingsError::TooMany(_, "favourites"))));
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn two_instances_adding_favourites_at_once_both_keep_theirs() {
        const NUM_INSTANCES: usize = 8;
        const NUM_FAVOURITES: usize = 25;
        let (file, dir) = fresh_file("instances");
        let favourite = |instance_idx, idx: usize| format!("/irs/{instance_idx}/{idx}.wav").into();
        std::thread::scope(|scope| {
            for instance_idx in 0..NUM_INSTANCES {
                // A value per instance, and each apply opens its own handle of the lock file.
                let file = SettingsFile::at(file.path.clone());
                scope.spawn(move || {
                    for favourite_idx in 0..NUM_FAVOURITES {
                        let change = Change::AddFavourite(favourite(instance_idx, favourite_idx));
                        let merged = file.apply(&[change]).unwrap();
                        let mut own = (0..=favourite_idx).map(|idx| favourite(instance_idx, idx));
                        assert!(own.all(|path: PathBuf| merged.favourites.contains(&path)));
                    }
                });
            }
        });
        // The list holds no duplicates, so all of them are there.
        let settings = file.load().unwrap();
        assert_eq!(settings.favourites.len(), NUM_INSTANCES * NUM_FAVOURITES);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
