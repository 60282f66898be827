//! The Library tab: the IR files under the user's folders ([`crate::library`]), with a search,
//! favourites, and next/previous that load the neighbouring file while the audio runs.
//!
//! The settings file (folders, favourites) is read and written, and the folders scanned, on a
//! helper thread of the window's jobs (`longtail-library`), one job at a time; the GUI thread
//! only polls. A favourite shows at once and is written by the next job, which merges it with
//! what other instances wrote meanwhile. Loading a file goes through the same file request as
//! "Open file..." (decoded on a helper thread, encoded into the project's state, swapped in by
//! the preparer with a crossfade), so stepping costs the audio thread nothing.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

use super::theme::Palette;
use super::{EditorApp, FileRequest};
use crate::library::browse::{self, Step};
use crate::library::settings::{Change, LibrarySettings, SettingsFile};
use crate::library::{Entry, Scan, ScanLimits, scan_until};
use crate::preparer::Slot;

/// How long closing the window waits for a library job: a scan stops within one file's header
/// once told to (`stop`), a settings write takes milliseconds; only a folder dialog, which
/// waits for the user, can take longer (the library is then pinned, see `threads`).
const LIBRARY_JOIN_BOUND: Duration = Duration::from_secs(1);

/// What a library job does before it (optionally) scans.
enum Work {
    /// Read the settings file.
    Load,
    /// Apply changes to it (merged with what is there now).
    Apply(Vec<Change>),
    /// Ask for a folder with the desktop's dialog, then add it.
    AddFolder,
}

/// What a library job found.
struct Update {
    /// The settings as the file holds them now, or why they could not be read or written.
    settings: Result<LibrarySettings, String>,
    /// A new scan of the settings' folders, where the job rescanned, with what the search
    /// looks in for each entry ([`browse::haystacks`], made here off the GUI thread).
    scan: Option<(Scan, Vec<String>)>,
}

/// The tab's state on the GUI thread.
pub(super) struct LibraryView {
    /// The settings as last read or written (favourites shown at once on a click).
    settings: Option<LibrarySettings>,
    /// Why the settings file could not be used, until the next job succeeds.
    settings_error: Option<String>,
    scan: Option<Scan>,
    /// The scan's entries' [`browse::haystacks`].
    haystacks: Vec<String>,
    job: Option<super::Job<Update>>,
    /// Changes made while a job ran, for the next one.
    queued: Vec<Change>,
    search: String,
    favourites_only: bool,
    /// The file last asked for: next/previous step from it while its load runs.
    requested: Option<PathBuf>,
    /// Files whose header read but whose load failed, with the reason.
    failed: Vec<(PathBuf, String)>,
    /// Set when the window closes, so that a running scan ends.
    stop: Arc<AtomicBool>,
    /// The shown entries and what they were worked out from (search, favourites only, the
    /// favourites, the scan's number): a 20,000-file library is filtered once per change, not
    /// once per frame.
    shown: (String, bool, Vec<PathBuf>, u64, Arc<[usize]>),
    /// Counts the scans received, for `shown`.
    scans: u64,
    /// Read the folders again once no job runs (a file was written into one: a captured IR).
    rescan_asked: bool,
}

impl LibraryView {
    /// An empty view; `stop` is set when the window closes (`WindowThreads::end`), and cleared
    /// when the tab next starts a job.
    pub(super) fn new(stop: Arc<AtomicBool>) -> Self {
        Self {
            settings: None,
            settings_error: None,
            scan: None,
            haystacks: Vec::new(),
            job: None,
            queued: Vec::new(),
            search: String::new(),
            favourites_only: false,
            requested: None,
            failed: Vec::new(),
            stop,
            shown: (String::new(), false, Vec::new(), 0, Arc::from(Vec::new())),
            scans: 0,
            rescan_asked: false,
        }
    }
}

/// Runs one job: the settings, then the scan of their folders when `rescan`.
fn run(work: Work, rescan: bool, stop: &AtomicBool) -> Update {
    let file = SettingsFile::user();
    let settings = match (&file, work) {
        (None, _) => Ok(LibrarySettings::first_run()),
        (Some(file), Work::Load) => file.load(),
        (Some(file), Work::Apply(changes)) => file.apply(&changes),
        (Some(file), Work::AddFolder) => {
            match rfd::FileDialog::new()
                .set_title("Longtail: add a folder of IRs to the library")
                .pick_folder()
            {
                Some(folder) => file.apply(&[Change::AddFolder(folder)]),
                None => file.load(),
            }
        }
    }
    .map_err(|err| err.to_string());
    let scan = rescan.then(|| {
        let folders = settings
            .as_ref()
            .map(|s| s.folders.clone())
            .unwrap_or_default();
        let scan = scan_until(&folders, ScanLimits::default(), stop);
        let haystacks = browse::haystacks(&scan.entries);
        (scan, haystacks)
    });
    Update { settings, scan }
}

impl EditorApp {
    /// Starts a library job unless one runs.
    fn start_library_job(&mut self, work: Work, rescan: bool) {
        if self.library.job.is_some() {
            return;
        }
        let stop = Arc::clone(&self.library.stop);
        stop.store(false, Relaxed);
        let spawned =
            self.window_threads
                .jobs
                .spawn("longtail-library", LIBRARY_JOIN_BOUND, move || {
                    run(work, rescan, &stop)
                });
        match spawned {
            Ok(job) => self.library.job = Some(job),
            Err(err) => self.library.settings_error = Some(format!("cannot scan: {err}")),
        }
    }

    /// Collects a finished job, and starts the first one or the queued changes.
    fn poll_library(&mut self) {
        let view = &mut self.library;
        if let Some(job) = &view.job {
            match job.poll() {
                super::Poll::Pending => return,
                super::Poll::Ready(update) => {
                    match update.settings {
                        Ok(settings) => {
                            view.settings = Some(settings);
                            view.settings_error = None;
                        }
                        Err(err) => view.settings_error = Some(err),
                    }
                    if let Some((scan, haystacks)) = update.scan {
                        view.scan = Some(scan);
                        view.haystacks = haystacks;
                        view.scans += 1;
                    }
                }
                super::Poll::Lost => view.settings_error = Some("the library job stopped".into()),
            }
            view.job = None;
        }
        if (view.settings.is_none() && view.settings_error.is_none()) || view.rescan_asked {
            view.rescan_asked = false;
            self.start_library_job(Work::Load, true);
        } else if !view.queued.is_empty() {
            let changes = std::mem::take(&mut view.queued);
            let rescan = changes
                .iter()
                .any(|c| matches!(c, Change::AddFolder(_) | Change::RemoveFolder(_)));
            self.start_library_job(Work::Apply(changes), rescan);
        }
    }

    /// Has the tab read the library's folders again when it next shows (a file was written into
    /// one of them: the Capture tab saved an IR).
    pub(super) fn rescan_library(&mut self) {
        self.library.rescan_asked = true;
    }

    /// A change to the settings: shown now, written by the next job.
    fn change_library(&mut self, change: Change) {
        if let Some(settings) = &mut self.library.settings {
            match &change {
                Change::AddFavourite(path) if !settings.favourites.contains(path) => {
                    settings.favourites.push(path.clone())
                }
                Change::RemoveFavourite(path) => settings.favourites.retain(|f| f != path),
                Change::RemoveFolder(path) => settings.folders.retain(|f| f != path),
                _ => {}
            }
        }
        self.library.queued.push(change);
    }

    /// The file playing, or the one asked for last while its load runs.
    fn library_current(&self) -> Option<PathBuf> {
        if self.file_job.is_some()
            && let Some(requested) = &self.library.requested
        {
            return Some(requested.clone());
        }
        self.params
            .ir_file
            .current()
            .and_then(|(file, _)| file.paths.first().cloned())
    }

    /// Loads `path` as the IR file (on the file request's helper thread).
    fn library_load(&mut self, path: PathBuf) {
        if self.file_job.is_some() {
            return;
        }
        self.library.requested = Some(path.clone());
        self.start_file_request(FileRequest::Paths(vec![path]));
    }

    /// Records the reason a requested file failed to load, once its request has ended.
    fn note_library_failure(&mut self) {
        if self.file_job.is_some() {
            return;
        }
        let Some(requested) = self.library.requested.take() else {
            return;
        };
        if let Some(error) = &self.file_error
            && self.library_current().as_deref() != Some(requested.as_path())
        {
            self.library.failed.retain(|(path, _)| *path != requested);
            self.library.failed.push((requested, error.clone()));
        }
    }

    /// Steps to the neighbouring file of the shown list.
    fn library_step(&mut self, shown: &[usize], step: Step) {
        let Some(scan) = &self.library.scan else {
            return;
        };
        let current = self.library_current();
        if let Some(index) = browse::neighbour(&scan.entries, shown, current.as_deref(), step) {
            let path = scan.entries[index].path.clone();
            self.library_load(path);
        }
    }

    /// The indices of the entries to show, worked out again only when what they depend on
    /// changed.
    fn library_shown(&mut self, favourites: &[PathBuf]) -> Arc<[usize]> {
        let view = &mut self.library;
        let (search, only, favs, scans, _) = &view.shown;
        if *search != view.search
            || *only != view.favourites_only
            || (view.favourites_only && favs.as_slice() != favourites)
            || *scans != view.scans
        {
            let shown: Arc<[usize]> = match &view.scan {
                Some(scan) => browse::shown(
                    &scan.entries,
                    &view.haystacks,
                    &view.search,
                    view.favourites_only,
                    favourites,
                )
                .into(),
                None => Arc::from(Vec::new()),
            };
            view.shown = (
                view.search.clone(),
                view.favourites_only,
                favourites.to_vec(),
                view.scans,
                shown,
            );
        }
        Arc::clone(&view.shown.4)
    }

    pub(super) fn library_tab(&mut self, ui: &mut egui::Ui, view_height: f32) {
        let top = ui.cursor().top();
        self.poll_library();
        self.note_library_failure();
        let favourites = self
            .library
            .settings
            .as_ref()
            .map(|s| s.favourites.clone())
            .unwrap_or_default();
        let shown = self.library_shown(&favourites);
        let busy = self.library.job.is_some();

        ui.horizontal_wrapped(|ui| {
            let idle = self.file_job.is_none();
            if ui
                .add_enabled(idle, egui::Button::new("< Previous"))
                .on_hover_text("Load the previous file of the list; the audio keeps running")
                .clicked()
            {
                self.library_step(&shown, Step::Previous);
            }
            if ui
                .add_enabled(idle, egui::Button::new("Next >"))
                .on_hover_text("Load the next file of the list; the audio keeps running")
                .clicked()
            {
                self.library_step(&shown, Step::Next);
            }
            ui.separator();
            ui.label("Search");
            ui.add(
                egui::TextEdit::singleline(&mut self.library.search)
                    .desired_width(140.0 * self.zoom)
                    .hint_text("name or folder"),
            )
            .on_hover_text("Shows the files whose name or folder holds every word typed");
            ui.checkbox(&mut self.library.favourites_only, "Favourites")
                .on_hover_text("Show only the files marked with a star");
            ui.separator();
            if ui
                .add_enabled(!busy, egui::Button::new("Add folder..."))
                .on_hover_text(
                    "Add a folder of IR files to the library (shared by every Longtail instance)",
                )
                .clicked()
            {
                self.start_library_job(Work::AddFolder, true);
            }
            if ui
                .add_enabled(!busy, egui::Button::new("Rescan"))
                .on_hover_text("Read the library's folders again")
                .clicked()
            {
                self.start_library_job(Work::Load, true);
            }
        });
        self.library_folders(ui);
        self.library_status(ui, shown.len(), busy);
        ui.separator();

        let row_height = ui.spacing().interact_size.y + ui.spacing().item_spacing.y;
        let left = (view_height - (ui.cursor().top() - top)).max(4.0 * row_height);
        let current = self.library_current();
        let mut load = None;
        let mut change = None;
        if let Some(scan) = &self.library.scan {
            egui::ScrollArea::vertical()
                .id_salt("library-list")
                .max_height(left)
                .auto_shrink([false, true])
                .show_rows(ui, row_height, shown.len(), |ui, rows| {
                    for &index in &shown[rows] {
                        let entry = &scan.entries[index];
                        let favourite = favourites.contains(&entry.path);
                        let failed = self
                            .library
                            .failed
                            .iter()
                            .find(|(path, _)| *path == entry.path)
                            .map(|(_, reason)| reason.as_str());
                        let playing = current.as_deref() == Some(entry.path.as_path());
                        let (star, toggle, into_b) =
                            library_row(ui, entry, favourite, playing, failed);
                        if star {
                            change = Some(if favourite {
                                Change::RemoveFavourite(entry.path.clone())
                            } else {
                                Change::AddFavourite(entry.path.clone())
                            });
                        }
                        if (toggle || into_b) && entry.info.is_ok() {
                            load = Some((entry.path.clone(), into_b));
                        }
                    }
                });
        }
        if let Some(change) = change {
            self.change_library(change);
        }
        match load {
            Some((path, false)) => self.library_load(path),
            Some((path, true)) => {
                self.start_file_request_into(FileRequest::Paths(vec![path]), Slot::B);
            }
            None => {}
        }
    }

    /// The library's folders, each with a button that removes it.
    fn library_folders(&mut self, ui: &mut egui::Ui) {
        let folders = self
            .library
            .settings
            .as_ref()
            .map(|s| s.folders.clone())
            .unwrap_or_default();
        let mut remove = None;
        ui.horizontal_wrapped(|ui| {
            ui.label(egui::RichText::new("Folders:").color(Palette::TEXT_WEAK));
            if folders.is_empty() {
                ui.label(egui::RichText::new("none").color(Palette::TEXT_WEAK));
            }
            for folder in &folders {
                ui.add(egui::Label::new(folder.display().to_string()).truncate());
                if ui
                    .small_button("x")
                    .on_hover_text("Remove this folder from the library (its files stay)")
                    .clicked()
                {
                    remove = Some(folder.clone());
                }
            }
        });
        if let Some(folder) = remove {
            self.change_library(Change::RemoveFolder(folder));
        }
    }

    /// How many files there are and are shown, and what went wrong.
    fn library_status(&mut self, ui: &mut egui::Ui, shown: usize, busy: bool) {
        ui.horizontal_wrapped(|ui| {
            if let Some(error) = &self.library.settings_error {
                ui.add(egui::Label::new(egui::RichText::new(error).color(Palette::ERROR)).wrap());
            }
            let Some(scan) = &self.library.scan else {
                ui.label(egui::RichText::new("scanning...").color(Palette::TEXT_WEAK));
                return;
            };
            let mut text = format!("{} files, {shown} shown", scan.entries.len());
            if scan.truncated {
                text.push_str(&format!(
                    " (the scan stopped at {} files)",
                    ScanLimits::default().max_files
                ));
            }
            if busy {
                text.push_str(", scanning...");
            }
            ui.label(egui::RichText::new(text).color(Palette::TEXT_WEAK));
            if !scan.skipped.is_empty() {
                let reasons: Vec<String> = scan
                    .skipped
                    .iter()
                    .map(|(path, why)| format!("{}: {why}", path.display()))
                    .collect();
                ui.label(
                    egui::RichText::new(format!("{} folders skipped", scan.skipped.len()))
                        .color(Palette::WARN),
                )
                .on_hover_text(reasons.join("\n"));
            }
        });
    }
}

/// One file's row: its star, its name (a click loads it; its menu, "Load into B", loads it as
/// the second IR), its folder and what its header says, or why it cannot play. Returns whether
/// the star and the name were clicked, and whether "Load into B" was.
fn library_row(
    ui: &mut egui::Ui,
    entry: &Entry,
    favourite: bool,
    playing: bool,
    failed: Option<&str>,
) -> (bool, bool, bool) {
    ui.horizontal(|ui| {
        let star = star_button(ui, favourite)
            .on_hover_text(if favourite {
                "Favourite: click to unmark"
            } else {
                "Mark as a favourite"
            })
            .clicked();
        let name = egui::RichText::new(entry.name());
        let name = if playing { name.strong() } else { name };
        let response = ui.selectable_label(playing, name).on_hover_text(format!(
            "{}\nA click loads it; the right button loads it into B (the second IR)",
            entry.path.display()
        ));
        let mut into_b = false;
        response.context_menu(|ui| {
            if ui.button("Load into B").clicked() {
                into_b = true;
                ui.close();
            }
        });
        let clicked = response.clicked();
        let folder = browse::folder_below_root(entry);
        if !folder.is_empty() {
            ui.label(egui::RichText::new(folder).color(Palette::TEXT_WEAK));
        }
        let problem = match &entry.info {
            Err(reason) => Some(reason.as_str()),
            Ok(_) => failed,
        };
        match (problem, &entry.info) {
            (Some(reason), _) => {
                ui.add(
                    egui::Label::new(egui::RichText::new(reason).color(Palette::WARN)).truncate(),
                )
                .on_hover_text(reason);
            }
            (None, Ok(info)) => {
                let mut text = format!("{} ch", info.num_channels);
                if let Some(seconds) = entry.seconds() {
                    text.push_str(&format!(", {seconds:.2} s"));
                }
                text.push_str(&format!(", {} Hz", info.sample_rate));
                ui.add(
                    egui::Label::new(egui::RichText::new(text).color(Palette::TEXT_WEAK))
                        .truncate(),
                );
            }
            (None, Err(_)) => {}
        }
        (star, clicked, into_b)
    })
    .inner
}

/// A five-pointed star to click: filled for a favourite, outlined otherwise. Drawn, since the
/// editor's fonts (egui's defaults without the emoji fonts) have no star.
fn star_button(ui: &mut egui::Ui, filled: bool) -> egui::Response {
    let side = ui.spacing().interact_size.y;
    let (rect, response) = ui.allocate_exact_size(egui::vec2(side, side), egui::Sense::click());
    let colour = if response.hovered() || filled {
        Palette::HANDLE
    } else {
        Palette::TEXT_WEAK
    };
    let (centre, outer) = (rect.center(), 0.4 * side);
    let points: Vec<egui::Pos2> = (0..10)
        .map(|i| {
            let radius = if i % 2 == 0 { outer } else { 0.4 * outer };
            let angle = std::f32::consts::PI * (i as f32 / 5.0 - 0.5);
            centre + radius * egui::vec2(angle.cos(), angle.sin())
        })
        .collect();
    let painter = ui.painter();
    if filled {
        // A star is not convex: a fan of triangles from the centre fills it.
        for i in 0..10 {
            painter.add(egui::Shape::convex_polygon(
                vec![centre, points[i], points[(i + 1) % 10]],
                colour,
                egui::Stroke::NONE,
            ));
        }
    } else {
        painter.add(egui::Shape::closed_line(
            points,
            egui::Stroke::new(1.2, colour),
        ));
    }
    response
}
