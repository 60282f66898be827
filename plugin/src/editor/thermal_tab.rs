//! The Thermal tab: the CPU and GPU thermal states with their sensors, and what the thermal
//! policy decided and why.

use super::*;
use crate::engine::{BackendProbe, RunsOn};
use crate::thermal::{Action, GpuStatus, Placement};

impl EditorApp {
    pub(super) fn thermal_tab(&mut self, ui: &mut egui::Ui) {
        let Some(snapshot) = self.window_threads.thermal_snapshot() else {
            ui.label("The thermal monitor could not start.");
            return;
        };
        // The GPU as the playing engine sees it: a hub that serves, and levels it runs.
        let backend = self.playing_backend();
        let gpu = GpuStatus {
            available: backend
                .as_ref()
                .and_then(BackendProbe::gpu_stats)
                .is_some_and(|stats| stats.broken.is_none()),
            slack_allows: backend
                .as_ref()
                .is_some_and(|b| b.levels().iter().any(|l| l.runs_on == RunsOn::Gpu)),
        };
        // The governor's decision for the playing engine when it watches it (it acts on it);
        // else what the policy would decide.
        let local = self.policy.update(&snapshot, gpu);
        let decision = backend
            .as_ref()
            .and_then(BackendProbe::thermal_decision)
            .unwrap_or(local);
        ui.heading("Thermal state");
        egui::Grid::new("thermal-grid")
            .num_columns(2)
            .show(ui, |ui| {
                ui.label("CPU");
                state_label(ui, snapshot.cpu);
                ui.end_row();
                ui.label("GPU");
                ui.horizontal(|ui| {
                    state_label(ui, snapshot.gpu);
                    if snapshot.gpu_throttling {
                        ui.colored_label(super::theme::Palette::WARN, "throttling");
                    }
                });
                ui.end_row();
                ui.label("Sources");
                ui.label(&snapshot.sources);
                ui.end_row();
            });
        if snapshot.readings.is_empty() {
            ui.label("No temperature sensor is readable on this machine (state Unknown).");
        } else {
            egui::Grid::new("readings-grid")
                .num_columns(4)
                .striped(true)
                .show(ui, |ui| {
                    for reading in &snapshot.readings {
                        ui.label(&reading.source);
                        ui.label(reading.device.name());
                        ui.label(reading.temperature_text());
                        state_label(ui, reading.state());
                        ui.end_row();
                    }
                });
        }
        ui.add_space(8.0);
        ui.heading("Policy");
        let action = match decision.action {
            Action::Stay => "no change",
            Action::MoveToCpu => "moved the GPU levels to the CPU",
            Action::MoveToGpu => "moved the big levels to the GPU",
            Action::SuggestLargerBuffer => "suggests a larger host buffer",
        };
        ui.label(format!(
            "Work runs on the {}: {action}, because {}.",
            match decision.placement {
                Placement::Cpu => "CPU",
                Placement::Gpu => "GPU",
            },
            decision.reason
        ));
    }
}
