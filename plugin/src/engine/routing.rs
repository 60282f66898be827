//! Paths: which input channel is convolved into which output channel, and with which taps.
//!
//! A path is one input channel convolved into one output channel. The IR layout and the host's
//! channel counts decide the paths (see [`route`]):
//!
//! - stereo layouts follow the bus: a mono input feeds both stereo sides of the IR, a mono
//!   output receives the average of both sides, and IR channels that land on the same
//!   (input, output) pair are summed before transformation;
//! - a matrix ([`IrLayout::Matrix`]) plays only on a bus of its own size (see
//!   [`matrix_fits`]); each of its channels is one path, and a silent channel is no path at
//!   all, so a sparse matrix costs only the paths it has.
//!
//! Paths whose taps are identical share one spectrum in every level ([`shared_spectra`]), as
//! jconvolver's `/impulse/copy` does: a matrix that repeats one room costs its memory once.
//!
//! Uses only the IR's layout ([`crate::ir`]); every other part of the engine may use it.

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use crate::ir::{Ir, IrLayout};

/// Most input or output channels the engine handles: a 64 x 64 matrix. Stack arrays of one
/// reference per channel are sized for it on the audio path.
pub const MAX_CHANNELS: usize = crate::ir::MAX_MATRIX_SIDE;

/// One input channel convolved into one output channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Path {
    /// Input channel index.
    pub input_idx: usize,
    /// Output channel index.
    pub output_idx: usize,
}

/// Whether `ir` can play on a bus of `num_inputs` in and `num_outputs` out: a matrix needs its
/// own size, the stereo layouts play on any bus.
pub fn matrix_fits(ir: &Ir, num_inputs: usize, num_outputs: usize) -> bool {
    match ir.layout {
        IrLayout::Matrix { inputs, outputs } => inputs == num_inputs && outputs == num_outputs,
        _ => true,
    }
}

/// The paths for `ir` with `num_inputs` inputs and `num_outputs` outputs, each with its summed
/// taps; a matrix must fit the bus ([`matrix_fits`]), and its paths borrow the IR's channels
/// (a 16 x 16 x 4 s matrix is 196 MB of taps: building its engine never copies them). Allocates.
pub fn route(ir: &Ir, num_inputs: usize, num_outputs: usize) -> Vec<(Path, Cow<'_, [f32]>)> {
    if let IrLayout::Matrix { .. } = ir.layout {
        debug_assert!(matrix_fits(ir, num_inputs, num_outputs));
        return ir
            .channels
            .iter()
            .enumerate()
            .filter(|(_, taps)| taps.iter().any(|&t| t != 0.0))
            .map(|(channel_idx, taps)| {
                let (input_idx, output_idx) = ir.layout.channel_route(channel_idx);
                (
                    Path {
                        input_idx,
                        output_idx,
                    },
                    Cow::Borrowed(taps.as_slice()),
                )
            })
            .filter(|(path, _)| path.input_idx < num_inputs && path.output_idx < num_outputs)
            .collect();
    }
    let mut paths: Vec<(Path, Cow<'_, [f32]>)> = Vec::new();
    for (channel_idx, taps) in ir.channels.iter().enumerate() {
        let (source, destination) = ir.layout.channel_route(channel_idx);
        // Mono IRs act on both sides, each input to its own output.
        let sides: &[(usize, usize)] = if ir.layout == IrLayout::Mono {
            &[(0, 0), (1, 1)]
        } else {
            &[(source, destination)]
        };
        for &(source, destination) in sides {
            let path = Path {
                input_idx: source.min(num_inputs - 1),
                output_idx: destination.min(num_outputs - 1),
            };
            // A mono output is the average of the two sides.
            let weight = if num_outputs == 1 { 0.5 } else { 1.0 };
            match paths.iter_mut().find(|(p, _)| *p == path) {
                Some((_, summed)) => {
                    summed
                        .to_mut()
                        .iter_mut()
                        .zip(taps)
                        .for_each(|(s, t)| *s += weight * t);
                }
                None => paths.push((path, taps.iter().map(|t| weight * t).collect())),
            }
        }
    }
    paths
}

/// For each path's taps, the index of the first path with the same taps (bit for bit): the
/// spectrum it shares. Allocates (a hash per path).
pub fn shared_spectra(path_taps: &[&[f32]]) -> Vec<usize> {
    let mut first_of: HashMap<u64, Vec<usize>> = HashMap::new();
    let mut shared = Vec::with_capacity(path_taps.len());
    for (path_idx, taps) in path_taps.iter().enumerate() {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        taps.len().hash(&mut hasher);
        taps.iter().for_each(|t| t.to_bits().hash(&mut hasher));
        let candidates = first_of.entry(hasher.finish()).or_default();
        let same = candidates.iter().copied().find(|&other| {
            path_taps[other].len() == taps.len()
                && path_taps[other]
                    .iter()
                    .zip(taps.iter())
                    .all(|(a, b)| a.to_bits() == b.to_bits())
        });
        match same {
            Some(other) => shared.push(other),
            None => {
                candidates.push(path_idx);
                shared.push(path_idx);
            }
        }
    }
    shared
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matrix(inputs: usize, outputs: usize, channels: Vec<Vec<f32>>) -> Ir {
        let layout = IrLayout::matrix(inputs, outputs).expect("matrix size");
        Ir::with_layout("m", 48_000, layout, channels).expect("valid matrix")
    }

    #[test]
    fn a_matrix_channel_is_one_path_and_silent_ones_are_none() {
        // 2 x 3: channel i * 3 + o is input i to output o; channel 4 (1 -> 1) is silent.
        let channels = (0..6)
            .map(|c| {
                if c == 4 {
                    vec![0.0; 3]
                } else {
                    vec![c as f32 + 1.0, 0.0, 0.5]
                }
            })
            .collect();
        let ir = matrix(2, 3, channels);
        let paths = route(&ir, 2, 3);
        let found: Vec<(usize, usize, f32)> = paths
            .iter()
            .map(|(p, taps)| (p.input_idx, p.output_idx, taps[0]))
            .collect();
        assert_eq!(
            found,
            [
                (0, 0, 1.0),
                (0, 1, 2.0),
                (0, 2, 3.0),
                (1, 0, 4.0),
                (1, 2, 6.0)
            ]
        );
        assert!(matrix_fits(&ir, 2, 3));
        assert!(!matrix_fits(&ir, 3, 2));
        assert!(!matrix_fits(&ir, 2, 2));
    }

    #[test]
    fn identical_taps_share_one_spectrum() {
        let (a, b) = (vec![1.0f32, 0.5], vec![1.0f32, -0.5]);
        let taps: Vec<&[f32]> = vec![&a, &b, &a, &b, &b];
        assert_eq!(shared_spectra(&taps), [0, 1, 0, 1, 1]);
        // Equal values of different length are not the same IR.
        let c = vec![1.0f32, 0.5, 0.0];
        assert_eq!(shared_spectra(&[&a, &c]), [0, 1]);
    }
}
