//! The editor's persisted choices shown as rows of buttons or a menu: the tab and the IR view. Each is
//! saved with the plugin's state by its position and can be taken from an environment variable
//! by name, for screenshots. Uses egui only.

use std::sync::atomic::AtomicU8;
use std::sync::atomic::Ordering::Relaxed;

/// take from an environment variable by name (case-insensitive), for screenshots.
pub(super) trait Choice: Copy + PartialEq + 'static {
    /// Every choice, the default first, in the order of their saved positions (append only).
    const ALL: &'static [Self];
    /// The order the buttons show them in.
    const SHOWN: &'static [Self] = Self::ALL;
    /// The variable naming the choice to open with.
    const ENV: &'static str;

    fn name(self) -> &'static str;

    fn from_index(idx: u8) -> Self {
        Self::ALL.get(idx as usize).copied().unwrap_or(Self::ALL[0])
    }

    fn index(self) -> u8 {
        Self::ALL.iter().position(|c| *c == self).unwrap_or(0) as u8
    }

    fn from_env() -> Option<Self> {
        let name = std::env::var(Self::ENV).ok()?;
        Self::ALL
            .iter()
            .copied()
            .find(|choice| choice.name().eq_ignore_ascii_case(name.trim()))
    }

    /// The buttons, selecting into the persisted `slot`.
    fn buttons(ui: &mut egui::Ui, slot: &AtomicU8) {
        let mut current = Self::from_index(slot.load(Relaxed));
        for &candidate in Self::SHOWN {
            ui.selectable_value(&mut current, candidate, candidate.name());
        }
        slot.store(current.index(), Relaxed);
    }

    /// A drop-down menu, selecting into the persisted `slot`.
    fn menu(ui: &mut egui::Ui, id: &str, slot: &AtomicU8) -> egui::Response {
        let mut current = Self::from_index(slot.load(Relaxed));
        let response = egui::ComboBox::from_id_salt(id)
            .selected_text(current.name())
            .show_ui(ui, |ui| {
                for &candidate in Self::ALL {
                    ui.selectable_value(&mut current, candidate, candidate.name());
                }
            })
            .response;
        slot.store(current.index(), Relaxed);
        response
    }
}

/// The editor's tabs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Tab {
    Reverb,
    Engine,
    Thermal,
    /// The early/late balance and the tone shelves ([`super::reverb_tab`]).
    Shape,
    /// The IR library ([`super::library_tab`]).
    Library,
    /// Measuring a room ([`super::capture_tab`]).
    Capture,
}

impl Choice for Tab {
    const ALL: &'static [Self] = &[
        Tab::Reverb,
        Tab::Engine,
        Tab::Thermal,
        Tab::Shape,
        Tab::Library,
        Tab::Capture,
    ];
    const SHOWN: &'static [Self] = &[
        Tab::Reverb,
        Tab::Shape,
        Tab::Library,
        Tab::Engine,
        Tab::Thermal,
        Tab::Capture,
    ];
    const ENV: &'static str = "LONGTAIL_EDITOR_TAB";

    fn name(self) -> &'static str {
        match self {
            Tab::Reverb => "Reverb",
            Tab::Engine => "Engine",
            Tab::Thermal => "Thermal",
            Tab::Shape => "Shape",
            Tab::Library => "Library",
            Tab::Capture => "Capture",
        }
    }
}

/// How the Reverb tab draws the IR.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum IrView {
    Waveform,
    Spectrogram,
    /// The grid of the bus's paths ([`super::matrix_view`]).
    Paths,
}

impl Choice for IrView {
    const ALL: &'static [Self] = &[IrView::Waveform, IrView::Spectrogram, IrView::Paths];
    const ENV: &'static str = "LONGTAIL_EDITOR_IR_VIEW";

    fn name(self) -> &'static str {
        match self {
            IrView::Waveform => "Waveform",
            IrView::Spectrogram => "Spectrogram",
            IrView::Paths => "Paths",
        }
    }
}
