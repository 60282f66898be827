//! Test support: a level run in steps over quanta (spread, or summed ahead) against the same
//! level run whole as each of its chunks completes.

use super::UpolsLevel;
use crate::engine::memory::rings::{InputRing, OutputRing};
use crate::rng::Rng;

/// A level that takes a step at every quantum boundary.
pub trait SteppedLevel {
    fn run(&mut self, time: u64, inputs: &[InputRing], outputs: &mut [OutputRing]);
    fn reset(&mut self);
}

/// How close the stepped output must come to the whole runs'.
#[derive(Clone, Copy, Debug)]
pub enum Matching {
    /// Within this much per sample: the terms go in another order.
    Within(f32),
    /// Bit for bit.
    Bits,
}

/// What [`check_against_whole_runs`] runs.
pub struct WholeRunCheck {
    pub quantum: usize,
    pub num_quanta: u64,
    /// Both levels and their rings start again from silence after this quantum's output was
    /// compared, as an engine's reset clears its rings.
    pub reset_after: Option<u64>,
    pub matching: Matching,
}

/// Feeds `whole` and `stepped` the same random input (from `rng`), runs `whole` at each
/// multiple of its partition size and `stepped` at every quantum boundary, and compares what
/// both have in their output rings as each quantum falls due: so the stepped level's output
/// is there before its first sample is due. Panics at the first mismatch, or if the output
/// was silent throughout.
pub fn check_against_whole_runs(
    whole: &mut UpolsLevel,
    stepped: &mut impl SteppedLevel,
    check: &WholeRunCheck,
    rng: &mut Rng,
) {
    let (partition_size, quantum) = (whole.partition_size(), check.quantum);
    let (num_inputs, num_outputs) = (whole.fdl.len(), whole.num_outputs());
    let mut inputs: Vec<InputRing> = (0..num_inputs)
        .map(|_| InputRing::new(4 * partition_size))
        .collect();
    let rings = || {
        (0..num_outputs)
            .map(|_| OutputRing::new(4 * partition_size))
            .collect::<Vec<_>>()
    };
    let (mut whole_out, mut stepped_out) = (rings(), rings());
    let (mut a, mut b) = (vec![0.0; quantum], vec![0.0; quantum]);
    let mut any = false;
    for quantum_idx in 0..check.num_quanta {
        let start = quantum_idx * quantum as u64;
        for (whole, stepped) in whole_out.iter_mut().zip(&mut stepped_out) {
            a.fill(0.0);
            b.fill(0.0);
            whole.drain_add(start, &mut a);
            stepped.drain_add(start, &mut b);
            match check.matching {
                Matching::Within(tolerance) => {
                    for (x, y) in a.iter().zip(&b) {
                        assert!(
                            (x - y).abs() <= tolerance,
                            "quantum {quantum_idx}: {x} vs {y}"
                        );
                    }
                }
                Matching::Bits => assert_eq!(a, b, "quantum {quantum_idx}"),
            }
            any |= a.iter().any(|&s| s != 0.0);
        }
        if check.reset_after == Some(quantum_idx) {
            whole.reset();
            stepped.reset();
            (whole_out, stepped_out) = (rings(), rings());
        }
        for ring in &mut inputs {
            for offset in 0..quantum as u64 {
                ring.write(start + offset, rng.bipolar());
            }
        }
        let time = start + quantum as u64;
        if time.is_multiple_of(partition_size as u64) {
            whole.run(time, &inputs, &mut whole_out);
        }
        stepped.run(time, &inputs, &mut stepped_out);
    }
    assert!(any, "the output was silent throughout");
}
