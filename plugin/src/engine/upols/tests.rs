//! The carried MAC against periods summed afresh and step by step, and where a level carries.

use super::*;
use crate::rng::Rng;

/// One period of `level` run whole ([`UpolsLevel::compute`]) on `windows` into `outputs`.
fn run_period(level: &mut UpolsLevel, windows: &[Vec<f32>], outputs: &mut [Vec<f32>]) {
    let window_refs: Vec<&[f32]> = windows.iter().map(Vec::as_slice).collect();
    let mut output_refs: Vec<&mut [f32]> = outputs.iter_mut().map(Vec::as_mut_slice).collect();
    level.compute(&window_refs, &mut output_refs);
}

/// A period's windows of `len` random samples for each of `num_inputs` inputs.
fn random_windows(rng: &mut Rng, num_inputs: usize, len: usize) -> Vec<Vec<f32>> {
    (0..num_inputs)
        .map(|_| (0..len).map(|_| rng.bipolar()).collect())
        .collect()
}

/// Random taps for `num_paths` paths, a level over them at IR offset 0, due as its chunk
/// completes (`(P, span, n)` partitions, `(inputs, outputs)` channels), and each path's own
/// spectrum (none shared).
fn random_level(
    rng: &mut Rng,
    num_paths: usize,
    (partition_size, span, num_partitions): (usize, usize, usize),
    (num_inputs, num_outputs): (usize, usize),
) -> (Vec<Vec<f32>>, LevelShape, Vec<usize>) {
    let num_taps = num_partitions * span * partition_size;
    let taps = (0..num_paths)
        .map(|_| (0..num_taps).map(|_| rng.bipolar()).collect())
        .collect();
    let shape = LevelShape {
        partition_size,
        span,
        num_partitions,
        ir_offset: 0,
        output_delay: partition_size,
        num_inputs,
        num_outputs,
    };
    (taps, shape, (0..num_paths).collect())
}

/// Run whole, a carrying level sums terms of each period ahead, in chunks or by parity; step
/// by step ([`UpolsLevel::mac_step`], as [`crate::engine::runner::spread`] runs it) it carries
/// nothing. All give the same output, to float rounding, across gaps (chunks the late policy
/// dropped) and a reset, for odd and even partition counts and partitions of one to three hops. And
/// carrying in chunks changes no bit: a level that forgets what it carried before every period (and
/// so sums each afresh) gives the same output.
#[test]
fn carried_terms_match_periods_summed_whole() {
    let mut rng = Rng::new(11);
    let (partition_size, num_inputs, num_outputs) = (32, 2, 3);
    let io = (num_inputs, num_outputs);
    // Output 2 has no path; output 1 has one from each input.
    let paths = [(0, 0), (0, 1), (1, 1), (1, 0)].map(|(input_idx, output_idx)| Path {
        input_idx,
        output_idx,
    });
    for (span, num_partitions) in (1..=3).flat_map(|span| [2, 3, 4, 5].map(|n| (span, n))) {
        let level_size = (partition_size, span, num_partitions);
        let (taps, shape, shared) = random_level(&mut rng, paths.len(), level_size, io);
        let path_taps: Vec<&[f32]> = taps.iter().map(Vec::as_slice).collect();
        let mut planner = FftPlanner::new();
        // 33 bins in chunks of 8 (span 1): five chunks, the last one short.
        let new = |planner: &mut FftPlanner<f32>| {
            UpolsLevel::new(planner, shape, &paths, &path_taps, &shared)
        };
        let mut whole = new(&mut planner).carrying(Carry::Chunks, 8);
        let mut afresh = new(&mut planner).carrying(Carry::Chunks, 8);
        let mut parity = new(&mut planner).carrying(Carry::Parity, 8);
        let mut afresh_outputs = vec![vec![0.0; partition_size]; num_outputs];
        let mut parity_outputs = vec![vec![0.0; partition_size]; num_outputs];
        let mut steps = new(&mut planner);
        let mut plain = new(&mut planner);
        assert_eq!(steps.carry_kind(), Carry::None);
        assert_eq!(plain.carry_kind(), Carry::None);
        let mut plain_outputs = vec![vec![0.0; partition_size]; num_outputs];
        let mut outputs = vec![vec![0.0; partition_size]; num_outputs];
        for period in 0..60 {
            match period {
                12 => [&mut whole, &mut afresh, &mut parity, &mut steps, &mut plain]
                    .map(|level| level.push_silence(1)),
                25 => [&mut whole, &mut afresh, &mut parity, &mut steps, &mut plain]
                    .map(|level| level.push_silence(3)),
                40 => [&mut whole, &mut afresh, &mut parity, &mut steps, &mut plain]
                    .map(UpolsLevel::reset),
                _ => [(); 5],
            };
            let windows = random_windows(&mut rng, num_inputs, (span + 1) * partition_size);
            run_period(&mut whole, &windows, &mut outputs);
            afresh.drop_carried();
            run_period(&mut afresh, &windows, &mut afresh_outputs);
            assert_eq!(
                outputs, afresh_outputs,
                "s={span} n={num_partitions} {period}"
            );
            run_period(&mut parity, &windows, &mut parity_outputs);
            run_period(&mut plain, &windows, &mut plain_outputs);

            steps.advance_fdl();
            for (input_idx, window) in windows.iter().enumerate() {
                steps.forward_input(input_idx, window);
            }
            for (output_idx, output) in outputs.iter().enumerate() {
                let wanted: Vec<f32> = if steps.num_output_terms(output_idx) == 0 {
                    vec![0.0; partition_size]
                } else {
                    steps.clear_acc();
                    let mut term_idx = 0;
                    while term_idx < steps.num_output_terms(output_idx) {
                        term_idx += steps.mac_step(output_idx, term_idx);
                    }
                    steps.inverse_acc().to_vec()
                };
                // Not carrying, a level run whole takes its terms two at a time in the order
                // the steps take them: the same bits.
                assert_eq!(
                    plain_outputs[output_idx], wanted,
                    "s={span} n={num_partitions} {period}"
                );
                for (got, want) in output
                    .iter()
                    .chain(&parity_outputs[output_idx])
                    .zip(wanted.iter().cycle())
                {
                    // Sums of 2 x 5 x 32 products below 1 in magnitude, in two orders.
                    assert!(
                        (got - want).abs() <= 1e-4,
                        "s={span} n={num_partitions} period {period} output {output_idx}: \
                         {got} vs {want}"
                    );
                }
            }
        }
    }
}

/// A level whose partitions span one to three hops gives, period by period, the convolution of
/// its inputs with its taps computed directly in float64, carried or not.
#[test]
fn spanning_partitions_convolve_exactly() {
    let mut rng = Rng::new(13);
    let (partition_size, num_inputs, num_outputs, periods) = (16, 2, 2, 24);
    let io = (num_inputs, num_outputs);
    let paths: Vec<Path> = [(0, 0), (1, 0), (1, 1)]
        .map(|(input_idx, output_idx)| Path {
            input_idx,
            output_idx,
        })
        .to_vec();
    let input: Vec<Vec<f32>> = (0..num_inputs)
        .map(|_| {
            (0..periods * partition_size)
                .map(|_| rng.bipolar())
                .collect()
        })
        .collect();
    for span in 1..=3 {
        let num_partitions = 3;
        let num_taps = num_partitions * span * partition_size;
        let level_size = (partition_size, span, num_partitions);
        let (taps, shape, shared) = random_level(&mut rng, paths.len(), level_size, io);
        let tap_refs: Vec<&[f32]> = taps.iter().map(Vec::as_slice).collect();
        let mut planner = FftPlanner::new();
        for kind in [Carry::None, Carry::Chunks, Carry::Parity] {
            let mut level =
                UpolsLevel::new(&mut planner, shape, &paths, &tap_refs, &shared).carrying(kind, 8);
            let window_len = level.window_len();
            assert_eq!(window_len, (span + 1) * partition_size);
            let mut outputs = vec![vec![0.0; partition_size]; num_outputs];
            for period in 0..periods {
                let end = (period + 1) * partition_size;
                // The window: the last `(span + 1) P` samples, silence before time 0.
                let windows: Vec<Vec<f32>> = input
                    .iter()
                    .map(|x| {
                        (end..end + window_len)
                            .map(|idx| idx.checked_sub(window_len).map_or(0.0, |time| x[time]))
                            .collect()
                    })
                    .collect();
                run_period(&mut level, &windows, &mut outputs);
                for (output_idx, output) in outputs.iter().enumerate() {
                    for (offset, &got) in output.iter().enumerate() {
                        let time = end - partition_size + offset;
                        let want: f64 = paths
                            .iter()
                            .zip(&taps)
                            .filter(|(path, _)| path.output_idx == output_idx)
                            .flat_map(|(path, taps)| {
                                let x = &input[path.input_idx];
                                (0..num_taps.min(time + 1))
                                    .map(move |tap| f64::from(taps[tap]) * f64::from(x[time - tap]))
                            })
                            .sum();
                        // Sums of up to 2 x 144 products below 1 in magnitude.
                        assert!(
                            (f64::from(got) - want).abs() < 1e-4,
                            "span {span} {kind:?} period {period}: {got} vs {want}"
                        );
                    }
                }
            }
        }
    }
}

/// Only levels whose spectra outgrow the cache carry. In chunks, those of many partitions: the
/// last level of a stereo 10 s reverb (2 IR and 2 input spectra of 28 x 16385 bins, 14 MiB),
/// of a stereo 1 s reverb at block 1024 (10 x 4097 bins, 1.3 MiB) and of a dense 4 x 4 matrix
/// of 2 s at block 128 (16 and 4 of 10 x 8193 bins, 13 MiB); not a stereo 1 s reverb's level
/// of 512 at block 64 (14 x 513 bins, 230 KiB). By parity, dense levels of a few partitions
/// (a 12 x 12 matrix's 4 x 16385 bins, 36 MiB of IR spectra), not stereo ones.
#[test]
fn carries_only_levels_past_the_cache() {
    assert_eq!(carry_for(28, 2, 2, 16385), Carry::Chunks);
    assert_eq!(carry_for(10, 2, 2, 4097), Carry::Chunks);
    assert_eq!(carry_for(10, 16, 4, 8193), Carry::Chunks);
    assert_eq!(carry_for(14, 2, 2, 513), Carry::None);
    assert_eq!(carry_for(4, 144, 12, 16385), Carry::Parity);
    assert_eq!(carry_for(4, 2, 2, 16385), Carry::None);
    assert_eq!(
        carry_for(1, 256, 16, 32769),
        Carry::None,
        "one partition has no next period to carry to"
    );
}

/// A level summing its outputs together, chunk by chunk, gives each output the bits of a
/// level that holds that output's paths alone: each output's terms go in the same order, across
/// a gap and a reset, with the outputs' paths routed in different orders, an output with fewer
/// paths and one with none. Carrying in chunks, the level alone walks one output at a time. By
/// parity, a period with nothing carried (the first, after the gap and after the reset) also
/// gives the bits of the level summed without carrying: path by path, partition by partition.
#[test]
fn outputs_summed_together_give_each_alone_bits() {
    let mut rng = Rng::new(13);
    let (partition_size, num_inputs, num_outputs) = (32, 3, 4);
    // Output 0 reads inputs 0, 1, 2; output 1 reads 2, 0 (in that order); output 2 reads 1;
    // output 3 nothing.
    let paths =
        [(0, 0), (2, 1), (1, 0), (0, 1), (1, 2), (2, 0)].map(|(input_idx, output_idx)| Path {
            input_idx,
            output_idx,
        });
    let sizes = [(1, 2), (1, 5), (2, 3)];
    for ((span, num_partitions), kind) in sizes
        .into_iter()
        .flat_map(|size| [Carry::Parity, Carry::Chunks].map(|kind| (size, kind)))
    {
        let level_size = (partition_size, span, num_partitions);
        let io = (num_inputs, num_outputs);
        let (taps, shape, shared) = random_level(&mut rng, paths.len(), level_size, io);
        let mut planner = FftPlanner::new();
        let tap_refs: Vec<&[f32]> = taps.iter().map(Vec::as_slice).collect();
        let mut together = UpolsLevel::new(&mut planner, shape, &paths, &tap_refs, &shared)
            .carrying(kind, 8)
            .summing_together();
        let mut plain = UpolsLevel::new(&mut planner, shape, &paths, &tap_refs, &shared);
        assert_eq!(plain.carry_kind(), Carry::None);
        let mut alone: Vec<UpolsLevel> = (0..num_outputs)
            .map(|output_idx| {
                let own: Vec<usize> = (0..paths.len())
                    .filter(|&path_idx| paths[path_idx].output_idx == output_idx)
                    .collect();
                let own_paths: Vec<Path> = own.iter().map(|&path_idx| paths[path_idx]).collect();
                let own_taps: Vec<&[f32]> =
                    own.iter().map(|&path_idx| tap_refs[path_idx]).collect();
                let own_shared: Vec<usize> = (0..own.len()).collect();
                UpolsLevel::new(&mut planner, shape, &own_paths, &own_taps, &own_shared)
                    .carrying(kind, 8)
            })
            .collect();
        let mut outputs = vec![vec![0.0; partition_size]; num_outputs];
        let mut alone_outputs = vec![vec![0.0; partition_size]; num_outputs];
        let mut plain_outputs = vec![vec![0.0; partition_size]; num_outputs];
        for period in 0..30 {
            {
                let levels = [&mut together, &mut plain]
                    .into_iter()
                    .chain(alone.iter_mut());
                match period {
                    9 => levels.for_each(|level| level.push_silence(1)),
                    20 => levels.for_each(UpolsLevel::reset),
                    _ => {}
                }
            }
            let windows = random_windows(&mut rng, num_inputs, (span + 1) * partition_size);
            run_period(&mut together, &windows, &mut outputs);
            run_period(&mut plain, &windows, &mut plain_outputs);
            if kind == Carry::Parity && [0, 9, 20].contains(&period) {
                assert_eq!(
                    outputs, plain_outputs,
                    "{kind:?} s={span} n={num_partitions} {period}"
                );
            }
            for (output_idx, level) in alone.iter_mut().enumerate() {
                run_period(level, &windows, &mut alone_outputs);
                assert_eq!(
                    outputs[output_idx], alone_outputs[output_idx],
                    "{kind:?} s={span} n={num_partitions} period {period} output {output_idx}"
                );
            }
        }
        assert!(outputs[3].iter().all(|&x| x == 0.0));
    }
}

/// A level carrying in chunks has chunks of both parities, so its periods share the work
/// evenly; chunks are longer where a level sums its outputs together, up to all the bins by
/// parity.
#[test]
fn every_carrying_level_has_two_chunks_or_more() {
    let chunks = |num_bins| carry::chunk_bins(Carry::Chunks, false, num_bins);
    assert_eq!(chunks(16385), carry::CARRY_CHUNK_BINS);
    assert_eq!(chunks(1025), 513);
    assert_eq!(chunks(3), 2);
    let together = |num_bins| carry::chunk_bins(Carry::Chunks, true, num_bins);
    assert_eq!(together(16385), carry::TOGETHER_CHUNK_BINS);
    assert_eq!(together(4097), 2049);
    let parity = |num_bins| carry::chunk_bins(Carry::Parity, true, num_bins);
    assert_eq!(parity(16385), carry::TOGETHER_CHUNK_BINS);
    assert_eq!(parity(1025), 1025);
}

/// Which levels sum their outputs together: every one carrying by parity; one carrying in
/// chunks where outputs share inputs and the input spectra outgrow the cache (a dense 4 x 4
/// room's `8192 x 10` level, not its `4096 x 6` one nor a stereo reverb's).
#[test]
fn dense_levels_past_the_cache_sum_their_outputs_together() {
    let input_bytes =
        |num_inputs, num_slots, num_bins| spectra_bytes(num_inputs, num_slots, num_bins);
    assert!(sums_together(Carry::Parity, 144, 12, 0));
    assert!(sums_together(
        Carry::Chunks,
        16,
        4,
        input_bytes(4, 10, 8193)
    ));
    assert!(!sums_together(
        Carry::Chunks,
        16,
        4,
        input_bytes(4, 6, 4097)
    ));
    assert!(!sums_together(
        Carry::Chunks,
        2,
        2,
        input_bytes(2, 14, 32769)
    ));
    assert!(!sums_together(Carry::None, 16, 4, input_bytes(4, 10, 8193)));
}

/// Test hooks on the level's carrying.
impl UpolsLevel {
    /// How [`Self::compute`] carries terms to the next period ([`carry_for`]).
    fn carry_kind(&self) -> Carry {
        self.carry_kind
    }

    /// Carries terms as `kind` says whatever the level's size, chunks of `chunk_bins`, so tests
    /// can check carrying on small levels.
    fn carrying(mut self, kind: Carry, chunk_bins: usize) -> Self {
        self.carry_kind = kind;
        self.carry = carry_buffers(self.output_paths.len(), self.num_bins);
        self.together = kind == Carry::Parity;
        self.output_accs = if self.together {
            carry_buffers(self.output_paths.len(), self.num_bins)
        } else {
            Vec::new()
        };
        self.carry_chunk_bins = chunk_bins;
        self
    }

    /// Sums all outputs at once whatever the level's size (a level carrying in chunks).
    fn summing_together(mut self) -> Self {
        self.together = true;
        self.output_accs = carry_buffers(self.output_paths.len(), self.num_bins);
        self
    }

    /// Forgets the terms carried so far, as a gap would, so tests can compare periods summed
    /// afresh with carried ones.
    fn drop_carried(&mut self) {
        self.carry_period = None;
    }
}

/// The fused level 0 sums each quantum a quantum ahead on the audio thread, so it carries too,
/// but by parity only: a level set to carry in chunks sums whole once fused. Carried or not,
/// quanta delivered whole (`run_fused`) and in pieces (`flush_pending`, then `advance`), in
/// turn and across a reset, give the same output to float rounding.
#[test]
fn fused_level_carries_by_parity_only() {
    let mut rng = Rng::new(12);
    let (partition_size, num_partitions, num_inputs, num_outputs) = (32, 3, 2, 2);
    let paths: Vec<Path> = (0..num_inputs * num_outputs)
        .map(|idx| Path {
            input_idx: idx / num_outputs,
            output_idx: idx % num_outputs,
        })
        .collect();
    let random_taps = |rng: &mut Rng, len: usize| -> Vec<Vec<f32>> {
        (0..paths.len())
            .map(|_| (0..len).map(|_| rng.bipolar()).collect())
            .collect()
    };
    let (head, taps) = (
        random_taps(&mut rng, partition_size),
        random_taps(&mut rng, num_partitions * partition_size),
    );
    let head_refs: Vec<&[f32]> = head.iter().map(Vec::as_slice).collect();
    let tap_refs: Vec<&[f32]> = taps.iter().map(Vec::as_slice).collect();
    let shape = LevelShape {
        partition_size,
        span: 1,
        num_partitions,
        ir_offset: partition_size,
        output_delay: partition_size,
        num_inputs,
        num_outputs,
    };
    let shared: Vec<usize> = (0..paths.len()).collect();
    let mut planner = FftPlanner::new();
    let mut levels = [Carry::None, Carry::Parity, Carry::Chunks].map(|kind| {
        let mut level =
            UpolsLevel::new(&mut planner, shape, &paths, &tap_refs, &shared).carrying(kind, 8);
        level.enable_fused_head(&head_refs);
        level
    });
    let kinds = levels.each_ref().map(UpolsLevel::carry_kind);
    assert_eq!(kinds, [Carry::None, Carry::Parity, Carry::None]);

    let mut inputs: Vec<InputRing> = (0..num_inputs)
        .map(|_| InputRing::new(4 * partition_size))
        .collect();
    let mut rings: Vec<Vec<OutputRing>> = (0..levels.len())
        .map(|_| {
            (0..num_outputs)
                .map(|_| OutputRing::new(4 * partition_size))
                .collect()
        })
        .collect();
    for quantum in 0..40u64 {
        if quantum == 23 {
            for level in &mut levels {
                level.reset();
            }
        }
        let (start, end) = (
            quantum * partition_size as u64,
            (quantum + 1) * partition_size as u64,
        );
        for ring in &mut inputs {
            let chunk: Vec<f32> = (0..partition_size).map(|_| rng.bipolar()).collect();
            ring.write_slice(start, &chunk);
        }
        let whole = quantum % 3 != 1;
        let mut outputs = vec![vec![vec![0.0f32; partition_size]; num_outputs]; levels.len()];
        for ((level, level_rings), level_outputs) in
            levels.iter_mut().zip(&mut rings).zip(&mut outputs)
        {
            if whole {
                let mut refs: Vec<&mut [f32]> =
                    level_outputs.iter_mut().map(Vec::as_mut_slice).collect();
                level.run_fused(end, &inputs, &mut refs);
            } else {
                level.flush_pending(start, level_rings);
                level.advance(end, &inputs);
            }
            for (ring, output) in level_rings.iter_mut().zip(level_outputs.iter_mut()) {
                ring.drain_add(start, output);
            }
        }
        for (carried, plain) in outputs[1]
            .iter()
            .chain(&outputs[2])
            .zip(outputs[0].iter().cycle())
        {
            for (got, want) in carried.iter().zip(plain) {
                // Sums of 2 x 4 x 32 products below 1 in magnitude, in two orders.
                assert!(
                    (got - want).abs() < 1e-4,
                    "quantum {quantum}: {got} != {want}"
                );
            }
        }
        assert!(outputs[0].iter().flatten().any(|&sample| sample != 0.0));
    }
}

/// Every block of a level's spectra (IR, input, sums) starts on a cache line, whatever the
/// partition size: the MAC kernels' loads never split two lines. The IR spectra given to the
/// GPU leave the padding out.
#[test]
fn every_spectrum_block_starts_on_a_cache_line() {
    let mut rng = Rng::new(5);
    let mut planner = rustfft::FftPlanner::new();
    for partition_size in [16, 64, 1024] {
        let (taps, shape, shared) = random_level(&mut rng, 4, (partition_size, 1, 3), (2, 2));
        let paths: Vec<_> = (0..4)
            .map(|idx| Path {
                input_idx: idx / 2,
                output_idx: idx % 2,
            })
            .collect();
        let tap_refs: Vec<&[f32]> = taps.iter().map(Vec::as_slice).collect();
        let level = UpolsLevel::new(&mut planner, shape, &paths, &tap_refs, &shared);
        let num_bins = partition_size + 1;
        let starts_on_a_line = |spectrum: Spectrum<'_>| {
            assert_eq!(spectrum.re.len(), num_bins);
            [spectrum.re.as_ptr(), spectrum.im.as_ptr()]
                .iter()
                .all(|&ptr| (ptr as usize).is_multiple_of(64))
        };
        for block in 0..4 * 3 {
            assert!(
                starts_on_a_line(level.spectra.block(block)),
                "P {partition_size}"
            );
        }
        for fdl in &level.fdl {
            for slot in 0..level.num_slots {
                assert!(starts_on_a_line(fdl.block(slot)), "P {partition_size}");
            }
        }
        assert!(starts_on_a_line(level.acc.first()));
        // The GPU's copy: each path's partitions packed, the same bins as the blocks.
        let spec = level.gpu_spec_source(2).spec();
        for (path_idx, spectra) in spec.spectra.iter().enumerate() {
            assert_eq!(spectra.len(), 3 * num_bins);
            for partition_idx in 0..3 {
                let block = level.spectra.block(path_idx * 3 + partition_idx);
                let packed = &spectra[partition_idx * num_bins..(partition_idx + 1) * num_bins];
                assert!(packed.iter().zip(block.re).all(|(bin, &re)| bin[0] == re));
                assert!(packed.iter().zip(block.im).all(|(bin, &im)| bin[1] == im));
            }
        }
    }
}

/// Taken a chunk a step as a spread period takes it, a carrying level's products, as
/// [`UpolsLevel::mac_chunk_step`] counts them for the spread's budget, come to its terms times
/// its bins a period over any two carried periods: each chunk leads once (its terms `j >= 1`
/// for two periods) and is carried once (`j = 0` alone).
#[test]
fn chunk_steps_count_a_periods_products_over_two_periods() {
    let mut rng = Rng::new(5);
    let (partition_size, num_partitions, io) = (1024, 8, (4, 4));
    let paths = Path::dense(4, 4);
    let (taps, shape, shared) = random_level(
        &mut rng,
        paths.len(),
        (partition_size, 1, num_partitions),
        io,
    );
    let taps: Vec<&[f32]> = taps.iter().map(Vec::as_slice).collect();
    let mut level = UpolsLevel::new(&mut FftPlanner::new(), shape, &paths, &taps, &shared);
    assert!(level.carries_in_chunks() && !level.sums_outputs_together());
    let terms = paths.len() * num_partitions;
    let chunk_bins: usize = (0..level.num_carry_chunks())
        .map(|c| level.carry_chunk_len(c))
        .sum();
    assert_eq!(chunk_bins, partition_size + 1);
    let mut totals = Vec::new();
    for _ in 0..5 {
        level.advance_fdl();
        for (input_idx, window) in random_windows(&mut rng, 4, 2 * partition_size)
            .iter()
            .enumerate()
        {
            level.forward_input(input_idx, window);
        }
        let mut total = 0;
        for output_idx in 0..4 {
            for chunk_idx in 0..level.num_carry_chunks() {
                total += level.mac_chunk_step(output_idx, chunk_idx);
            }
        }
        level.end_chunked_period();
        totals.push(total);
    }
    // Per output, a leading chunk takes its 4 paths' `j = 0` and twice their 7 later terms; a
    // carried one `j = 0` alone; in the first period, which carries nothing in, the others
    // take all their terms. Periods count from 1, so chunk `c` leads where `period + c` is even.
    let expected = |period: usize| -> usize {
        (0..level.num_carry_chunks())
            .map(|c| {
                let per_output = match ((period + c).is_multiple_of(2), period > 1) {
                    (true, _) => 4 + 2 * 4 * 7,
                    (false, true) => 4,
                    (false, false) => 4 * 8,
                };
                4 * per_output * level.carry_chunk_len(c)
            })
            .sum()
    };
    assert_eq!(totals, (1..=5).map(expected).collect::<Vec<_>>());
    for pair in totals[1..].windows(2) {
        assert_eq!(pair[0] + pair[1], 2 * terms * chunk_bins, "{totals:?}");
    }
}
