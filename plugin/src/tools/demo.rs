//! The built-in dry signal of `longtail-cli demo`: plucked strings, drum-like hits and a
//! voice-like tone, generated deterministically (no audio files in the repository). Off the
//! audio thread; allocates.

use std::f64::consts::TAU;

use crate::rng::Rng;

/// Length of the dry signal in seconds (the renders add each IR's tail).
pub const DRY_SECONDS: f64 = 8.0;

/// A stereo dry signal at `sample_rate`: plucks (0-3 s), drums (3-5.5 s), voice (5.5-8 s).
pub fn dry_signal(sample_rate: u32) -> Vec<Vec<f32>> {
    let rate = f64::from(sample_rate);
    let len = (DRY_SECONDS * rate) as usize;
    let mut left = vec![0.0f32; len];
    let mut right = vec![0.0f32; len];
    let mut rng = Rng::new(0xD3_30);

    // Plucked strings (Karplus-Strong), an arpeggio panned left to right.
    let notes_hz = [196.0, 246.9, 293.7, 392.0, 493.9, 587.3];
    for (note_idx, &freq) in notes_hz.iter().enumerate() {
        let start = (note_idx as f64 * 0.45 * rate) as usize;
        let pan = note_idx as f32 / (notes_hz.len() - 1) as f32;
        let pluck = karplus_strong(freq, rate, (1.6 * rate) as usize, &mut rng);
        mix_into(
            &mut left,
            &mut right,
            start,
            &pluck,
            0.5 * (1.0 - pan) + 0.25,
            0.5 * pan + 0.25,
        );
    }

    // Drum-like transients: a kick (falling sine) and a snare (noise burst) pattern.
    for hit_idx in 0..8 {
        let start = ((3.0 + hit_idx as f64 * 0.3) * rate) as usize;
        let hit = if hit_idx % 2 == 0 {
            kick(rate)
        } else {
            snare(rate, &mut rng)
        };
        mix_into(&mut left, &mut right, start, &hit, 0.6, 0.6);
    }

    // A voice-like tone: a vibrato sawtooth through two formant resonators, "ah" to "ee".
    let voice = voice(rate, (2.4 * rate) as usize);
    mix_into(
        &mut left,
        &mut right,
        (5.5 * rate) as usize,
        &voice,
        0.45,
        0.4,
    );

    vec![left, right]
}

fn mix_into(
    left: &mut [f32],
    right: &mut [f32],
    start: usize,
    source: &[f32],
    gain_l: f32,
    gain_r: f32,
) {
    for (offset, &sample) in source.iter().enumerate() {
        let idx = start + offset;
        if idx >= left.len() {
            break;
        }
        left[idx] += gain_l * sample;
        right[idx] += gain_r * sample;
    }
}

fn karplus_strong(freq: f64, rate: f64, len: usize, rng: &mut Rng) -> Vec<f32> {
    let period = (rate / freq).round().max(2.0) as usize;
    let mut line: Vec<f32> = (0..period).map(|_| rng.bipolar()).collect();
    let mut out = Vec::with_capacity(len);
    for idx in 0..len {
        let current = line[idx % period];
        let next = line[(idx + 1) % period];
        line[idx % period] = 0.996 * 0.5 * (current + next);
        out.push(0.5 * current);
    }
    out
}

fn kick(rate: f64) -> Vec<f32> {
    let len = (0.25 * rate) as usize;
    let mut phase = 0.0f64;
    (0..len)
        .map(|idx| {
            let t = idx as f64 / rate;
            let freq = 45.0 + 110.0 * (-t * 30.0).exp();
            phase += TAU * freq / rate;
            (0.9 * phase.sin() * (-t * 12.0).exp()) as f32
        })
        .collect()
}

fn snare(rate: f64, rng: &mut Rng) -> Vec<f32> {
    let len = (0.18 * rate) as usize;
    (0..len)
        .map(|idx| {
            let t = idx as f64 / rate;
            let tone = (TAU * 190.0 * t).sin() * (-t * 40.0).exp();
            (0.5 * (f64::from(rng.bipolar()) * (-t * 22.0).exp() + 0.5 * tone)) as f32
        })
        .collect()
}

fn voice(rate: f64, len: usize) -> Vec<f32> {
    let mut phase = 0.0f64;
    let mut formants = [Resonator::default(), Resonator::default()];
    (0..len)
        .map(|idx| {
            let t = idx as f64 / rate;
            let progress = idx as f64 / len as f64;
            let freq = 220.0 * (1.0 + 0.012 * (TAU * 5.5 * t).sin());
            phase = (phase + freq / rate).fract();
            let saw = 2.0 * phase - 1.0;
            // Formants move from "ah" (700 / 1200 Hz) to "ee" (300 / 2300 Hz).
            let f1 = 700.0 + (300.0 - 700.0) * progress;
            let f2 = 1200.0 + (2300.0 - 1200.0) * progress;
            let shaped = formants[0].process(saw, f1, 80.0, rate)
                + 0.6 * formants[1].process(saw, f2, 120.0, rate);
            let envelope = (t / 0.08).min(1.0) * ((len - idx) as f64 / (0.2 * rate)).min(1.0);
            (0.35 * shaped * envelope) as f32
        })
        .collect()
}

/// Two-pole resonator, normalised to unit gain at its centre frequency.
#[derive(Debug, Default, Clone, Copy)]
struct Resonator {
    y1: f64,
    y2: f64,
}

impl Resonator {
    fn process(&mut self, x: f64, freq: f64, bandwidth: f64, rate: f64) -> f64 {
        let r = (-std::f64::consts::PI * bandwidth / rate).exp();
        let a1 = 2.0 * r * (TAU * freq / rate).cos();
        let a2 = -r * r;
        let y = (1.0 - r) * x + a1 * self.y1 + a2 * self.y2;
        self.y2 = self.y1;
        self.y1 = y;
        y
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dry_signal_is_deterministic_bounded_and_not_silent() {
        let a = dry_signal(48_000);
        assert_eq!(a, dry_signal(48_000));
        assert_eq!(a[0].len(), 384_000);
        let peak = a.iter().flatten().fold(0.0f32, |m, s| m.max(s.abs()));
        assert!(peak > 0.1 && peak < 1.0, "peak {peak}");
    }
}
