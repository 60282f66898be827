//! Paths: which input channel is convolved into which output channel, and with which taps.
//!
//! A path is one input channel convolved into one output channel. The IR and the bus decide
//! the paths by the one rule of [`crate::ir::mapping`] (see [`route`]):
//!
//! - stereo layouts follow the bus by sides: a mono input feeds both stereo sides of the IR, a
//!   mono output receives the average of both sides, a 7.1.4 speaker takes its side's IR
//!   channel, and IR channels that land on the same (input, output) pair are summed before
//!   transformation;
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

use crate::ir::mapping::{self, Bus, ChannelFormat, Rule};
use crate::ir::{Ir, IrError, IrLayout};

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

impl Path {
    /// Every path of a dense `num_inputs` x `num_outputs` matrix, input by input. Allocates.
    pub fn dense(num_inputs: usize, num_outputs: usize) -> Vec<Path> {
        (0..num_inputs)
            .flat_map(|input_idx| {
                (0..num_outputs).map(move |output_idx| Path {
                    input_idx,
                    output_idx,
                })
            })
            .collect()
    }
}

/// Each path with its taps (borrowed from the IR where it is one channel of it).
pub type Routes<'a> = Vec<(Path, Cow<'a, [f32]>)>;

/// Whether `ir` can play on a bus of `num_inputs` in and `num_outputs` out: a matrix needs its
/// own size, the stereo layouts play on any bus.
pub fn matrix_fits(ir: &Ir, num_inputs: usize, num_outputs: usize) -> bool {
    match ir.layout {
        IrLayout::Matrix { inputs, outputs } => inputs == num_inputs && outputs == num_outputs,
        _ => true,
    }
}

/// The paths for `ir` on `bus`, each with its summed taps, by the rule of
/// [`crate::ir::mapping::map`], or why it cannot play there. A path of one IR channel borrows
/// it (a 16 x 16 x 4 s matrix is 196 MB of taps: building its engine never copies them); a
/// silent one is no path. Allocates.
pub fn route(ir: &Ir, bus: Bus) -> Result<Routes<'_>, IrError> {
    let mapping = mapping::map(ir.layout, bus)?;
    let mut paths = Vec::with_capacity(mapping.paths.len());
    for mapped in &mapping.paths {
        let path = Path {
            input_idx: mapped.input,
            output_idx: mapped.output,
        };
        let taps: Cow<'_, [f32]> = match mapped.terms.as_slice() {
            [(channel, weight)] if *weight == 1.0 => Cow::Borrowed(&ir.channels[*channel]),
            [(first, first_weight), rest @ ..] => {
                let mut summed: Vec<f32> = ir.channels[*first]
                    .iter()
                    .map(|t| first_weight * t)
                    .collect();
                for &(channel, weight) in rest {
                    summed
                        .iter_mut()
                        .zip(&ir.channels[channel])
                        .for_each(|(s, t)| *s += weight * t);
                }
                Cow::Owned(summed)
            }
            // `map` gives every path at least one term.
            [] => continue,
        };
        // A matrix's silent channel is a path that is not there.
        if mapping.rule != Rule::Sides && taps.iter().all(|&t| t == 0.0) {
            continue;
        }
        paths.push((path, taps));
    }
    Ok(paths)
}

/// [`route`] on a plain `num_inputs -> num_outputs` bus (channel format Auto).
pub fn route_plain(ir: &Ir, num_inputs: usize, num_outputs: usize) -> Result<Routes<'_>, IrError> {
    route(ir, Bus::new(num_inputs, num_outputs, ChannelFormat::Auto))
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
        let paths = route_plain(&ir, 2, 3).expect("fits");
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
