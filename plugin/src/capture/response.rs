//! Reading a raw response (one slot of one channel, straight out of the deconvolution): its
//! peak, its noise floor, where it arrives and where it sinks into the noise. Pure functions
//! on slices; allocate nothing. Any thread.
//!
//! - **Noise floor:** the RMS of the window's last tenth (ISO 3382's late part): the tail must
//!   outlast the room's decay into the noise, or the floor reads high and the IR is cut short.
//! - **Arrival:** the largest `|h|` within [`ARRIVAL_SEARCH_SECONDS`] of the first sample that
//!   reaches [`ARRIVAL_THRESHOLD_DB`] under the peak. Not that first sample itself: the band
//!   limit rings before a sharp arrival (a 7 kHz edge at 16 kHz puts the two samples before an
//!   impulse at -17 dB, and the ringing is not monotonic), so a threshold alone, or the first
//!   local maximum after it, lands samples early.
//! - **End:** the end of the last block of [`BLOCK_SECONDS`] whose mean power is more than
//!   [`END_MARGIN_DB`] over the noise floor's (10 ms of noise has about 400 degrees of freedom at
//!   48 kHz: such a block is 14 standard deviations over the floor's power).

/// Arrival: the first local peak within this many dB of the response's peak.
pub const ARRIVAL_THRESHOLD_DB: f64 = -20.0;
/// Arrival: the peak is looked for this long after the first sample over the threshold.
pub const ARRIVAL_SEARCH_SECONDS: f64 = 0.001;
/// A response whose peak is not this far over its noise floor holds no sweep.
pub const MIN_PEAK_TO_NOISE_DB: f64 = 20.0;
/// The blocks the end is found in, in seconds.
pub const BLOCK_SECONDS: f64 = 0.01;
/// The end: the last block this far over the noise floor's power.
pub const END_MARGIN_DB: f64 = 3.0;
/// The share of the window the noise floor is read from, at its end.
pub const NOISE_SHARE: f64 = 0.1;

/// What one raw response holds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Figures {
    /// The largest `|h|` before the noise window (linear).
    pub peak: f64,
    /// The RMS of the noise window (linear).
    pub noise_rms: f64,
    /// Index of the arrival (see the module docs).
    pub arrival: usize,
    /// One past the last sample over the noise (see the module docs); at least `arrival + 1`.
    pub end: usize,
}

impl Figures {
    /// The peak over the noise floor, in dB (300 where there is no noise at all).
    pub fn peak_to_noise_db(&self) -> f64 {
        if self.noise_rms > 0.0 {
            20.0 * (self.peak / self.noise_rms).log10()
        } else if self.peak > 0.0 {
            300.0
        } else {
            f64::NEG_INFINITY
        }
    }

    /// Whether the response holds a sweep's answer: its peak at least
    /// [`MIN_PEAK_TO_NOISE_DB`] over its noise.
    pub fn has_sweep(&self) -> bool {
        self.peak_to_noise_db() >= MIN_PEAK_TO_NOISE_DB
    }
}

/// `20 log10(x)`, -300 for 0.
pub fn db(x: f64) -> f64 {
    if x > 0.0 { 20.0 * x.log10() } else { -300.0 }
}

/// The figures of `response` (the raw window, sample 0 the excitation's sample 0) at
/// `sample_rate`.
pub fn analyse(response: &[f64], sample_rate: u32) -> Figures {
    let len = response.len();
    let noise_start = len - ((len as f64 * NOISE_SHARE).ceil() as usize).min(len);
    let noise = &response[noise_start..];
    let noise_power = if noise.is_empty() {
        0.0
    } else {
        noise.iter().map(|s| s * s).sum::<f64>() / noise.len() as f64
    };
    let head = &response[..noise_start.max(1).min(len)];
    let peak = head.iter().fold(0.0f64, |m, s| m.max(s.abs()));
    let search_len = ((ARRIVAL_SEARCH_SECONDS * f64::from(sample_rate)).round() as usize).max(1);
    let arrival = arrival(head, peak, search_len);
    let block_len = ((BLOCK_SECONDS * f64::from(sample_rate)).round() as usize).max(1);
    let threshold = noise_power * 10f64.powf(END_MARGIN_DB / 10.0);
    let mut end = arrival + 1;
    let mut block_start = arrival;
    while block_start < len {
        let block = &response[block_start..(block_start + block_len).min(len)];
        let power = block.iter().map(|s| s * s).sum::<f64>() / block.len() as f64;
        if power > threshold {
            end = block_start + block.len();
        }
        block_start += block_len;
    }
    Figures {
        peak,
        noise_rms: noise_power.sqrt(),
        arrival,
        end: end.min(len.max(arrival + 1)),
    }
}

/// The largest `|h|` in the `search_len` samples from the first at or above
/// [`ARRIVAL_THRESHOLD_DB`] under `peak` (the earliest of equals).
pub fn arrival(response: &[f64], peak: f64, search_len: usize) -> usize {
    let threshold = peak * 10f64.powf(ARRIVAL_THRESHOLD_DB / 20.0);
    let Some(first) = response.iter().position(|s| s.abs() >= threshold) else {
        return 0;
    };
    let window = &response[first..(first + search_len).min(response.len())];
    let offset = window
        .iter()
        .enumerate()
        .fold((0, 0.0f64), |best, (idx, s)| {
            if s.abs() > best.1 {
                (idx, s.abs())
            } else {
                best
            }
        })
        .0;
    first + offset
}

/// A raised-cosine fade over the last `fade_len` samples of `channel`.
pub fn fade_out(channel: &mut [f32], fade_len: usize) {
    let fade_len = fade_len.min(channel.len());
    let start = channel.len() - fade_len;
    for (idx, sample) in channel[start..].iter_mut().enumerate() {
        let left = (fade_len - idx) as f64 / (fade_len + 1) as f64;
        *sample *= (0.5 - 0.5 * (std::f64::consts::PI * left).cos()) as f32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    #[test]
    fn the_arrival_is_the_first_peak_not_the_ringing_before_it() {
        let mut response = vec![0.0; 100];
        // Ringing as a band limit makes it: over the threshold, and not monotonic.
        response[36] = 0.14;
        response[37] = -0.12;
        response[38] = 0.15;
        response[39] = -0.14;
        response[40] = 1.0;
        response[41] = 0.3;
        assert_eq!(arrival(&response, 1.0, 16), 40);
        response[10] = 0.05;
        assert_eq!(
            arrival(&response, 1.0, 16),
            40,
            "-26 dB is under the threshold"
        );
        response[10] = 0.2;
        assert_eq!(
            arrival(&response, 1.0, 16),
            10,
            "a reflection 30 samples before"
        );
    }

    #[test]
    fn a_decay_ends_where_it_meets_the_noise() {
        // 1 s at 10 kHz: a decay of 60 dB per 0.3 s over noise at -80 dB from the peak.
        let rate = 10_000;
        let mut rng = Rng::new(3);
        let response: Vec<f64> = (0..rate as usize)
            .map(|idx| {
                let t = idx as f64 / f64::from(rate);
                let decay = if idx >= 100 {
                    10f64.powf(-3.0 * (t - 0.01) / 0.3)
                } else {
                    0.0
                };
                decay * rng.gaussian() + 1e-4 * rng.gaussian()
            })
            .collect();
        let figures = analyse(&response, rate);
        assert!((figures.noise_rms / 1e-4 - 1.0).abs() < 0.05, "{figures:?}");
        // The noise decay's largest sample in the 1 ms after its start.
        assert!((100..=110).contains(&figures.arrival), "{figures:?}");
        // -80 dB of a 60 dB / 0.3 s decay is at 0.41 s; +3 dB over the noise a little before.
        let end_s = figures.end as f64 / f64::from(rate);
        assert!((0.3..0.45).contains(&end_s), "{end_s}");
        assert!(figures.has_sweep());
        let noise: Vec<f64> = (0..rate as usize).map(|_| rng.gaussian()).collect();
        assert!(!analyse(&noise, rate).has_sweep());
    }

    #[test]
    fn the_fade_ends_at_zero() {
        let mut channel = vec![1.0f32; 10];
        fade_out(&mut channel, 4);
        assert_eq!(channel[5], 1.0);
        assert!(channel[6] < 1.0 && channel[9] > 0.0 && channel[9] < 0.2);
    }
}
