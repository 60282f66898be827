//! The soak's input: seeded segments of noise, tones, clicks and silence at random levels.
//!
//! Uses only the crate's [`Rng`].

use crate::rng::Rng;

/// The soak's input: segments of noise, tones, clicks and silence at random levels.
pub(super) struct Signal {
    rng: Rng,
    /// Sample rate, in Hz.
    rate: f64,
    kind: SignalKind,
    /// Samples left in the current segment.
    remaining: u64,
    /// Peak level of the current segment, linear.
    level: f32,
    /// Tone: phase in radians and its increment per sample.
    phase: f64,
    phase_step: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SignalKind {
    Noise,
    Tone,
    Clicks,
    Silence,
}

impl Signal {
    pub(super) fn new(seed: u64, rate: u32) -> Self {
        Self {
            rng: Rng::new(seed),
            rate: f64::from(rate),
            kind: SignalKind::Silence,
            remaining: 0,
            level: 0.0,
            phase: 0.0,
            phase_step: 0.0,
        }
    }

    fn next_segment(&mut self) {
        self.kind = [
            SignalKind::Noise,
            SignalKind::Tone,
            SignalKind::Clicks,
            SignalKind::Silence,
        ][self.rng.range(0, 3)];
        // 50 ms to 4 s, levels from -60 to 0 dBFS.
        self.remaining = ((0.05 + 3.95 * self.rng.next_f64()) * self.rate) as u64;
        self.level = 10f32.powf(-3.0 * self.rng.next_f64() as f32);
        let frequency_hz = 20.0 * 1000f64.powf(self.rng.next_f64());
        self.phase_step = std::f64::consts::TAU * frequency_hz / self.rate;
    }

    pub(super) fn fill(&mut self, left: &mut [f32], right: &mut [f32]) {
        for (l, r) in left.iter_mut().zip(right.iter_mut()) {
            if self.remaining == 0 {
                self.next_segment();
            }
            self.remaining -= 1;
            (*l, *r) = match self.kind {
                SignalKind::Noise => (
                    self.level * self.rng.bipolar(),
                    self.level * self.rng.bipolar(),
                ),
                SignalKind::Tone => {
                    self.phase = (self.phase + self.phase_step) % std::f64::consts::TAU;
                    let sample = self.level * self.phase.sin() as f32;
                    (sample, -sample)
                }
                SignalKind::Clicks => {
                    let click = self.rng.next_u64().is_multiple_of(4800);
                    let sample = if click { self.level } else { 0.0 };
                    (sample, sample)
                }
                SignalKind::Silence => (0.0, 0.0),
            };
        }
    }
}
