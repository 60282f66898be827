//! A worker level reading its chunks from the input history: whole while the history holds
//! them, silence (counted as dropped) once the audio thread has written over them. Its results
//! played straight from their slots as they are through the output rings, on time (whether or
//! not they begin on a quantum boundary) and late.

use super::*;
use crate::engine::routing::Path;
use crate::engine::upols::LevelShape;
use rustfft::FftPlanner;

const P: usize = 32;

/// A mono level of one partition whose IR is a unit impulse (so its result is its input
/// chunk), `P` samples of slack, on a worker reading `history`.
fn impulse_worker(history: &Arc<InputHistory>) -> WorkerLevel {
    impulse_worker_delayed(history, 2 * P)
}

/// [`impulse_worker`] with an output delay of `output_delay` (at least `P`).
fn impulse_worker_delayed(history: &Arc<InputHistory>, output_delay: usize) -> WorkerLevel {
    let mut taps = vec![0.0f32; P];
    taps[0] = 1.0;
    let shape = LevelShape {
        partition_size: P,
        span: 1,
        num_partitions: 1,
        ir_offset: 0,
        output_delay,
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
    worker.feed(P as u64, P, &mut Wait::Never);
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

/// The samples of `chunks` chunks of `P` (each sample its own time plus one) through an
/// impulse level of `output_delay` whose results play from their slots (`from_slot`) or go
/// into the output rings, as the engine plays them in quanta of `Q`: each quantum drains the
/// rings and plays what the level's slots hold for it, then at the boundary the level
/// collects, feeds and submits. The worker is stalled until `stalled_until` (at real-time pace then, so the
/// first result is late), then released and waited for (offline from there on, so the run
/// does not depend on the worker's timing). Returns the output and the late results counted.
fn play(
    from_slot: bool,
    stalled_until: u64,
    chunks: usize,
    output_delay: usize,
) -> (Vec<f32>, u64) {
    const Q: usize = 8;
    let history = Arc::new(InputHistory::new(1, 8 * P));
    let mut worker = impulse_worker_delayed(&history, output_delay);
    worker.plays_from_slot = from_slot;
    let mut rings = [OutputRing::new(8 * P)];
    let len = (chunks + 3) * P;
    let input: Vec<f32> = (1..=len).map(|i| i as f32).collect();
    let mut output = vec![0.0f32; len];
    worker.set_stalled(stalled_until > 0);
    let mut stalled = stalled_until > 0;
    for start in (0..len).step_by(Q) {
        let range = start..start + Q;
        let feeding = start < chunks * P;
        if feeding {
            history.write(&[&input], range.clone());
        }
        rings[0].drain_add(start as u64, &mut output[range.clone()]);
        worker.play(start as u64, &mut [&mut output[..]], range);
        let time = (start + Q) as u64;
        if stalled && time >= stalled_until {
            stalled = false;
            worker.set_stalled(false);
            while worker.shared.completed.load(Ordering::Acquire) < worker.submitted {
                std::thread::yield_now();
            }
        }
        let mut wait = if stalled { Wait::Never } else { Wait::Forever };
        worker.collect(time, time + Q as u64, &mut rings, &mut wait);
        if feeding {
            worker.feed(time, Q, &mut wait);
            if time.is_multiple_of(P as u64) {
                worker.submit(time, wait);
            }
        }
    }
    let late = worker.stats().late_results.load(Ordering::Relaxed);
    assert_eq!(
        worker.consumed, worker.submitted,
        "every result played and freed"
    );
    (output, late)
}

/// 4 chunks on time through a level of `delay`: the output is the input `delay` samples later,
/// from the slots as through the rings.
fn assert_plays_delayed(delay: usize) {
    let (played, late) = play(true, 0, 4, delay);
    assert_eq!(late, 0);
    assert_eq!(played, play(false, 0, 4, delay).0);
    for (t, &x) in played.iter().enumerate() {
        let expected = if (delay..delay + 4 * P).contains(&t) {
            (t - delay + 1) as f32
        } else {
            0.0
        };
        assert!(
            (x - expected).abs() <= 1e-4 * expected.abs().max(1.0),
            "sample {t}: {x}"
        );
    }
}

#[test]
fn results_play_from_their_slots_delayed_by_the_level() {
    // The level's delay is 2P: each chunk plays two periods after it began.
    assert_plays_delayed(2 * P);
}

#[test]
fn results_that_begin_inside_a_quantum_play_whole() {
    // A delay of 2P + 3: every quantum that holds a result's start holds the end of the one
    // before it, so two results play in it.
    assert_plays_delayed(2 * P + 3);
}

#[test]
fn a_late_result_fades_in_from_where_it_was_found() {
    // Released two quanta after the first result fell due (at 2P): the first result is late,
    // its first 16 samples silent, the rest faded in; the next ones on time.
    let stalled_until = 2 * P as u64 + 16;
    let (played, late) = play(true, stalled_until, 4, 2 * P);
    assert_eq!(late, 1);
    assert_eq!(played, play(false, stalled_until, 4, 2 * P).0);
    assert!(played[..2 * P + 16].iter().all(|&x| x == 0.0));
    let t = 2 * P + 16;
    let gain = |k: usize| (k + 1) as f32 / (LATE_FADE_SAMPLES + 1) as f32;
    let near = |x: f32, expected: f32| (x - expected).abs() <= 1e-4 * expected.abs();
    for k in [0, 1, 15] {
        let expected = gain(k) * (t + k - 2 * P + 1) as f32;
        assert!(near(played[t + k], expected), "{k}: {}", played[t + k]);
    }
    // The next result, on time at 3P, plays unfaded: the fade is the late one's.
    assert!(near(played[3 * P], (P + 1) as f32), "{}", played[3 * P]);
}
