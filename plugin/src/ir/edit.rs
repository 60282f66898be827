//! IR editing: the pure preparation step from (decoded IR, edit settings, session rate) to the IR
//! the engine convolves with. Runs off the audio thread (the preparation thread, `activate()`,
//! the CLI); allocates.
//!
//! The steps, in this order (each is skipped when its setting is neutral, so
//! [`EditSettings::NONE`] at the IR's own rate returns the samples unchanged, bit for bit):
//!
//! 1. **Trim** `trim_start_ms` from the start and `trim_end_ms` from the end, in the file's own
//!    time (before stretching).
//! 2. **Automatic end trim**: cut after the last frame where any channel reaches
//!    `auto_trim_db` relative to the IR's peak (default [`DEFAULT_AUTO_TRIM_DB`]), so the
//!    engine does not convolve silence or noise floor.
//! 3. **Resample** to the session rate and **stretch** by `stretch` in one pass (see
//!    [`super::resample`] for the resampler, its accuracy and the level rule).
//! 4. **Decay time**: each band's decay time times [`DecaySettings::ratio_at`] its centre
//!    (see [`super::decay`]), at the session rate and before Reverse, so the room's own decay
//!    is what changes.
//! 5. **Reverse**.
//! 6. **Fades**: raised-cosine (`sin²`) fade in over the first `fade_in_ms`, fade out over the
//!    last `fade_out_ms`; the first and last samples of a fade are at gain 0.
//! 7. **Early/late balance**: `early_db` on the IR before `crossover_ms`, `tail_db` after it,
//!    with a raised-cosine crossfade of the gain over [`BALANCE_FADE_MS`] each side (at most
//!    half the crossover). Times count from the IR's first sample, before the pre-delay.
//! 8. **Wet low cut and high cut**: second-order Butterworth high-pass and low-pass biquads
//!    (bilinear transform, `Q = 1/sqrt(2)`: -3 dB at the cutoff, 12 dB per octave), then the
//!    **low and high shelves**: fourth-order Butterworth shelving filters (two biquads each,
//!    [`Biquad::shelf`]) whose gain is half the shelf's, in dB, at the corner, and within 0.3 dB
//!    of all of it from an octave beyond, with no overshoot. All run over the IR in float64,
//!    forward, like an EQ on the wet path. The IR keeps its length.
//! 9. **Normalisation**: one gain for all channels so that the energy reaching each output
//!    averages 1 (mono: `sum h^2 = 1`; stereo: `(E_L + E_R) / 2 = 1`; true stereo:
//!    `(E_LL + E_LR + E_RL + E_RR) / 2 = 1`), the scale of the built-in IRs: white noise keeps its
//!    level through the wet path, so switching IRs keeps loudness similar.
//! 10. **Pre-delay**: `predelay_ms` of silence in front.

use super::decay::{self, DecaySettings};
use super::resample::{self, MAX_STRETCH, MIN_STRETCH};
use super::{Ir, IrError, IrLayout};

/// Default threshold of the automatic end trim, in dB below the peak.
pub const DEFAULT_AUTO_TRIM_DB: f64 = -80.0;
/// Q of the cut filters (Butterworth).
const BUTTERWORTH_Q: f64 = std::f64::consts::FRAC_1_SQRT_2;
/// The early/late balance's crossfade on each side of the crossover, in milliseconds (at most
/// half the crossover time).
pub const BALANCE_FADE_MS: f64 = 10.0;
/// The crossover of the early/late balance when none is set, in milliseconds.
pub const DEFAULT_CROSSOVER_MS: f64 = 80.0;
/// Largest boost or cut of the balance levels and the shelves, in dB.
pub const MAX_SHAPE_DB: f64 = 24.0;
/// Order of the shelving filters (two biquads).
const SHELF_ORDER: usize = 4;

/// A shelving filter's corner (where it has half its gain, in dB) and gain.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shelf {
    pub hz: f64,
    pub db: f64,
}

/// What to do to an IR. Small and `Copy`, so it travels in preparation requests.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EditSettings {
    /// Cut from the start, in milliseconds of the file's time.
    pub trim_start_ms: f64,
    /// Cut from the end, in milliseconds of the file's time.
    pub trim_end_ms: f64,
    /// Automatic end trim threshold in dB relative to the peak (negative); `None`: off.
    pub auto_trim_db: Option<f64>,
    /// Silence in front of the IR, in milliseconds.
    pub predelay_ms: f64,
    /// Fade in length, in milliseconds.
    pub fade_in_ms: f64,
    /// Fade out length, in milliseconds.
    pub fade_out_ms: f64,
    /// Play the IR backwards.
    pub reverse: bool,
    /// Time-scale factor, [`MIN_STRETCH`] to [`MAX_STRETCH`]; 1: unchanged.
    pub stretch: f64,
    /// Normalise the energy (step 9 of the module docs).
    pub normalize: bool,
    /// Wet low cut (high-pass) frequency in Hz; `None`: off.
    pub low_cut_hz: Option<f64>,
    /// Wet high cut (low-pass) frequency in Hz; `None`: off.
    pub high_cut_hz: Option<f64>,
    /// Gain of the IR before the crossover (early reflections), in dB.
    pub early_db: f64,
    /// Gain of the IR after the crossover (the tail), in dB.
    pub tail_db: f64,
    /// Where early becomes tail, in milliseconds of the IR.
    pub crossover_ms: f64,
    /// Low shelf; `None` (or 0 dB): off.
    pub low_shelf: Option<Shelf>,
    /// High shelf; `None` (or 0 dB): off.
    pub high_shelf: Option<Shelf>,
    /// Decay time per band; [`DecaySettings::NEUTRAL`]: as recorded.
    pub decay: DecaySettings,
}

impl EditSettings {
    /// No edit: the IR as stored (only resampled when the rates differ).
    pub const NONE: Self = Self {
        trim_start_ms: 0.0,
        trim_end_ms: 0.0,
        auto_trim_db: None,
        predelay_ms: 0.0,
        fade_in_ms: 0.0,
        fade_out_ms: 0.0,
        reverse: false,
        stretch: 1.0,
        normalize: false,
        low_cut_hz: None,
        high_cut_hz: None,
        early_db: 0.0,
        tail_db: 0.0,
        crossover_ms: DEFAULT_CROSSOVER_MS,
        low_shelf: None,
        high_shelf: None,
        decay: DecaySettings::NEUTRAL,
    };

    /// The plugin's defaults for files: automatic end trim at -80 dB and normalisation on.
    pub const FILE_DEFAULT: Self = Self {
        auto_trim_db: Some(DEFAULT_AUTO_TRIM_DB),
        normalize: true,
        ..Self::NONE
    };

    /// Refuses settings that make no sense at `sample_rate`, with a message for users.
    pub fn validate(&self, sample_rate: u32) -> Result<(), IrError> {
        let nyquist = f64::from(sample_rate) / 2.0;
        let durations = [
            ("trim start", self.trim_start_ms),
            ("trim end", self.trim_end_ms),
            ("pre-delay", self.predelay_ms),
            ("fade in", self.fade_in_ms),
            ("fade out", self.fade_out_ms),
        ];
        for (name, ms) in durations {
            if !(ms.is_finite() && (0.0..=super::MAX_IR_SECONDS * 1000.0).contains(&ms)) {
                return Err(IrError::InvalidEdit(format!(
                    "{name} {ms} ms is out of range; use 0 to {} ms",
                    super::MAX_IR_SECONDS * 1000.0
                )));
            }
        }
        if let Some(db) = self.auto_trim_db
            && !(db.is_finite() && (-200.0..0.0).contains(&db))
        {
            return Err(IrError::InvalidEdit(format!(
                "auto trim threshold {db} dB is out of range; use -200 to 0 dB (below the peak)"
            )));
        }
        if !(MIN_STRETCH..=MAX_STRETCH).contains(&self.stretch) {
            return Err(IrError::InvalidEdit(format!(
                "stretch {} is out of range; use {MIN_STRETCH} to {MAX_STRETCH}",
                self.stretch
            )));
        }
        for (name, db) in [("early level", self.early_db), ("tail level", self.tail_db)]
            .into_iter()
            .chain(self.low_shelf.map(|shelf| ("low shelf gain", shelf.db)))
            .chain(self.high_shelf.map(|shelf| ("high shelf gain", shelf.db)))
        {
            if !(db.is_finite() && db.abs() <= MAX_SHAPE_DB) {
                return Err(IrError::InvalidEdit(format!(
                    "{name} {db} dB is out of range; use -{MAX_SHAPE_DB} to +{MAX_SHAPE_DB} dB"
                )));
            }
        }
        if !(self.crossover_ms.is_finite() && (1.0..=1000.0).contains(&self.crossover_ms)) {
            return Err(IrError::InvalidEdit(format!(
                "crossover {} ms is out of range; use 1 to 1000 ms",
                self.crossover_ms
            )));
        }
        self.decay.validate(nyquist).map_err(IrError::InvalidEdit)?;
        let corners = [
            ("low cut", self.low_cut_hz),
            ("high cut", self.high_cut_hz),
            ("low shelf", self.low_shelf.map(|shelf| shelf.hz)),
            ("high shelf", self.high_shelf.map(|shelf| shelf.hz)),
        ];
        for (name, hz) in corners {
            if let Some(hz) = hz
                && !(hz.is_finite() && hz > 0.0 && hz < nyquist * 0.98)
            {
                return Err(IrError::InvalidEdit(format!(
                    "{name} {hz} Hz is out of range; use above 0 and below {:.0} Hz at {sample_rate} Hz",
                    nyquist * 0.98
                )));
            }
        }
        Ok(())
    }
}

/// What [`prepare`] did, for `ir-info` and the editor.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EditReport {
    /// Where the automatic end trim cut, in seconds of the file (after the manual trims' start),
    /// when it cut anything.
    pub auto_trim_at_s: Option<f64>,
    /// The normalisation gain in dB, when normalising.
    pub normalize_gain_db: Option<f64>,
    /// `(from, to)` rates when the IR was resampled (including a stretch).
    pub resampled: Option<(u32, u32)>,
}

/// Prepares `source` for a session at `session_rate` (the steps of the module docs). Errors
/// when the settings are invalid or leave nothing of the IR; `source` is never changed.
pub fn prepare(
    source: &Ir,
    edits: &EditSettings,
    session_rate: u32,
) -> Result<(Ir, EditReport), IrError> {
    super::validate_sample_rate(session_rate)?;
    edits.validate(session_rate)?;
    let source_rate = f64::from(source.sample_rate);
    let mut report = EditReport {
        auto_trim_at_s: None,
        normalize_gain_db: None,
        resampled: None,
    };

    // 1. Trims, in the file's time.
    let ms_to_frames = |ms: f64, rate: f64| (ms * 1e-3 * rate).round() as usize;
    let len = source.len();
    let start = ms_to_frames(edits.trim_start_ms, source_rate).min(len);
    let end = len.saturating_sub(ms_to_frames(edits.trim_end_ms, source_rate));
    if start >= end {
        return Err(IrError::InvalidEdit(format!(
            "the trims remove the whole IR ({:.1} ms long)",
            source.seconds() * 1e3
        )));
    }
    let mut channels: Vec<Vec<f32>> = source
        .channels
        .iter()
        .map(|c| c[start..end].to_vec())
        .collect();

    // 2. Automatic end trim.
    if let Some(db) = edits.auto_trim_db {
        let keep = auto_trim_len(&channels, db);
        if keep < channels[0].len() {
            report.auto_trim_at_s = Some(keep as f64 / source_rate);
            channels.iter_mut().for_each(|c| c.truncate(keep));
        }
    }

    // 3. Session rate and stretch, in one pass.
    let target_rate = if edits.stretch == 1.0 {
        session_rate
    } else {
        resample::stretched_rate(source.sample_rate, session_rate, edits.stretch)
    };
    if target_rate != source.sample_rate {
        channels = resample::resample(
            &channels,
            source.sample_rate,
            target_rate,
            source_rate / f64::from(session_rate),
        )?;
        report.resampled = Some((source.sample_rate, target_rate));
    }
    let rate = f64::from(session_rate);

    // 4. Decay time.
    if !edits.decay.is_neutral() {
        decay::apply(&mut channels, rate, &edits.decay);
    }

    // 5. Reverse.
    if edits.reverse {
        channels.iter_mut().for_each(|c| c.reverse());
    }

    // 6. Fades.
    let fade_in = ms_to_frames(edits.fade_in_ms, rate);
    let fade_out = ms_to_frames(edits.fade_out_ms, rate);
    for channel in &mut channels {
        let len = channel.len();
        for (idx, sample) in channel.iter_mut().take(fade_in).enumerate() {
            *sample *= fade_gain(idx, fade_in);
        }
        for (idx, sample) in channel.iter_mut().rev().take(fade_out).enumerate() {
            *sample *= fade_gain(idx, fade_out);
        }
        debug_assert_eq!(channel.len(), len);
    }

    // 7. Early/late balance.
    if edits.early_db != 0.0 || edits.tail_db != 0.0 {
        let gains = balance_gains(edits, rate);
        for channel in &mut channels {
            for (idx, sample) in channel.iter_mut().enumerate() {
                *sample = (f64::from(*sample) * gains(idx)) as f32;
            }
        }
    }

    // 8. Wet low and high cut, then the shelves, in float64.
    filter(&mut channels, edits, rate);

    // 9. Normalisation.
    let layout = source.layout;
    if edits.normalize {
        let energy = output_energy(&channels, layout);
        if energy <= 0.0 {
            return Err(IrError::InvalidEdit(
                "the IR is silent, so it cannot be normalised".into(),
            ));
        }
        let gain = 1.0 / energy.sqrt();
        for channel in &mut channels {
            channel
                .iter_mut()
                .for_each(|s| *s = (f64::from(*s) * gain) as f32);
        }
        report.normalize_gain_db = Some(20.0 * gain.log10());
    }

    // 10. Pre-delay.
    let predelay = ms_to_frames(edits.predelay_ms, rate);
    if predelay > 0 {
        for channel in &mut channels {
            channel.splice(0..0, std::iter::repeat_n(0.0, predelay));
        }
    }

    let ir = Ir::with_layout(source.name.clone(), session_rate, layout, channels)?;
    Ok((ir, report))
}

/// Step 8: the wet low and high cut, then the shelves, over each channel in float64.
fn filter(channels: &mut [Vec<f32>], edits: &EditSettings, rate: f64) {
    let shelves = [
        (ShelfKind::Low, edits.low_shelf),
        (ShelfKind::High, edits.high_shelf),
    ]
    .into_iter()
    .filter_map(|(kind, shelf)| shelf.filter(|s| s.db != 0.0).map(|s| (kind, s)))
    .flat_map(|(kind, shelf)| Biquad::shelf(kind, shelf, rate));
    let filters: Vec<Biquad> = [
        edits
            .low_cut_hz
            .map(|hz| Biquad::high_pass(hz, rate, BUTTERWORTH_Q)),
        edits
            .high_cut_hz
            .map(|hz| Biquad::low_pass(hz, rate, BUTTERWORTH_Q)),
    ]
    .into_iter()
    .flatten()
    .chain(shelves)
    .collect();
    if !filters.is_empty() {
        for channel in channels.iter_mut() {
            let mut samples: Vec<f64> = channel.iter().map(|&s| f64::from(s)).collect();
            for filter in &filters {
                filter.run(&mut samples);
            }
            for (out, s) in channel.iter_mut().zip(samples) {
                *out = s as f32;
            }
        }
    }
}

/// Frames kept by the automatic end trim: up to and including the last frame where any
/// channel reaches `db` relative to the peak of all channels.
pub fn auto_trim_len(channels: &[Vec<f32>], db: f64) -> usize {
    let peak = peak(channels);
    if peak == 0.0 {
        return channels.first().map_or(0, Vec::len);
    }
    let threshold = peak * 10f64.powf(db / 20.0);
    let len = channels.first().map_or(0, Vec::len);
    (0..len)
        .rev()
        .find(|&idx| {
            channels
                .iter()
                .any(|c| f64::from(c[idx].abs()) >= threshold)
        })
        .map_or(len, |idx| idx + 1)
}

/// Largest absolute sample over all channels.
pub fn peak(channels: &[Vec<f32>]) -> f64 {
    channels
        .iter()
        .flatten()
        .fold(0.0f64, |peak, &s| peak.max(f64::from(s.abs())))
}

/// Mean energy reaching each output for uncorrelated unit-power inputs (step 9).
pub fn output_energy(channels: &[Vec<f32>], layout: IrLayout) -> f64 {
    let total: f64 = channels
        .iter()
        .flatten()
        .map(|&s| f64::from(s) * f64::from(s))
        .sum();
    match layout {
        IrLayout::Mono => total,
        IrLayout::Stereo | IrLayout::TrueStereo => total / 2.0,
        IrLayout::Matrix { outputs, .. } => total / outputs as f64,
        IrLayout::Channels(num_channels) => total / num_channels as f64,
    }
}

/// Gain of sample `idx` of a fade of `len` samples, counted from the silent end: `sin²`.
fn fade_gain(idx: usize, len: usize) -> f32 {
    let x = idx as f64 / len as f64;
    (std::f64::consts::FRAC_PI_2 * x).sin().powi(2) as f32
}

/// The early/late balance's gain of each sample (step 7): `early_db` up to the crossfade,
/// `tail_db` after it, a raised-cosine blend of the two amplitudes between.
fn balance_gains(edits: &EditSettings, rate: f64) -> impl Fn(usize) -> f64 {
    let early = 10f64.powf(edits.early_db / 20.0);
    let tail = 10f64.powf(edits.tail_db / 20.0);
    let crossover = edits.crossover_ms * 1e-3 * rate;
    let half = (BALANCE_FADE_MS.min(edits.crossover_ms / 2.0) * 1e-3 * rate).max(0.5);
    let blended = move |t: f64| {
        let blend = (std::f64::consts::FRAC_PI_2 * t).sin().powi(2);
        early + (tail - early) * blend
    };
    // Outside the crossfade the gain is one of two numbers: no `sin` per sample there.
    let (before, after) = (blended(0.0), blended(1.0));
    move |idx| {
        let t = (idx as f64 - (crossover - half)) / (2.0 * half);
        if t <= 0.0 {
            before
        } else if t >= 1.0 {
            after
        } else {
            blended(t)
        }
    }
}

/// Which end of the spectrum a shelf lifts or cuts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShelfKind {
    Low,
    High,
}

/// A float64 biquad (RBJ cookbook coefficients, normalised by `a0`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Biquad {
    b: [f64; 3],
    a: [f64; 2],
}

impl Biquad {
    /// Second-order high-pass at `hz`.
    pub fn high_pass(hz: f64, sample_rate: f64, q: f64) -> Self {
        let (cos, alpha) = Self::prewarp(hz, sample_rate, q);
        Self::normalised(
            [(1.0 + cos) / 2.0, -(1.0 + cos), (1.0 + cos) / 2.0],
            [1.0 + alpha, -2.0 * cos, 1.0 - alpha],
        )
    }

    /// Second-order low-pass at `hz`.
    pub fn low_pass(hz: f64, sample_rate: f64, q: f64) -> Self {
        let (cos, alpha) = Self::prewarp(hz, sample_rate, q);
        Self::normalised(
            [(1.0 - cos) / 2.0, 1.0 - cos, (1.0 - cos) / 2.0],
            [1.0 + alpha, -2.0 * cos, 1.0 - alpha],
        )
    }

    /// A fourth-order Butterworth shelving filter (Holters and Zölzer's design) as two
    /// biquads: the analog prototype's poles on the unit circle and its zeros on the circle of
    /// radius `G^(1/4)` (`G` the linear gain), scaled so that the gain is `sqrt(G)` at the
    /// corner, then the bilinear transform prewarped there. The low shelf has gain `G` at DC, the
    /// high shelf at Nyquist; both 1 at the other end.
    pub fn shelf(kind: ShelfKind, shelf: Shelf, sample_rate: f64) -> [Self; 2] {
        let order = SHELF_ORDER as f64;
        let gain = 10f64.powf(shelf.db / 20.0);
        let radius = gain.powf(1.0 / order);
        let scale = gain.powf(1.0 / (2.0 * order));
        let k = 1.0 / (std::f64::consts::PI * shelf.hz / sample_rate).tan();
        // s^2 c2 + s c1 + c0 -> z, by s = k (1 - 1/z) / (1 + 1/z).
        let bilinear = |[c2, c1, c0]: [f64; 3]| {
            [
                c2 * k * k + c1 * k + c0,
                2.0 * c0 - 2.0 * c2 * k * k,
                c2 * k * k - c1 * k + c0,
            ]
        };
        std::array::from_fn(|section| {
            let damping =
                2.0 * (std::f64::consts::PI * (2 * section + 1) as f64 / (2.0 * order)).sin();
            let (num, den) = match kind {
                ShelfKind::Low => (
                    [scale * scale, damping * radius * scale, radius * radius],
                    [scale * scale, damping * scale, 1.0],
                ),
                ShelfKind::High => (
                    [
                        radius * radius / (scale * scale),
                        damping * radius / scale,
                        1.0,
                    ],
                    [1.0 / (scale * scale), damping / scale, 1.0],
                ),
            };
            Self::normalised(bilinear(num), bilinear(den))
        })
    }

    /// The gain at `hz` in dB (the filter's frequency response).
    pub fn gain_db(&self, hz: f64, sample_rate: f64) -> f64 {
        let omega = std::f64::consts::TAU * hz / sample_rate;
        let z1 = (omega.cos(), -omega.sin());
        let z2 = ((2.0 * omega).cos(), -(2.0 * omega).sin());
        let num = (
            self.b[0] + self.b[1] * z1.0 + self.b[2] * z2.0,
            self.b[1] * z1.1 + self.b[2] * z2.1,
        );
        let den = (
            1.0 + self.a[0] * z1.0 + self.a[1] * z2.0,
            self.a[0] * z1.1 + self.a[1] * z2.1,
        );
        10.0 * ((num.0 * num.0 + num.1 * num.1) / (den.0 * den.0 + den.1 * den.1)).log10()
    }

    fn prewarp(hz: f64, sample_rate: f64, q: f64) -> (f64, f64) {
        let omega = std::f64::consts::TAU * hz / sample_rate;
        (omega.cos(), omega.sin() / (2.0 * q))
    }

    fn normalised(b: [f64; 3], a: [f64; 3]) -> Self {
        Self {
            b: b.map(|v| v / a[0]),
            a: [a[1] / a[0], a[2] / a[0]],
        }
    }

    /// Filters `samples` in place from silence (transposed direct form II).
    pub fn run(&self, samples: &mut [f64]) {
        let (mut z1, mut z2) = (0.0, 0.0);
        for sample in samples {
            let x = *sample;
            let y = self.b[0] * x + z1;
            z1 = self.b[1] * x - self.a[0] * y + z2;
            z2 = self.b[2] * x - self.a[1] * y;
            *sample = y;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_edit_at_the_same_rate_is_exact() {
        let ir = Ir::new("x", 48_000, vec![vec![0.5, -0.25, 0.125, 1e-9]]).unwrap();
        let (out, report) = prepare(&ir, &EditSettings::NONE, 48_000).unwrap();
        assert_eq!(out, ir);
        assert_eq!(report.resampled, None);
    }

    /// The shelves' response: half the gain at the corner, within 0.3 dB of all of it an
    /// octave beyond and further, 0 dB two octaves on the other side, no overshoot.
    #[test]
    fn shelves_reach_their_gain_and_have_half_of_it_at_the_corner() {
        let rate = 48_000.0;
        for db in [-24.0, -12.0, -3.0, 6.0, 18.0, 24.0] {
            for (kind, hz) in [
                (ShelfKind::Low, 80.0),
                (ShelfKind::Low, 600.0),
                (ShelfKind::High, 3000.0),
                (ShelfKind::High, 9000.0),
            ] {
                let sections = Biquad::shelf(kind, Shelf { hz, db }, rate);
                let gain = |f: f64| sections.iter().map(|s| s.gain_db(f, rate)).sum::<f64>();
                let at_corner = gain(hz);
                assert!(
                    (at_corner - db / 2.0).abs() < 1e-6,
                    "{kind:?} {hz} {db}: {at_corner}"
                );
                let (beyond, other): (Vec<f64>, Vec<f64>) = match kind {
                    ShelfKind::Low => (
                        (0..40).map(|i| hz / 2.0 * 0.9f64.powi(i)).collect(),
                        (0..40)
                            .map(|i| hz * 4.0 * 1.1f64.powi(i))
                            .filter(|&f| f < 23_000.0)
                            .collect(),
                    ),
                    ShelfKind::High => (
                        (0..40)
                            .map(|i| hz * 2.0 * 1.1f64.powi(i))
                            .filter(|&f| f < 23_900.0)
                            .collect(),
                        (0..40).map(|i| hz / 4.0 * 0.9f64.powi(i)).collect(),
                    ),
                };
                for f in beyond {
                    let g = gain(f);
                    assert!(
                        (g - db).abs() <= 0.3,
                        "{kind:?} {hz} Hz {db} dB: {g:.2} dB at {f:.0} Hz"
                    );
                }
                for f in other {
                    let g = gain(f);
                    assert!(
                        g.abs() <= 0.3,
                        "{kind:?} {hz} Hz {db} dB: {g:.2} dB at {f:.0} Hz"
                    );
                }
                for i in 0..400 {
                    let f = 10.0 * 1.02f64.powi(i);
                    if f < 23_900.0 {
                        let g = gain(f);
                        assert!(
                            g <= db.max(0.0) + 1e-9 && g >= db.min(0.0) - 1e-9,
                            "overshoot {g} at {f}"
                        );
                    }
                }
            }
        }
    }

    /// Early and tail levels change the IR before and after the crossover's fade by their dB,
    /// and nothing changes at 0 dB.
    #[test]
    fn the_balance_scales_early_and_tail_apart() {
        let rate = 48_000;
        let len = rate as usize;
        let ir = Ir::new("x", rate, vec![vec![0.5; len]]).unwrap();
        let edits = EditSettings {
            early_db: -6.0,
            tail_db: 3.0,
            crossover_ms: 50.0,
            ..EditSettings::NONE
        };
        let (out, _) = prepare(&ir, &edits, rate).unwrap();
        let at = |ms: f64| f64::from(out.channels[0][(ms * 48.0) as usize]) / 0.5;
        let db = |ms: f64| 20.0 * at(ms).log10();
        assert!((db(0.0) + 6.0).abs() < 1e-6 && (db(39.9) + 6.0).abs() < 1e-6);
        assert!((db(60.1) - 3.0).abs() < 1e-6 && (db(999.0) - 3.0).abs() < 1e-6);
        // Half way, the amplitudes' mean.
        let mid = (10f64.powf(-6.0 / 20.0) + 10f64.powf(3.0 / 20.0)) / 2.0;
        assert!((at(50.0) - mid).abs() < 1e-3, "{}", at(50.0));
        // A short crossover fades over half of it on each side.
        let short = EditSettings {
            crossover_ms: 10.0,
            ..edits
        };
        let (out, _) = prepare(&ir, &short, rate).unwrap();
        assert!((f64::from(out.channels[0][0]) / 0.5 - 10f64.powf(-6.0 / 20.0)).abs() < 1e-6);
        assert!((f64::from(out.channels[0][20 * 48]) / 0.5 - 10f64.powf(3.0 / 20.0)).abs() < 1e-6);
        let level = EditSettings {
            early_db: 30.0,
            ..EditSettings::NONE
        };
        assert!(prepare(&ir, &level, rate).is_err());
    }

    #[test]
    fn fade_gain_is_zero_at_the_silent_end_and_half_in_the_middle() {
        assert_eq!(fade_gain(0, 100), 0.0);
        assert!((fade_gain(50, 100) - 0.5).abs() < 1e-6);
    }
}
