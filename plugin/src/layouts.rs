//! The buses Longtail offers hosts, stereo first.
//!
//! - `2 -> 2` (the default), `1 -> 2` and `1 -> 1`, as always;
//! - `N -> N` for every width from 3 to 16 (quad, 5.0, 5.1, 7.0, 7.1, 7.1.2 / 5.1.4, 7.1.4,
//!   9.1.6, Ambisonics orders 1 to 3 at 4, 9 and 16, and the discrete widths between), and the
//!   wide discrete or Ambisonics widths 24, 25 (order 4), 32, 36 (order 5) and 49 (order 6);
//! - `1 -> N` and `2 -> N` for the speaker widths: a surround reverb fed by a mono or stereo
//!   source.
//!
//! In CLAP (and the standalone), every layout also has a stereo sidechain input, "Sidechain":
//! the ducking's key where the Duck key parameter says so ([`crate::audio::ducker`]). Hosts that
//! feed nothing into it give silence, which never ducks. VST3 has none: nice-plug 0.4.2's VST3
//! wrapper checks a sidechain's arrangement against the main input's (see
//! docs/dependencies.md), so a stereo sidechain would make every layout without a stereo input
//! unreachable, and one as wide as the main input fails Steinberg's validator (it accepts a
//! sidechain arrangement it then does not report). A VST3 host's `setBusArrangements` only
//! matches a layout with the same number of buses, so it is on every layout or on none. The
//! buses therefore depend on the format ([`Format`]), which is why the plugin type is
//! `Longtail<F>`.
//!
//! What the channels are comes from the Channel format setting
//! ([`crate::params::ChannelFormatParam`], see [`crate::ir::mapping`]): nice-plug tells the
//! plugin a channel count only, and names the VST3 arrangement of a width itself (5.0, 5.1,
//! 7.0 and 7.1 Cine; other widths its first `n` speakers, so four channels show as 3.1, not
//! quad).
//!
//! Not offered:
//! - `N -> 2` or any bus with more inputs than outputs: nice-plug's buffer management does not
//!   support many-to-few. A binaural or downmix IR plays on an `N -> N` bus as a matrix whose
//!   extra outputs stay silent.
//! - 64 channels: nice-plug's VST3 wrapper builds the speaker arrangement of an unnamed width
//!   as its first `n` speaker bits, and `1 << 64` overflows (a panic in debug builds, an empty
//!   bus in release). The layouts are one list for both formats, so CLAP stops at 49 too.
//!   The engine itself takes 64 x 64 (`longtail-cli render`, `bench`).

use std::num::NonZeroU32;

use nice_plug::prelude::{AudioIOLayout, PortNames, new_nonzero_u32};

/// Channels of the CLAP sidechain.
pub const SIDECHAIN_CHANNELS: usize = 2;
const SIDECHAIN: &[NonZeroU32] = &[new_nonzero_u32(SIDECHAIN_CHANNELS as u32)];

/// Which plugin format a build of Longtail is for: the buses it offers differ (the sidechain).
pub trait Format: 'static {
    /// Every bus offered, in the order hosts see them.
    const AUDIO_IO_LAYOUTS: &'static [AudioIOLayout];
}

/// CLAP and the standalone: every layout with a stereo sidechain.
pub enum Clap {}

/// VST3: no sidechain.
pub enum Vst3 {}

impl Format for Clap {
    const AUDIO_IO_LAYOUTS: &'static [AudioIOLayout] = &WITH_SIDECHAIN;
}

impl Format for Vst3 {
    const AUDIO_IO_LAYOUTS: &'static [AudioIOLayout] = &AUDIO_IO_LAYOUTS;
}

/// Main input and output widths of every bus offered, in the order hosts see them.
const WIDTHS: [(u32, u32); 38] = [
    (2, 2),
    (1, 2),
    (1, 1),
    (3, 3),
    (4, 4),
    (5, 5),
    (6, 6),
    (7, 7),
    (8, 8),
    (9, 9),
    (10, 10),
    (11, 11),
    (12, 12),
    (13, 13),
    (14, 14),
    (15, 15),
    (16, 16),
    (24, 24),
    (25, 25),
    (32, 32),
    (36, 36),
    (49, 49),
    (1, 4),
    (2, 4),
    (1, 5),
    (2, 5),
    (1, 6),
    (2, 6),
    (1, 7),
    (2, 7),
    (1, 8),
    (2, 8),
    (1, 10),
    (2, 10),
    (1, 12),
    (2, 12),
    (1, 16),
    (2, 16),
];

/// Every bus offered, main input and output only (VST3's).
pub static AUDIO_IO_LAYOUTS: [AudioIOLayout; WIDTHS.len()] = layouts(false);
/// Every bus offered with the stereo sidechain (CLAP's and the standalone's).
pub static WITH_SIDECHAIN: [AudioIOLayout; WIDTHS.len()] = layouts(true);

const fn layouts(sidechain: bool) -> [AudioIOLayout; WIDTHS.len()] {
    let mut layouts = [AudioIOLayout::const_default(); WIDTHS.len()];
    let mut idx = 0;
    while idx < WIDTHS.len() {
        let (inputs, outputs) = WIDTHS[idx];
        layouts[idx] = AudioIOLayout {
            main_input_channels: NonZeroU32::new(inputs),
            main_output_channels: NonZeroU32::new(outputs),
            ..AudioIOLayout::const_default()
        };
        if sidechain {
            layouts[idx].aux_input_ports = SIDECHAIN;
            layouts[idx].names = PortNames {
                aux_inputs: &["Sidechain"],
                ..PortNames::const_default()
            };
        }
        idx += 1;
    }
    layouts
}
