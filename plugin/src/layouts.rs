//! The buses Longtail offers hosts, stereo first.
//!
//! - `2 -> 2` (the default), `1 -> 2` and `1 -> 1`, as always;
//! - `N -> N` for every width from 3 to 16 (quad, 5.0, 5.1, 7.0, 7.1, 7.1.2 / 5.1.4, 7.1.4,
//!   9.1.6, Ambisonics orders 1 to 3 at 4, 9 and 16, and the discrete widths between), and the
//!   wide discrete or Ambisonics widths 24, 25 (order 4), 32, 36 (order 5) and 49 (order 6);
//! - `1 -> N` and `2 -> N` for the speaker widths: a surround reverb fed by a mono or stereo
//!   source.
//!
//! Every layout also has a sidechain input, "Sidechain", as wide as its main input: the
//! ducking's key where the Duck key parameter says so ([`crate::audio::ducker`]). On every
//! layout, because a VST3 host's `setBusArrangements` only matches a layout with the same
//! number of buses: a sidechain on some layouts would make the others unreachable. As wide as
//! the main input, because nice-plug 0.4.2's VST3 wrapper checks the sidechain's arrangement
//! against the main input's (see docs/dependencies.md): a stereo sidechain would make every
//! layout but the stereo-input ones unreachable. Hosts that feed nothing into it give silence,
//! which never ducks.
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

/// Widest main input of any layout.
const MAX_INPUTS: usize = 49;

/// The sidechain's channel count for each main input width (index 0 unused).
static SIDECHAIN_WIDTHS: [NonZeroU32; MAX_INPUTS + 1] = {
    let mut widths = [new_nonzero_u32(1); MAX_INPUTS + 1];
    let mut n = 1;
    while n <= MAX_INPUTS {
        widths[n] = new_nonzero_u32(n as u32);
        n += 1;
    }
    widths
};

const fn bus(inputs: u32, outputs: u32) -> AudioIOLayout {
    AudioIOLayout {
        main_input_channels: NonZeroU32::new(inputs),
        main_output_channels: NonZeroU32::new(outputs),
        aux_input_ports: std::slice::from_ref(&SIDECHAIN_WIDTHS[inputs as usize]),
        names: PortNames {
            aux_inputs: &["Sidechain"],
            ..PortNames::const_default()
        },
        ..AudioIOLayout::const_default()
    }
}

/// Every bus offered, in the order hosts see them.
pub const AUDIO_IO_LAYOUTS: &[AudioIOLayout] = &[
    bus(2, 2),
    bus(1, 2),
    bus(1, 1),
    bus(3, 3),
    bus(4, 4),
    bus(5, 5),
    bus(6, 6),
    bus(7, 7),
    bus(8, 8),
    bus(9, 9),
    bus(10, 10),
    bus(11, 11),
    bus(12, 12),
    bus(13, 13),
    bus(14, 14),
    bus(15, 15),
    bus(16, 16),
    bus(24, 24),
    bus(25, 25),
    bus(32, 32),
    bus(36, 36),
    bus(49, 49),
    bus(1, 4),
    bus(2, 4),
    bus(1, 5),
    bus(2, 5),
    bus(1, 6),
    bus(2, 6),
    bus(1, 7),
    bus(2, 7),
    bus(1, 8),
    bus(2, 8),
    bus(1, 10),
    bus(2, 10),
    bus(1, 12),
    bus(2, 12),
    bus(1, 16),
    bus(2, 16),
];
