//! Sample-rate conversion of IRs with rubato's synchronous FFT resampler, in float64. Off the
//! audio thread; allocates.
//!
//! Why this resampler: an IR is converted once, whole, between two integer rates, which is what
//! rubato's `Fft` does exactly (no drifting ratio): its anti-aliasing filter is a
//! Blackman-Harris windowed sinc as long as one FFT chunk (at least [`CHUNK_FRAMES`] input
//! frames, 2058 taps for 44.1 -> 48 kHz), with its cutoff placed just below the lower Nyquist
//! frequency. Measured against a float64 reference (`plugin/tests/ir_resample.rs`: a
//! band-limited IR known in closed form, evaluated at the new sample times) with all content
//! below 90 % of the lower Nyquist frequency, the error is below [`ACCURACY_DB`] (-120 dB)
//! relative to the signal (measured: -124 dB for 22.05 -> 48 kHz, -128 dB for 44.1 -> 48 kHz,
//! -131 dB for 48 -> 44.1 kHz, -138 dB for 96 -> 48 kHz); content between 90 % and 100 % of the
//! lower Nyquist frequency is attenuated progressively and anything above it is removed.
//!
//! Level: resampling keeps the waveform's amplitude, so a sampled IR would gain by `to / from`
//! (more samples of the same height per second); [`convert_rate`] multiplies by `from / to` so
//! the IR's frequency response, and so the reverb's loudness, stays the same (within 0.1 dB in
//! the passband, tested). [`stretch`] time-scales without that compensation: the envelope keeps
//! its height, so a longer IR is louder (normalisation, when on, evens that out).
//!
//! Timing: the resampler's delay (half a chunk) is removed, so the output starts at the same
//! instant as the input; the output has `ceil(len * to / from)` frames.

use rubato::audioadapter_buffers::direct::SequentialSliceOfVecs;
use rubato::{Fft, FixedSync, Indexing, Resampler, WindowFunction};

use super::IrError;

/// Input frames per FFT chunk, at least (rounded up as `chunk_frames` says).
pub const CHUNK_FRAMES: usize = 1024;
/// Error of a conversion against a float64 windowed-sinc reference, in dB relative to the
/// signal, for content below 90 % of the lower Nyquist frequency (see the module docs).
pub const ACCURACY_DB: f64 = -120.0;
/// Smallest stretch factor accepted.
pub const MIN_STRETCH: f64 = 0.5;
/// Largest stretch factor accepted.
pub const MAX_STRETCH: f64 = 2.0;
/// Longest reduced input period (`from / gcd(from, to)` frames) a stretch keeps when a rate
/// within [`STRETCH_RATE_TOLERANCE`] of the exact one has a shorter period. The resampler's chunk
/// is at least two periods, and its cost per frame grows with the chunk: a coprime pair costs 7
/// to 8 times a short period (2 M frames: 196,544 -> 269,265 Hz 548 ms, -> 269,252 Hz, period
/// 592, 144 ms; DXD's 352,800 Hz stretched by 1.001 to 353,153 Hz 662 ms, to 353,160 Hz, period
/// 980, 87 ms). At 48, 96, 192 and 384 kHz every step of the Stretch control (0.001) has a
/// period of at most 1,000 and keeps its exact rate. At 44.1 kHz and its multiples 40 to 70 % of
/// the steps have a coprime rate or nearly: they take a rate at most 1e-4 away (0.17 cents, a
/// 10 s IR 1 ms longer or shorter), 2.5 times faster at 44.1 kHz (a 10 s channel stretched by
/// 0.508: 56 ms at 22,403 Hz, 22 ms at 22,404 Hz).
pub const MAX_STRETCH_PERIOD: u32 = 16_384;
/// How far from the exact stretched rate, relative, the rate taken for a shorter period may be:
/// a tenth of the Stretch control's step.
pub const STRETCH_RATE_TOLERANCE: f64 = 1e-4;

/// Converts `channels` from `from_hz` to `to_hz`, keeping the frequency response (gain
/// `from / to`, see the module docs). Returns a copy when the rates are equal.
pub fn convert_rate(
    channels: &[Vec<f32>],
    from_hz: u32,
    to_hz: u32,
) -> Result<Vec<Vec<f32>>, IrError> {
    resample(
        channels,
        from_hz,
        to_hz,
        f64::from(from_hz) / f64::from(to_hz),
    )
}

/// Time-scales `channels` by `factor` (2.0: twice as long, pitched an octave down), keeping the
/// amplitude envelope. The factor is rounded to a ratio of `sample_rate` to an integer rate
/// ([`stretched_rate`]), so it is exact to 1 / `sample_rate`, or to [`STRETCH_RATE_TOLERANCE`]
/// where the exact rate would make the resampler slow.
pub fn stretch(
    channels: &[Vec<f32>],
    sample_rate: u32,
    factor: f64,
) -> Result<Vec<Vec<f32>>, IrError> {
    if !(MIN_STRETCH..=MAX_STRETCH).contains(&factor) {
        return Err(IrError::InvalidEdit(format!(
            "stretch {factor} is out of range; use {MIN_STRETCH} to {MAX_STRETCH}"
        )));
    }
    let to_hz = stretched_rate(sample_rate, sample_rate, factor);
    resample(channels, sample_rate, to_hz, 1.0)
}

/// The rate a stretch by `factor` of an IR at `from_hz` in a session at `sample_rate`
/// resamples it to: the integer rate nearest `sample_rate * factor`, unless its period against
/// `from_hz` is over [`MAX_STRETCH_PERIOD`]; then the rate within [`STRETCH_RATE_TOLERANCE`]
/// with the shortest period (the nearest of those), if that period is not over it.
pub fn stretched_rate(from_hz: u32, sample_rate: u32, factor: f64) -> u32 {
    let exact = (f64::from(sample_rate) * factor).round() as u32;
    if period(from_hz, exact) <= MAX_STRETCH_PERIOD {
        return exact;
    }
    let tolerance = (f64::from(exact) * STRETCH_RATE_TOLERANCE) as u32;
    (1..=tolerance)
        .flat_map(|offset| [exact - offset, exact + offset])
        .map(|to_hz| (period(from_hz, to_hz), to_hz.abs_diff(exact), to_hz))
        .min()
        .filter(|&(period, _, _)| period <= MAX_STRETCH_PERIOD)
        .map_or(exact, |(_, _, to_hz)| to_hz)
}

/// The reduced input period of a conversion from `from_hz` to `to_hz`: `from / gcd(from, to)`.
fn period(from_hz: u32, to_hz: u32) -> u32 {
    let (mut a, mut b) = (from_hz, to_hz);
    while b != 0 {
        (a, b) = (b, a % b);
    }
    from_hz / a.max(1)
}

/// Input frames per chunk for rubato's `Fft`: at least [`CHUNK_FRAMES`], and an even number of
/// reduced input periods (`from / gcd(from, to)`). The anti-aliasing sinc is one chunk long and
/// centred at `floor(len / 2)`, while rubato reports a delay of half the output chunk; the two
/// agree exactly only when the chunk's length is even, so the removed delay leaves no
/// fractional-sample shift.
fn chunk_frames(from_hz: u32, to_hz: u32) -> usize {
    let period = period(from_hz, to_hz) as usize;
    let num_periods = CHUNK_FRAMES.div_ceil(period);
    (num_periods + num_periods % 2) * period
}

/// Converts every channel from `from_hz` to `to_hz` and multiplies by `gain`, in float64.
pub fn resample(
    channels: &[Vec<f32>],
    from_hz: u32,
    to_hz: u32,
    gain: f64,
) -> Result<Vec<Vec<f32>>, IrError> {
    let num_channels = channels.len();
    let len = channels.first().map_or(0, Vec::len);
    if from_hz == to_hz || num_channels == 0 || len == 0 {
        let gain = gain as f32;
        return Ok(channels
            .iter()
            .map(|c| c.iter().map(|&s| s * gain).collect())
            .collect());
    }
    let failed = |err: &dyn std::fmt::Display| IrError::Resample(err.to_string());
    // One sub-chunk and the Blackman-Harris window: rubato 1's `Fft::new`, whose delay and
    // accuracy the tests pin (5's `new` splits chunks into sub-chunks of about 256 frames).
    let mut resampler = Fft::<f64>::new_custom(
        from_hz as usize,
        to_hz as usize,
        chunk_frames(from_hz, to_hz),
        1,
        num_channels,
        WindowFunction::BlackmanHarris2,
        FixedSync::Input,
    )
    .map_err(|err| failed(&err))?;
    let delay = resampler.output_delay();
    let out_len = (len as u128 * u128::from(to_hz)).div_ceil(u128::from(from_hz)) as usize;
    let wanted = delay + out_len;

    // The input followed by enough silence to flush the filter's delay: every call consumes
    // one chunk and produces about `chunk_in * to / from` frames (none on the first calls,
    // while the delay fills).
    let chunk_in = resampler.input_frames_next();
    let input_needed = (wanted as u128 * u128::from(from_hz)).div_ceil(u128::from(to_hz)) as usize;
    let num_chunks = input_needed.div_ceil(chunk_in) + 3;
    let padded_len = num_chunks * chunk_in;
    let input: Vec<Vec<f64>> = channels
        .iter()
        .map(|c| {
            let mut padded: Vec<f64> = c.iter().map(|&s| f64::from(s)).collect();
            padded.resize(padded_len, 0.0);
            padded
        })
        .collect();
    let output_capacity = wanted + 2 * resampler.output_frames_max();
    let mut output = vec![vec![0.0f64; output_capacity]; num_channels];
    let input_adapter =
        SequentialSliceOfVecs::new(&input, num_channels, padded_len).map_err(|err| failed(&err))?;
    let mut output_adapter =
        SequentialSliceOfVecs::new_mut(&mut output, num_channels, output_capacity)
            .map_err(|err| failed(&err))?;
    let mut indexing = Indexing {
        input_offset: 0,
        output_offset: 0,
        partial_len: None,
        active_channels_mask: None,
    };
    while indexing.output_offset < wanted {
        if indexing.input_offset + chunk_in > padded_len {
            return Err(IrError::Resample(format!(
                "the resampler needed more than {padded_len} input frames"
            )));
        }
        let (num_in, num_out) = resampler
            .process_into_buffer(&input_adapter, &mut output_adapter, Some(&indexing))
            .map_err(|err| failed(&err))?;
        indexing.input_offset += num_in;
        indexing.output_offset += num_out;
    }
    Ok(output
        .into_iter()
        .map(|c| {
            c[delay..wanted]
                .iter()
                .map(|&s| (s * gain) as f32)
                .collect()
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_follow_the_ratio_and_equal_rates_copy() {
        let ir = vec![vec![0.5f32; 441], vec![0.25f32; 441]];
        let out = convert_rate(&ir, 44_100, 48_000).unwrap();
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].len(), 480);
        assert_eq!(convert_rate(&ir, 48_000, 48_000).unwrap(), ir);
        let long = stretch(&ir, 44_100, 2.0).unwrap();
        assert_eq!(long[0].len(), 882);
        assert!(stretch(&ir, 44_100, 3.0).is_err());
    }

    #[test]
    fn a_stretch_takes_a_rate_with_a_short_period_where_the_exact_one_is_long() {
        // Exact where the period is short (every usual rate at the control's steps).
        for (from, rate, factor, to) in [
            (48_000, 48_000, 1.37, 65_760),
            (44_100, 44_100, 1.001, 44_144),
            (44_100, 48_000, 1.5, 72_000),
            (384_000, 384_000, 1.001, 384_384),
        ] {
            assert_eq!(stretched_rate(from, rate, factor), to);
            assert!(period(from, to) <= MAX_STRETCH_PERIOD);
        }
        // 196,544 and 269,265 are coprime; 352,800 * 1.001 rounds to a coprime 353,153.
        for (rate, factor) in [(196_544, 1.37), (352_800, 1.001)] {
            let exact = (f64::from(rate) * factor).round() as u32;
            assert_eq!(period(rate, exact), rate);
            let to = stretched_rate(rate, rate, factor);
            assert!(period(rate, to) <= MAX_STRETCH_PERIOD, "{rate} -> {to}");
            let off = f64::from(to.abs_diff(exact)) / f64::from(exact);
            assert!(off > 0.0 && off <= STRETCH_RATE_TOLERANCE, "{rate} -> {to}");
        }
        // A prime rate has no shorter period near: the exact rate stays.
        assert_eq!(stretched_rate(100_003, 100_003, 1.37), 137_004);
    }

    #[test]
    fn the_delay_is_removed() {
        // An impulse at frame 100 of 48 kHz stays at 100 * 2 at 96 kHz.
        let mut impulse = vec![0.0f32; 4000];
        impulse[100] = 1.0;
        let out = convert_rate(&[impulse], 48_000, 96_000).unwrap();
        let peak = out[0]
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.abs().total_cmp(&b.1.abs()))
            .unwrap()
            .0;
        assert_eq!(peak, 200);
    }
}
