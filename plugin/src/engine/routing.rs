//! Paths: which input channel is convolved into which output channel, and with which taps.
//!
//! A path is one input channel convolved into one output channel. The IR layout and the host's
//! channel counts decide the paths (see [`route`]): a mono input feeds both stereo sides of the
//! IR, a mono output receives the average of both sides, and IR channels that land on the same
//! (input, output) pair are summed before transformation.
//!
//! Uses only the IR's layout ([`crate::ir`]); every other part of the engine may use it.

use crate::ir::Ir;

/// Most input or output channels the engine handles.
pub const MAX_CHANNELS: usize = 2;

/// One input channel convolved into one output channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Path {
    /// Input channel index.
    pub input_idx: usize,
    /// Output channel index.
    pub output_idx: usize,
}

/// The paths for `ir` with `num_inputs` inputs and `num_outputs` outputs, each with its summed
/// taps. Allocates.
pub fn route(ir: &Ir, num_inputs: usize, num_outputs: usize) -> Vec<(Path, Vec<f32>)> {
    let mut paths: Vec<(Path, Vec<f32>)> = Vec::new();
    for (&(source, destination), taps) in ir.layout.channel_routes().iter().zip(&ir.channels) {
        // Mono IRs act on both sides, each input to its own output.
        let sides: &[(usize, usize)] = if ir.layout == crate::ir::IrLayout::Mono {
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
