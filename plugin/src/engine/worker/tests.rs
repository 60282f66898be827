//! A worker level reading its chunks from the input history: whole while the history holds
//! them, silence (counted as dropped) once the audio thread has written over them.

use super::*;
use crate::engine::routing::Path;
use crate::engine::upols::LevelShape;
use rustfft::FftPlanner;

const P: usize = 32;

/// A mono level of one partition whose IR is a unit impulse (so its result is its input
/// chunk), `P` samples of slack, on a worker reading `history`.
fn impulse_worker(history: &Arc<InputHistory>) -> WorkerLevel {
    let mut taps = vec![0.0f32; P];
    taps[0] = 1.0;
    let shape = LevelShape {
        partition_size: P,
        num_partitions: 1,
        ir_offset: 0,
        output_delay: 2 * P,
        num_inputs: 1,
        num_outputs: 1,
    };
    let paths = [Path {
        input_idx: 0,
        output_idx: 0,
    }];
    let level = UpolsLevel::new(&mut FftPlanner::new(), shape, &paths, &[&taps], &[0]);
    WorkerLevel::spawn(level, history, 0).expect("worker thread")
}

/// The first chunk (`1..=P`) handed over while the worker is stalled, `later` quanta written
/// after it, then the worker released: its result as played, and the chunks counted dropped.
fn first_result_after(later: usize) -> (Vec<f32>, u64) {
    let history = Arc::new(InputHistory::new(1, 2 * P));
    let mut worker = impulse_worker(&history);
    let mut outputs = [OutputRing::new(4 * P)];
    worker.set_stalled(true);
    let input: Vec<f32> = (1..=(P * (later + 1))).map(|i| i as f32).collect();
    history.write(&[&input], 0..P);
    worker.feed(P as u64, P, &mut outputs, &mut Wait::Never);
    worker.submit(P as u64, Wait::Never);
    for quantum in 1..=later {
        history.write(&[&input], quantum * P..(quantum + 1) * P);
    }
    worker.set_stalled(false);
    // Due at 2P (the chunk's start plus the level's delay): collected as a render would,
    // waiting for it.
    let due = 2 * P as u64;
    worker.collect(due, due + P as u64, &mut outputs, &mut Wait::Forever);
    let mut played = vec![0.0f32; P];
    outputs[0].drain_add(due, &mut played);
    let dropped = worker.stats().dropped_chunks.load(Ordering::Relaxed);
    (played, dropped)
}

#[test]
fn a_chunk_is_read_whole_while_the_history_holds_it() {
    // One quantum after it: the history (2P) still holds the chunk.
    let (played, dropped) = first_result_after(1);
    assert_eq!(dropped, 0);
    for (i, &x) in played.iter().enumerate() {
        assert!((x - (i + 1) as f32).abs() < 1e-3, "sample {i}: {x}");
    }
}

#[test]
fn a_chunk_written_over_before_it_was_read_is_silence_and_counted() {
    // Two quanta after it: its first half is gone.
    let (played, dropped) = first_result_after(2);
    assert_eq!(dropped, 1);
    assert!(played.iter().all(|&x| x == 0.0), "{played:?}");
}
