//! What the editor's browser shows of a [`Scan`](super::Scan): the entries a search and the
//! favourites filter leave, in the scan's order, and the one next or previous loads. No egui
//! and no file I/O, so the tests check it directly.

use std::path::{Path, PathBuf};

use super::Entry;

/// Which way next/previous steps through the shown entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Next,
    Previous,
}

/// What the search looks in for `entry`: its name and its folder below the root, lower case.
/// Made once per scan ([`haystacks`]), so typing in the search filters a large library
/// without allocating per entry.
pub fn haystack(entry: &Entry) -> String {
    format!("{} {}", entry.name(), folder_below_root(entry)).to_lowercase()
}

/// [`haystack`] of every entry, in order.
pub fn haystacks(entries: &[Entry]) -> Vec<String> {
    entries.iter().map(haystack).collect()
}

/// Whether an entry with `haystack` matches the search `query`: every word of it
/// (case-insensitive) appears in the file's name or in its folder below the root. An empty
/// query matches everything.
pub fn matches(haystack: &str, query: &str) -> bool {
    query
        .split_whitespace()
        .all(|word| haystack.contains(&word.to_lowercase()))
}

/// The folder `entry` sits in, relative to its root (empty at the root itself).
pub fn folder_below_root(entry: &Entry) -> String {
    let folder = entry.path.parent().unwrap_or(Path::new(""));
    folder
        .strip_prefix(&entry.root)
        .unwrap_or(folder)
        .display()
        .to_string()
}

/// The indices of `entries` to show: those matching `query` (`haystacks` are the entries'
/// [`haystacks`]), and only the favourites when `favourites_only` is set.
pub fn shown(
    entries: &[Entry],
    haystacks: &[String],
    query: &str,
    favourites_only: bool,
    favourites: &[PathBuf],
) -> Vec<usize> {
    entries
        .iter()
        .zip(haystacks)
        .enumerate()
        .filter(|(_, (entry, _))| !favourites_only || favourites.contains(&entry.path))
        .filter(|(_, (_, haystack))| matches(haystack, query))
        .map(|(index, _)| index)
        .collect()
}

/// The entry `step` loads from `current`: the neighbour in `shown` order, wrapping at the ends
/// and skipping files whose header already says they cannot play. From a file not shown (or
/// none), Next gives the first playable entry and Previous the last. `None` when no shown
/// entry can play.
pub fn neighbour(
    entries: &[Entry],
    shown: &[usize],
    current: Option<&Path>,
    step: Step,
) -> Option<usize> {
    let count = shown.len();
    if count == 0 {
        return None;
    }
    let position = current.and_then(|path| shown.iter().position(|&i| entries[i].path == path));
    let playable = |position: usize| entries[shown[position]].info.is_ok();
    let start = match (position, step) {
        (Some(at), Step::Next) => (at + 1) % count,
        (Some(at), Step::Previous) => (at + count - 1) % count,
        (None, Step::Next) => 0,
        (None, Step::Previous) => count - 1,
    };
    (0..count)
        .map(|offset| match step {
            Step::Next => (start + offset) % count,
            Step::Previous => (start + count - offset) % count,
        })
        .find(|&position| playable(position))
        .map(|position| shown[position])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::decode::FileInfo;

    fn entry(path: &str, playable: bool) -> Entry {
        let info = FileInfo {
            format: "WAV".into(),
            sample_rate: 48_000,
            num_channels: 2,
            num_frames: Some(48_000),
            file_bytes: 1,
            channel_mask: None,
        };
        Entry {
            path: PathBuf::from(path),
            root: PathBuf::from("/irs"),
            info: if playable {
                Ok(info)
            } else {
                Err("broken".into())
            },
        }
    }

    fn library() -> Vec<Entry> {
        vec![
            entry("/irs/Halls/Big Hall.wav", true),
            entry("/irs/Halls/broken hall.wav", false),
            entry("/irs/Plates/Gold Plate.flac", true),
            entry("/irs/Rooms/Small Room.wav", true),
        ]
    }

    #[test]
    fn the_search_matches_every_word_in_name_or_folder_in_any_case() {
        let entries = library();
        let hay = haystacks(&entries);
        let find = |query: &str, only: bool, favourites: &[PathBuf]| {
            shown(&entries, &hay, query, only, favourites)
        };
        assert_eq!(find("", false, &[]), [0, 1, 2, 3]);
        assert_eq!(find("hall", false, &[]), [0, 1]);
        assert_eq!(find("HALLS big", false, &[]), [0]);
        assert_eq!(find("plate gold", false, &[]), [2]);
        assert_eq!(find("cathedral", false, &[]), Vec::<usize>::new());
        assert_eq!(folder_below_root(&entries[2]), "Plates");
        let favourites = [PathBuf::from("/irs/Rooms/Small Room.wav")];
        assert_eq!(find("", true, &favourites), [3]);
        assert_eq!(find("hall", true, &favourites), Vec::<usize>::new());
    }

    #[test]
    fn next_and_previous_wrap_and_skip_what_cannot_play() {
        let entries = library();
        let hay = haystacks(&entries);
        let all = shown(&entries, &hay, "", false, &[]);
        let at = |i: usize| Some(entries[i].path.as_path());
        assert_eq!(neighbour(&entries, &all, None, Step::Next), Some(0));
        assert_eq!(neighbour(&entries, &all, None, Step::Previous), Some(3));
        // The broken file (1) is stepped over both ways.
        assert_eq!(neighbour(&entries, &all, at(0), Step::Next), Some(2));
        assert_eq!(neighbour(&entries, &all, at(2), Step::Previous), Some(0));
        // Wrapping at both ends.
        assert_eq!(neighbour(&entries, &all, at(3), Step::Next), Some(0));
        assert_eq!(neighbour(&entries, &all, at(0), Step::Previous), Some(3));
        // Within a search: the current file outside it starts from the first match.
        let halls = shown(&entries, &hay, "hall", false, &[]);
        assert_eq!(neighbour(&entries, &halls, at(3), Step::Next), Some(0));
        assert_eq!(neighbour(&entries, &halls, at(0), Step::Next), Some(0));
        // Nothing playable, or nothing shown.
        let broken = shown(&entries, &hay, "broken", false, &[]);
        assert_eq!(neighbour(&entries, &broken, None, Step::Next), None);
        assert_eq!(neighbour(&entries, &[], None, Step::Previous), None);
    }
}
