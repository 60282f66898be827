//! Auto for the whole process: the load policy that moves the big levels of Auto engines to
//! the GPU when the CPU is loaded and the GPU is cheaper, and back when the load falls
//! ([`LoadPolicy`]).
//!
//! Auto decides per engine when it is built ([`super::gpu_placement::open_gpu`]): an engine under
//! [`AUTO_MIN_WORK`](crate::engine::AUTO_MIN_WORK) stays on the CPU, since one small reverb does
//! not pay for a GPU round trip. A hundred of them do: the hub batches every level of the process
//! into one submit. So the governor ([`super::governor`]) sums, once a poll, what every watched
//! Auto engine asks together and what it costs the CPU:
//!
//! - the *CPU load*: the Auto engines' worker time over the poll, divided by the poll's length
//!   times the machine's cores, plus what the levels this policy sent to the GPU would cost the
//!   CPU if they came back (their path-partitions per second times the CPU's cost of one,
//!   [`crate::engine::cpu_partition_cost_ns`]); so the load does not fall just because the work
//!   left, and nothing flaps;
//! - whether the GPU *pays*: the process's hub (opened by the governor, lazily, the first time
//!   the load is high, so a lone small instance never opens a device) is a real GPU, not a CPU
//!   adapter, and its calibrated cost per path-partition is below the CPU's.
//!
//! The policy is pure arithmetic with hysteresis: the levels go to the GPU after
//! [`MOVE_AFTER_POLLS`] polls at or above [`LOAD_HIGH`], and come back after
//! [`RETURN_AFTER_POLLS`] polls at or below [`LOAD_LOW`]. Heat wins: the governor never lets a
//! level onto a hot or throttling GPU, whatever this policy says. Each level still checks its
//! own rule on the way ([`crate::engine::worker::gpu::way_back`]: its slack must cover the hub's
//! recent round trips), so small partitions with little slack stay on the CPU.
//!
//! Uses only the thermal policy's [`Placement`] and [`Action`]; it reads no probe itself.

use crate::thermal::{Action, Placement};

/// The partition size the costs are measured at (the hub's calibration and
/// [`crate::engine::cpu_partition_cost_ns`]).
pub const REFERENCE_PARTITION: usize = 4096;
/// The CPU load (a share of all cores, 0 to 1) from which the levels go to the GPU.
pub const LOAD_HIGH: f64 = 0.6;
/// The CPU load (with the moved levels counted back) at or below which they come back.
pub const LOAD_LOW: f64 = 0.3;
/// Polls (seconds) at or above [`LOAD_HIGH`] before the levels move to the GPU.
pub const MOVE_AFTER_POLLS: u32 = 3;
/// Polls (seconds) at or below [`LOAD_LOW`] before they come back.
pub const RETURN_AFTER_POLLS: u32 = 10;

/// Why levels came back: the GPU got hot, throttles or broke.
const GPU_UNUSABLE: &str = "the GPU can no longer take work (hot, throttling or broken)";
/// Why levels came back: the load fell.
const LOAD_FELL: &str = "the CPU's load has fallen: the work fits on the CPU again";

/// One poll's view of the process: what the policy decides on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoadSample {
    /// The CPU load the Auto engines would put on the machine with all their levels on the
    /// CPU, as a share of all its cores (see the module docs).
    pub cpu_load: f64,
    /// Whether the GPU pays: a real GPU whose calibrated cost per path-partition is below the
    /// CPU's. `None` while unknown (the hub is not open yet).
    pub gpu_pays: Option<bool>,
    /// The hub's calibrated cost of one path-partition, in nanoseconds, when it is open.
    pub gpu_partition_ns: Option<f64>,
    /// The CPU's cost of the same.
    pub cpu_partition_ns: f64,
}

/// What the load policy decided at a poll, and why, with the figures it decided on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoadDecision {
    pub placement: Placement,
    pub action: Action,
    pub reason: &'static str,
    pub sample: LoadSample,
    /// The reason of the policy's last move back to the CPU, if it made one.
    pub last_return: Option<&'static str>,
}

impl std::fmt::Display for LoadDecision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} (CPU load {:.0}%, CPU {:.0} ns",
            self.reason,
            100.0 * self.sample.cpu_load,
            self.sample.cpu_partition_ns
        )?;
        match self.sample.gpu_partition_ns {
            Some(gpu) => write!(f, ", GPU {gpu:.0} ns per path-partition)"),
            None => write!(f, " per path-partition, GPU not measured)"),
        }
    }
}

/// The process's load policy (see the module docs). One per process, in the governor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadPolicy {
    placement: Placement,
    high_polls: u32,
    low_polls: u32,
    move_after: u32,
    return_after: u32,
    last_return: Option<&'static str>,
}

impl Default for LoadPolicy {
    fn default() -> Self {
        Self::new(MOVE_AFTER_POLLS, RETURN_AFTER_POLLS)
    }
}

impl LoadPolicy {
    /// Starts on the CPU; moves after `move_after` high polls, returns after `return_after`
    /// low ones.
    pub fn new(move_after: u32, return_after: u32) -> Self {
        Self {
            placement: Placement::Cpu,
            high_polls: 0,
            low_polls: 0,
            move_after: move_after.max(1),
            return_after: return_after.max(1),
            last_return: None,
        }
    }

    /// Where the levels of small Auto engines run now.
    pub fn placement(&self) -> Placement {
        self.placement
    }

    /// Whether the load is high enough that the governor should find out whether the GPU pays
    /// (open the hub).
    pub fn wants_gpu_verdict(sample: &LoadSample) -> bool {
        sample.cpu_load >= LOAD_HIGH && sample.gpu_pays.is_none()
    }

    /// One step, once per poll. `gpu_usable`: a GPU is there, healthy and cool (the thermal
    /// side); when it is not, the levels come back at once.
    pub fn update(&mut self, sample: LoadSample, gpu_usable: bool) -> LoadDecision {
        let high = sample.cpu_load >= LOAD_HIGH;
        let low = sample.cpu_load <= LOAD_LOW;
        self.high_polls = if high { self.high_polls + 1 } else { 0 };
        self.low_polls = if low { self.low_polls + 1 } else { 0 };
        let pays = sample.gpu_pays == Some(true);
        if self.placement == Placement::Gpu {
            if !gpu_usable {
                self.last_return = Some(GPU_UNUSABLE);
            } else if low && self.low_polls >= self.return_after {
                self.last_return = Some(LOAD_FELL);
            }
        }
        let last_return = self.last_return;
        let decide = |placement, action, reason| LoadDecision {
            placement,
            action,
            reason,
            sample,
            last_return,
        };
        match self.placement {
            Placement::Cpu => {
                if high && gpu_usable && pays && self.high_polls >= self.move_after {
                    self.placement = Placement::Gpu;
                    return decide(
                        Placement::Gpu,
                        Action::MoveToGpu,
                        "the CPU is loaded and the GPU costs less per path-partition",
                    );
                }
                let reason = if !high {
                    "the CPU has room"
                } else if !gpu_usable {
                    "the CPU is loaded, but no GPU can take work"
                } else if sample.gpu_pays == Some(false) {
                    "the CPU is loaded, but the GPU costs more per path-partition"
                } else {
                    "the CPU is loaded; moving once it stays so"
                };
                decide(Placement::Cpu, Action::Stay, reason)
            }
            Placement::Gpu => {
                if !gpu_usable {
                    self.placement = Placement::Cpu;
                    return decide(Placement::Cpu, Action::MoveToCpu, GPU_UNUSABLE);
                }
                if low && self.low_polls >= self.return_after {
                    self.placement = Placement::Cpu;
                    return decide(Placement::Cpu, Action::MoveToCpu, LOAD_FELL);
                }
                decide(
                    Placement::Gpu,
                    Action::Stay,
                    "the CPU would be loaded without the GPU",
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(cpu_load: f64, gpu_pays: Option<bool>) -> LoadSample {
        LoadSample {
            cpu_load,
            gpu_pays,
            gpu_partition_ns: gpu_pays.map(|_| 1000.0),
            cpu_partition_ns: 2000.0,
        }
    }

    #[test]
    fn a_loaded_cpu_moves_work_to_a_gpu_that_pays_and_back_with_hysteresis() {
        let mut policy = LoadPolicy::new(3, 5);
        assert!(LoadPolicy::wants_gpu_verdict(&sample(0.8, None)));
        assert!(!LoadPolicy::wants_gpu_verdict(&sample(0.5, None)));
        for _ in 0..2 {
            let d = policy.update(sample(0.8, Some(true)), true);
            assert_eq!((d.placement, d.action), (Placement::Cpu, Action::Stay));
        }
        // A dip restarts the count.
        policy.update(sample(0.5, Some(true)), true);
        for _ in 0..2 {
            policy.update(sample(0.8, Some(true)), true);
        }
        assert_eq!(policy.placement(), Placement::Cpu);
        let d = policy.update(sample(0.8, Some(true)), true);
        assert_eq!((d.placement, d.action), (Placement::Gpu, Action::MoveToGpu));
        // Between the thresholds nothing moves.
        for _ in 0..20 {
            let d = policy.update(sample(0.45, Some(true)), true);
            assert_eq!((d.placement, d.action), (Placement::Gpu, Action::Stay));
        }
        for _ in 0..4 {
            assert_eq!(
                policy.update(sample(0.1, Some(true)), true).placement,
                Placement::Gpu
            );
        }
        let d = policy.update(sample(0.1, Some(true)), true);
        assert_eq!((d.placement, d.action), (Placement::Cpu, Action::MoveToCpu));
        assert!(d.to_string().contains("CPU load 10%"), "{d}");
    }

    #[test]
    fn a_gpu_that_costs_more_or_cannot_take_work_gets_nothing() {
        let mut policy = LoadPolicy::new(1, 1);
        for _ in 0..5 {
            let d = policy.update(sample(0.9, Some(false)), true);
            assert_eq!(d.placement, Placement::Cpu);
            assert!(d.reason.contains("costs more"));
            let d = policy.update(sample(0.9, None), true);
            assert_eq!(d.placement, Placement::Cpu);
        }
        let d = policy.update(sample(0.9, Some(true)), false);
        assert_eq!(d.placement, Placement::Cpu);
        let d = policy.update(sample(0.9, Some(true)), true);
        assert_eq!(d.placement, Placement::Gpu);
        // A GPU that gets hot or breaks sends the work back at once.
        let d = policy.update(sample(0.9, Some(true)), false);
        assert_eq!((d.placement, d.action), (Placement::Cpu, Action::MoveToCpu));
    }
}
