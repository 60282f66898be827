//! The carried MAC against periods summed afresh and step by step, and where a level carries.

use super::*;
use crate::rng::Rng;

/// Run whole, a carrying level sums terms of each period ahead, in chunks or by parity; step
/// by step ([`UpolsLevel::mac_step`], as [`super::super::spread`] runs it) it carries nothing.
/// All give the same output, to float rounding, across gaps (chunks the late policy dropped)
/// and a reset, for odd and even partition counts. And carrying in chunks changes no bit: a
/// level that forgets what it carried before every period (and so sums each afresh) gives the
/// same output.
#[test]
fn carried_terms_match_periods_summed_whole() {
    let mut rng = Rng::new(11);
    let (partition_size, num_inputs, num_outputs) = (32, 2, 3);
    // Output 2 has no path; output 1 has one from each input.
    let paths = [(0, 0), (0, 1), (1, 1), (1, 0)].map(|(input_idx, output_idx)| Path {
        input_idx,
        output_idx,
    });
    for num_partitions in [2, 3, 4, 5] {
        let taps: Vec<Vec<f32>> = (0..paths.len())
            .map(|_| {
                (0..num_partitions * partition_size)
                    .map(|_| rng.bipolar())
                    .collect()
            })
            .collect();
        let path_taps: Vec<&[f32]> = taps.iter().map(Vec::as_slice).collect();
        let shape = LevelShape {
            partition_size,
            num_partitions,
            ir_offset: 0,
            output_delay: partition_size,
            num_inputs,
            num_outputs,
        };
        let shared: Vec<usize> = (0..paths.len()).collect();
        let mut planner = FftPlanner::new();
        // 33 bins in chunks of 8: five chunks, the last one short.
        let new = |planner: &mut FftPlanner<f32>| {
            UpolsLevel::new(planner, shape, &paths, &path_taps, &shared)
        };
        let mut whole = new(&mut planner).carrying(Carry::Chunks, 8);
        let mut afresh = new(&mut planner).carrying(Carry::Chunks, 8);
        let mut parity = new(&mut planner).carrying(Carry::Parity, 0);
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
            let windows: Vec<Vec<f32>> = (0..num_inputs)
                .map(|_| (0..2 * partition_size).map(|_| rng.bipolar()).collect())
                .collect();
            let window_refs: Vec<&[f32]> = windows.iter().map(Vec::as_slice).collect();
            let mut output_refs: Vec<&mut [f32]> =
                outputs.iter_mut().map(Vec::as_mut_slice).collect();
            whole.compute(&window_refs, &mut output_refs);
            afresh.drop_carried();
            let mut output_refs: Vec<&mut [f32]> =
                afresh_outputs.iter_mut().map(Vec::as_mut_slice).collect();
            afresh.compute(&window_refs, &mut output_refs);
            assert_eq!(outputs, afresh_outputs, "n={num_partitions} {period}");
            let mut output_refs: Vec<&mut [f32]> =
                parity_outputs.iter_mut().map(Vec::as_mut_slice).collect();
            parity.compute(&window_refs, &mut output_refs);
            let mut output_refs: Vec<&mut [f32]> =
                plain_outputs.iter_mut().map(Vec::as_mut_slice).collect();
            plain.compute(&window_refs, &mut output_refs);

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
                    "n={num_partitions} {period}"
                );
                for (got, want) in output
                    .iter()
                    .chain(&parity_outputs[output_idx])
                    .zip(wanted.iter().cycle())
                {
                    // Sums of 2 x 5 x 32 products below 1 in magnitude, in two orders.
                    assert!(
                        (got - want).abs() <= 1e-4,
                        "n={num_partitions} period {period} output {output_idx}: \
                         {got} vs {want}"
                    );
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

/// A carrying level's chunks come in both parities, so its periods share the work evenly.
#[test]
fn every_carrying_level_has_two_chunks_or_more() {
    assert_eq!(carry::chunk_bins(16385), carry::CARRY_CHUNK_BINS);
    assert_eq!(carry::chunk_bins(1025), 513);
    assert_eq!(carry::chunk_bins(3), 2);
}
