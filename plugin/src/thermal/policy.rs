//! The Auto backend's thermal policy: from a [`ThermalSnapshot`] and the GPU's health, where the
//! plan's big levels run ([`Placement`]) and what to do about it ([`Action`]), moving back to
//! the GPU only after it stayed cool ([`RETURN_AFTER_POLLS`]).
//!
//! Uses only the snapshot of [`super::monitor`] (and its states); it reads no probe itself.

use super::monitor::ThermalSnapshot;

/// Where the plan's big levels run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Placement {
    Cpu,
    Gpu,
}

/// What the policy did at a poll.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    /// Nothing to change.
    Stay,
    /// Move the GPU levels to the CPU (crossfaded migration, as for faults).
    MoveToCpu,
    /// Move the big levels (back) to the GPU.
    MoveToGpu,
    /// Both devices are hot: the editor suggests a larger host buffer.
    SuggestLargerBuffer,
}

/// A decision and its reason, for the editor and `longtail-cli status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    pub placement: Placement,
    pub action: Action,
    pub reason: &'static str,
}

/// Inputs of one policy step besides the thermal snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpuStatus {
    /// A GPU executor is open and healthy (no faults).
    pub available: bool,
    /// The plan's slack covers the GPU's measured round trip for the levels that would move.
    pub slack_allows: bool,
}

/// Polls (seconds) the GPU must stay cool before work moves back to it.
pub const RETURN_AFTER_POLLS: u32 = 30;

/// The Auto backend's thermal policy. `preferred` is where Auto's measurement put the big
/// levels; heat moves them, and they go back with hysteresis ([`RETURN_AFTER_POLLS`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThermalPolicy {
    preferred: Placement,
    placement: Placement,
    gpu_cool_polls: u32,
    /// Whether the GPU has been hot (or unusable) since the policy started.
    gpu_was_hot: bool,
    /// Cool polls before work moves (back) to the GPU.
    return_after: u32,
}

impl ThermalPolicy {
    /// Starts where the measurement says the levels should run.
    pub fn new(preferred: Placement) -> Self {
        Self {
            preferred,
            placement: preferred,
            gpu_cool_polls: 0,
            gpu_was_hot: false,
            return_after: RETURN_AFTER_POLLS,
        }
    }

    /// The same, needing `polls` cool polls instead of [`RETURN_AFTER_POLLS`] (tests).
    pub fn with_return_after(self, polls: u32) -> Self {
        Self {
            return_after: polls,
            ..self
        }
    }

    /// Where the levels run now.
    pub fn placement(&self) -> Placement {
        self.placement
    }

    /// Whether work may go to the GPU as far as heat goes: it has not been hot or unusable
    /// since the policy started, or it has stayed cool for the return's polls since. The load
    /// policy ([`crate::engine::placement::load_policy`]) asks this before it sends levels there.
    pub fn gpu_cool_enough(&self) -> bool {
        !self.gpu_was_hot || self.gpu_cool_polls >= self.return_after
    }

    /// One step, once per poll.
    pub fn update(&mut self, thermal: &ThermalSnapshot, gpu: GpuStatus) -> Decision {
        let gpu_hot = thermal.gpu_throttling || thermal.gpu.is_hot();
        let cpu_hot = thermal.cpu.is_hot();
        if gpu_hot || !gpu.available {
            self.gpu_cool_polls = 0;
            self.gpu_was_hot = true;
        } else {
            self.gpu_cool_polls = self.gpu_cool_polls.saturating_add(1);
        }
        let decide = |placement, action, reason| Decision {
            placement,
            action,
            reason,
        };

        if self.placement == Placement::Gpu && gpu_hot {
            self.placement = Placement::Cpu;
            let reason = if thermal.gpu_throttling {
                "the GPU is throttling"
            } else {
                "the GPU is hot"
            };
            return decide(Placement::Cpu, Action::MoveToCpu, reason);
        }
        if self.placement == Placement::Cpu
            && gpu.available
            && gpu.slack_allows
            && self.gpu_cool_polls >= self.return_after
        {
            if self.preferred == Placement::Gpu {
                self.placement = Placement::Gpu;
                return decide(Placement::Gpu, Action::MoveToGpu, "the GPU has cooled down");
            }
            if cpu_hot {
                self.placement = Placement::Gpu;
                return decide(
                    Placement::Gpu,
                    Action::MoveToGpu,
                    "the CPU is hot and the GPU is healthy",
                );
            }
        }
        if cpu_hot && (gpu_hot || !gpu.available || self.placement == Placement::Gpu) {
            return decide(
                self.placement,
                Action::SuggestLargerBuffer,
                "the CPU is hot and no cooler device can take more work: a larger host buffer \
                 lowers the load",
            );
        }
        let reason = match self.placement {
            Placement::Gpu => "the GPU is healthy",
            Placement::Cpu if !gpu.available => "no GPU executor",
            Placement::Cpu => "the CPU has room",
        };
        decide(self.placement, Action::Stay, reason)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::thermal::ThermalState;

    fn snapshot(cpu: ThermalState, gpu: ThermalState, throttling: bool) -> ThermalSnapshot {
        ThermalSnapshot {
            cpu,
            gpu,
            gpu_throttling: throttling,
            ..ThermalSnapshot::default()
        }
    }

    const HEALTHY_GPU: GpuStatus = GpuStatus {
        available: true,
        slack_allows: true,
    };

    #[test]
    fn hot_gpu_moves_work_to_the_cpu_and_back_after_cooling() {
        use ThermalState::*;
        let mut policy = ThermalPolicy::new(Placement::Gpu);
        let d = policy.update(&snapshot(Nominal, Nominal, false), HEALTHY_GPU);
        assert_eq!((d.placement, d.action), (Placement::Gpu, Action::Stay));
        let d = policy.update(&snapshot(Nominal, Fair, true), HEALTHY_GPU);
        assert_eq!((d.placement, d.action), (Placement::Cpu, Action::MoveToCpu));
        assert_eq!(d.reason, "the GPU is throttling");
        // Cool again, but it must stay cool for RETURN_AFTER_POLLS polls.
        for _ in 0..RETURN_AFTER_POLLS - 1 {
            let d = policy.update(&snapshot(Nominal, Fair, false), HEALTHY_GPU);
            assert_eq!((d.placement, d.action), (Placement::Cpu, Action::Stay));
        }
        // A hot blip restarts the count.
        policy.update(&snapshot(Nominal, Serious, false), HEALTHY_GPU);
        for _ in 0..RETURN_AFTER_POLLS - 1 {
            policy.update(&snapshot(Nominal, Nominal, false), HEALTHY_GPU);
        }
        assert_eq!(policy.placement(), Placement::Cpu);
        let d = policy.update(&snapshot(Nominal, Nominal, false), HEALTHY_GPU);
        assert_eq!((d.placement, d.action), (Placement::Gpu, Action::MoveToGpu));
    }

    #[test]
    fn the_gpu_is_cool_enough_for_the_load_policy_until_hot_and_again_after_cooling() {
        use ThermalState::*;
        let mut policy = ThermalPolicy::new(Placement::Cpu).with_return_after(3);
        assert!(policy.gpu_cool_enough());
        policy.update(&snapshot(Nominal, Nominal, false), HEALTHY_GPU);
        assert!(policy.gpu_cool_enough());
        policy.update(&snapshot(Nominal, Serious, false), HEALTHY_GPU);
        assert!(!policy.gpu_cool_enough());
        for _ in 0..2 {
            policy.update(&snapshot(Nominal, Nominal, false), HEALTHY_GPU);
            assert!(!policy.gpu_cool_enough());
        }
        policy.update(&snapshot(Nominal, Nominal, false), HEALTHY_GPU);
        assert!(policy.gpu_cool_enough());
    }

    #[test]
    fn hot_cpu_moves_work_to_a_healthy_gpu_only_when_the_slack_allows() {
        use ThermalState::*;
        let mut policy = ThermalPolicy::new(Placement::Cpu);
        let tight = GpuStatus {
            available: true,
            slack_allows: false,
        };
        for _ in 0..RETURN_AFTER_POLLS + 5 {
            let d = policy.update(&snapshot(Serious, Nominal, false), tight);
            assert_eq!(d.placement, Placement::Cpu);
            assert_ne!(d.action, Action::MoveToGpu);
        }
        let d = policy.update(&snapshot(Serious, Nominal, false), HEALTHY_GPU);
        assert_eq!((d.placement, d.action), (Placement::Gpu, Action::MoveToGpu));
        // The CPU cooling down does not move the work back: the GPU is fine where it is.
        let d = policy.update(&snapshot(Nominal, Nominal, false), HEALTHY_GPU);
        assert_eq!((d.placement, d.action), (Placement::Gpu, Action::Stay));
    }

    #[test]
    fn both_hot_suggests_a_larger_buffer() {
        use ThermalState::*;
        let mut policy = ThermalPolicy::new(Placement::Cpu);
        let d = policy.update(&snapshot(Critical, Serious, false), HEALTHY_GPU);
        assert_eq!(d.action, Action::SuggestLargerBuffer);
        let no_gpu = GpuStatus {
            available: false,
            slack_allows: false,
        };
        let mut policy = ThermalPolicy::new(Placement::Cpu);
        let d = policy.update(&snapshot(Serious, Unknown, false), no_gpu);
        assert_eq!(d.action, Action::SuggestLargerBuffer);
        let d = policy.update(&snapshot(Fair, Unknown, false), no_gpu);
        assert_eq!((d.action, d.reason), (Action::Stay, "no GPU executor"));
    }
}
