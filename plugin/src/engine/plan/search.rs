//! The planner's search: the cheapest chain of levels for an IR ([`cheapest_levels`]),
//! memoised by partition size and offset, under the cost model of [`super::cost`] and the
//! placement rules of [`super::placement`].
//!
//! Pure code, run once per engine off the audio thread; allocates only the chains it returns
//! and its memo.

use std::collections::HashMap;

use super::cost::{CostWeights, weighted_level_cost};
use super::level::{Level, level_spectra_bytes};
use super::placement::{Placement, ahead_start, level_start, runs_ahead_at, runs_on_worker};

/// Growth factors the planner considers between consecutive levels.
pub const GROWTH_FACTORS: [usize; 3] = [2, 4, 8];

/// Most bytes of spectra ([`level_spectra_bytes`]) of a level whose partitions span more
/// than one hop. Past it the spectra stream from memory, where a level already reads each
/// partition once for two periods (`upols/carry.rs`): a period costs what it reads, and fewer
/// products read no fewer bytes (the 12 x 12 level of 4096 of [`MAX_SPAN`](super::MAX_SPAN), 28 MB,
/// lost 5 %).
pub const SPAN_MAX_SPECTRA_BYTES: usize = 16 << 20;

/// Most partitions of a level whose partitions span more than one hop. From one more (the
/// `CHUNKED_MIN_PARTITIONS` of `upols/carry.rs`) a level big enough carries in chunks there,
/// whose walk finds the next period's input spectrum in the step before's; with spans it is
/// another spectrum, read from memory again.
pub const SPAN_MAX_PARTITIONS: usize = 4;

/// What bounds every chain the planner considers.
pub(super) struct ChainLimits {
    pub(super) ir_len: usize,
    pub(super) max_partition_size: usize,
    pub(super) max_span: usize,
    pub(super) placement: Placement,
    pub(super) weights: CostWeights,
}

/// The cheapest levels covering taps `[offset, ir_len)` starting with partition size
/// `partition_size`, and their cost. Either this level covers the rest, or it covers up to
/// where a larger size may start and the search goes on from there; either way with
/// partitions of any span up to the limits' (level 0, `first_inline`, on the audio thread,
/// keeps span 1: its fused head is one more partition of `P`). `memo` keeps the chains found
/// from each size and offset, so the spans multiply the choices per level, not per chain.
pub(super) fn cheapest_levels(
    partition_size: usize,
    offset: usize,
    limits: &ChainLimits,
    first_inline: bool,
    memo: &mut HashMap<(usize, usize), (f64, Vec<Level>)>,
) -> (f64, Vec<Level>) {
    if !first_inline && let Some(found) = memo.get(&(partition_size, offset)) {
        return found.clone();
    }
    let ir_len = limits.ir_len;
    let max_span = if first_inline { 1 } else { limits.max_span };
    let mut best: Option<(f64, Vec<Level>)> = None;
    // A level on the audio thread (spread over its period, after the first) hands no job over.
    let cost = |level: &Level| {
        let on_worker = runs_on_worker(first_inline, level, &limits.placement);
        weighted_level_cost(level, on_worker, limits.weights)
    };
    // Spans pay where the products fit in cache and the level does not carry in chunks. A
    // level summed ahead keeps span 1 and its spectra within the placement's bound.
    let placement = &limits.placement;
    let ahead_here = runs_ahead_at(first_inline, partition_size, offset, placement);
    let fits = |level: &Level| {
        let bytes = level_spectra_bytes(level, placement.streams);
        if ahead_here {
            level.span == 1 && bytes <= placement.ahead_bytes
        } else {
            level.span == 1
                || (level.num_partitions <= SPAN_MAX_PARTITIONS && bytes <= SPAN_MAX_SPECTRA_BYTES)
        }
    };
    for span in 1..=max_span {
        let level = |num_partitions| Level {
            partition_size,
            span,
            num_partitions,
            ir_offset: offset,
        };
        let taps = span * partition_size;
        let whole = level((ir_len - offset).div_ceil(taps));
        // Ties keep the plan with fewer levels (fewer threads), then the smaller span.
        let mut consider = |cost: f64, levels: Vec<Level>| {
            if best.as_ref().is_none_or(|(best, _)| cost < *best) {
                best = Some((cost, levels));
            }
        };
        if fits(&whole) {
            consider(cost(&whole), vec![whole]);
        }
        for factor in GROWTH_FACTORS {
            let next_size = partition_size * factor;
            let start = level_start(next_size, taps, offset, placement.min_worker_slack);
            // Where the placement allows, also the next level summed ahead, as early as that
            // lets.
            let whole = Some(ahead_start(next_size, taps, offset)).filter(|&whole| {
                placement.ahead_bytes > 0
                    && whole < start
                    && runs_ahead_at(false, next_size, whole, placement)
            });
            for next_start in std::iter::once(start).chain(whole) {
                if next_size > limits.max_partition_size
                    || next_start <= offset
                    || next_start >= ir_len
                {
                    continue;
                }
                let grown = level((next_start - offset) / taps);
                if !fits(&grown) {
                    continue;
                }
                let (tail_cost, tail) = cheapest_levels(next_size, next_start, limits, false, memo);
                let mut levels = vec![grown];
                levels.extend(tail);
                consider(cost(&grown) + tail_cost, levels);
            }
        }
    }
    // A level summed ahead whose every chain breaks its bound has none: the caller's other
    // choices win. The first level always has one (span 1 covering the rest).
    let best = best.unwrap_or((f64::INFINITY, Vec::new()));
    if !first_inline {
        memo.insert((partition_size, offset), best.clone());
    }
    best
}
