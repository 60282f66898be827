//! Built-in impulse responses, generated deterministically at the session's sample rate, so the
//! plugin makes sound the moment it is inserted and the repository carries no large audio files.
//!
//! Runs off the audio thread (in `activate()` or on the preparation thread), allocates, and
//! renders a room's channels on up to one short-lived thread per core.
//!
//! Each IR is a statistical room model: sparse early reflections, then a late tail of seeded
//! noise with an exponential decay (`-60 dB` at the stated RT60) whose spectrum darkens over time
//! (a one-pole low-pass whose cutoff falls from `bright_hz` to `dark_hz`), a short onset ramp
//! for the density build-up, and a fade over the last 50 ms. Every output channel has its own
//! seed, so channels are decorrelated. Each IR is scaled to unit energy per output channel, so a
//! white-noise input keeps its level through the wet path. On a speaker bus past stereo each
//! output gets a room of its own ([`BuiltinIr::generate_for`]).

use nice_plug::prelude::Enum;

use super::mapping::{Bus, BusFormat, Rule, map};
use super::{Ir, IrLayout};
use crate::rng::Rng;

/// The built-in IRs. The order and the ids are part of saved state: append only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Enum)]
pub enum BuiltinIr {
    #[id = "room"]
    #[name = "Small room"]
    SmallRoom,
    #[id = "plate"]
    #[name = "Plate"]
    Plate,
    #[id = "hall"]
    #[name = "Hall"]
    Hall,
    #[id = "cathedral"]
    #[name = "Cathedral (10 s)"]
    Cathedral,
    #[id = "wide-hall"]
    #[name = "Wide hall (true stereo)"]
    WideHall,
}

/// Parameters of the room model.
#[derive(Debug, Clone, Copy)]
struct Model {
    /// Total length in seconds.
    length_s: f64,
    /// Time for the late tail to decay by 60 dB, in seconds.
    rt60_s: f64,
    /// Delay before the first reflection, in milliseconds.
    predelay_ms: f64,
    /// Number of discrete early reflections.
    num_reflections: usize,
    /// Span over which the early reflections fall, in milliseconds.
    reflections_ms: f64,
    /// Ramp of the late tail's onset, in milliseconds.
    onset_ms: f64,
    /// Low-pass cutoff at the start of the tail, in Hz.
    bright_hz: f64,
    /// Low-pass cutoff at the end of the tail, in Hz.
    dark_hz: f64,
    /// Seed of the first channel; later channels add their index.
    seed: u64,
}

impl BuiltinIr {
    /// Every built-in IR, in menu order.
    pub const ALL: [BuiltinIr; 5] = [
        Self::SmallRoom,
        Self::Plate,
        Self::Hall,
        Self::Cathedral,
        Self::WideHall,
    ];

    /// Stable short id (the parameter's enum id), used in file names and on the command line.
    pub fn id(self) -> &'static str {
        Self::ids().map_or("", |ids| ids[self.to_index()])
    }

    /// Looks a built-in IR up by its [`id`](Self::id).
    pub fn from_id(id: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|ir| ir.id() == id)
    }

    /// The channel layout this IR is generated in.
    pub fn layout(self) -> IrLayout {
        match self {
            Self::WideHall => IrLayout::TrueStereo,
            _ => IrLayout::Stereo,
        }
    }

    /// Length in seconds.
    pub fn seconds(self) -> f64 {
        self.model().length_s
    }

    fn model(self) -> Model {
        match self {
            Self::SmallRoom => Model {
                length_s: 0.6,
                rt60_s: 0.45,
                predelay_ms: 2.0,
                num_reflections: 18,
                reflections_ms: 35.0,
                onset_ms: 8.0,
                bright_hz: 9_000.0,
                dark_hz: 2_500.0,
                seed: 0x5EED_0001,
            },
            Self::Plate => Model {
                length_s: 2.5,
                rt60_s: 2.0,
                predelay_ms: 0.5,
                num_reflections: 0,
                reflections_ms: 0.0,
                onset_ms: 2.0,
                bright_hz: 14_000.0,
                dark_hz: 6_000.0,
                seed: 0x5EED_0002,
            },
            Self::Hall => Model {
                length_s: 3.5,
                rt60_s: 2.6,
                predelay_ms: 12.0,
                num_reflections: 24,
                reflections_ms: 80.0,
                onset_ms: 40.0,
                bright_hz: 10_000.0,
                dark_hz: 1_800.0,
                seed: 0x5EED_0003,
            },
            Self::Cathedral => Model {
                length_s: 10.0,
                rt60_s: 7.5,
                predelay_ms: 25.0,
                num_reflections: 30,
                reflections_ms: 150.0,
                onset_ms: 120.0,
                bright_hz: 8_000.0,
                dark_hz: 900.0,
                seed: 0x5EED_0004,
            },
            Self::WideHall => Model {
                length_s: 3.0,
                rt60_s: 2.2,
                predelay_ms: 15.0,
                num_reflections: 20,
                reflections_ms: 70.0,
                onset_ms: 35.0,
                bright_hz: 11_000.0,
                dark_hz: 2_200.0,
                seed: 0x5EED_0005,
            },
        }
    }

    /// Generates the IR at `sample_rate`. Allocates; takes a few milliseconds per second of IR.
    ///
    /// # Panics
    ///
    /// When `sample_rate` is outside [`super::validate_sample_rate`]'s range: check it first
    /// (the preparation thread and the command line do).
    pub fn generate(self, sample_rate: u32) -> Ir {
        let model = self.model();
        let num_channels = self.layout().num_channels();
        let seeds: Vec<u64> = (0..num_channels as u64)
            .map(|idx| model.seed + idx)
            .collect();
        let mut channels = render_rooms(&model, sample_rate, &seeds);
        if self.layout() == IrLayout::TrueStereo {
            // Cross paths (L -> R, R -> L) arrive later and weaker than the direct sides.
            for cross_idx in [1, 2] {
                let delay = (0.004 * f64::from(sample_rate)) as usize;
                let channel = &mut channels[cross_idx];
                channel.rotate_right(delay);
                channel[..delay].fill(0.0);
                channel.iter_mut().for_each(|s| *s *= 0.5);
            }
        }
        normalise_energy(&mut channels, self.layout());
        Ir::new(self.name(), sample_rate, channels)
            .expect("built-in IRs are finite, non-empty and of a supported layout")
    }

    /// The IR for `bus`: [`generate`](Self::generate) on stereo buses and Ambisonics (where
    /// every channel plays the same room's mid, keeping directions); on speaker and discrete
    /// buses past stereo, one room per output, each with its own seed, so no two speakers play
    /// the same tail: one channel per output (`N -> N`, `1 -> N`), or a `2 x M` matrix fed by
    /// sides (`2 -> N`: left speakers from the left input, centres from both at half). The
    /// speakers the stereo IR leaves dry (the LFE) get a silent channel: no path.
    pub fn generate_for(self, sample_rate: u32, bus: Bus) -> Ir {
        let by_sides = matches!(
            bus.output_format(),
            BusFormat::Stereo | BusFormat::Ambisonics(_)
        );
        let mapping = match map(self.layout(), bus) {
            Ok(mapping) if !by_sides && mapping.rule == Rule::Sides => mapping,
            _ => return self.generate(sample_rate),
        };
        let model = self.model();
        let (n, m) = (bus.inputs, bus.outputs);
        let fed: Vec<usize> = (0..m)
            .filter(|&output| mapping.paths.iter().any(|p| p.output == output))
            .collect();
        let seeds: Vec<u64> = fed
            .iter()
            .map(|&output| model.seed + 100 + output as u64)
            .collect();
        let mut rooms: Vec<Option<Vec<f32>>> = vec![None; m];
        for (output, mut room) in fed
            .into_iter()
            .zip(render_rooms(&model, sample_rate, &seeds))
        {
            normalise_energy(std::slice::from_mut(&mut room), IrLayout::Mono);
            rooms[output] = Some(room);
        }
        // Every room has the model's length.
        let len = rooms.iter().flatten().map(Vec::len).next().unwrap_or(1);
        // One channel per output where every path is its own output's (N -> N, 1 -> N), else
        // the whole 2 x M matrix.
        let per_output = n == m || n == 1;
        let num_channels = if per_output { m } else { n * m };
        let mut channels = vec![vec![0.0f32; len]; num_channels];
        for path in &mapping.paths {
            let Some(room) = &rooms[path.output] else {
                continue;
            };
            let weight: f32 = path.terms.iter().map(|&(_, w)| w).sum();
            let channel = if per_output {
                path.output
            } else {
                path.input * m + path.output
            };
            channels[channel]
                .iter_mut()
                .zip(room)
                .for_each(|(c, r)| *c += weight * r);
        }
        Ir::new(self.name(), sample_rate, channels)
            .expect("built-in IRs are finite, non-empty and of a supported layout")
    }

    /// The name shown in menus (the parameter's enum name).
    pub fn name(self) -> &'static str {
        Self::variants()[self.to_index()]
    }
}

/// One room per seed: [`render_lockstep`] on one thread per core, each taking an equal share of
/// the seeds (a stereo room on two, a 12-speaker bus on up to twelve), or here where a thread
/// cannot start. Every room is bit for bit the room its seed gives alone, wherever it is
/// rendered.
fn render_rooms(model: &Model, sample_rate: u32, seeds: &[u64]) -> Vec<Vec<f32>> {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    let threads = cores.min(seeds.len());
    if threads < 2 {
        return render_lockstep(model, sample_rate, seeds);
    }
    let share = seeds.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = seeds
            .chunks(share)
            .map(|chunk| {
                std::thread::Builder::new()
                    .name("longtail-room".into())
                    .spawn_scoped(scope, move || render_lockstep(model, sample_rate, chunk))
            })
            .collect();
        handles
            .into_iter()
            .zip(seeds.chunks(share))
            .flat_map(|(handle, chunk)| match handle {
                Ok(handle) => handle
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
                Err(_) => render_lockstep(model, sample_rate, chunk),
            })
            .collect()
    })
}

/// One room per seed, rendered in lockstep. The tail's filter coefficient, onset ramp and
/// envelope depend only on the model and the rate: they are computed once per sample for every
/// room (a `pow` and an `exp` per sample, most of the work). Each room keeps its own noise,
/// filter state and reflections, so it is bit for bit the room its seed gives alone.
fn render_lockstep(model: &Model, sample_rate: u32, seeds: &[u64]) -> Vec<Vec<f32>> {
    let rate = f64::from(sample_rate);
    let num_samples = ((model.length_s * rate) as usize).max(1);
    let predelay = (model.predelay_ms * 1e-3 * rate) as usize;
    let onset = ((model.onset_ms * 1e-3 * rate) as usize).max(1);
    let decay_per_sample = (-(1000f64.ln()) / (model.rt60_s * rate)).exp();
    let mut rngs: Vec<Rng> = seeds.iter().map(|&seed| Rng::new(seed)).collect();
    let mut rooms = vec![vec![0.0f32; num_samples]; seeds.len()];

    // Late tail: noise through a darkening one-pole low-pass, with an exponential envelope.
    let cutoff_ratio = model.dark_hz / model.bright_hz;
    let mut envelope = 1.0f64;
    let mut lowpass = vec![0.0f64; seeds.len()];
    let tail_len = num_samples.saturating_sub(predelay).max(1);
    for idx in predelay..num_samples {
        let age = idx - predelay;
        let progress = age as f64 / tail_len as f64;
        let cutoff_hz = (model.bright_hz * cutoff_ratio.powf(progress)).min(0.45 * rate);
        let coefficient = 1.0 - (-std::f64::consts::TAU * cutoff_hz / rate).exp();
        let ramp = (age as f64 / onset as f64).min(1.0);
        for ((room, rng), lowpass) in rooms.iter_mut().zip(&mut rngs).zip(&mut lowpass) {
            *lowpass += coefficient * (rng.gaussian() - *lowpass);
            room[idx] = (*lowpass * envelope * ramp) as f32;
        }
        envelope *= decay_per_sample;
    }

    for (samples, rng) in rooms.iter_mut().zip(&mut rngs) {
        // Early reflections: sparse signed taps, louder than the tail around them, decaying.
        for _ in 0..model.num_reflections {
            let time_ms = model.predelay_ms + rng.next_f64() * model.reflections_ms;
            let idx = (time_ms * 1e-3 * rate) as usize;
            if idx < num_samples {
                let level =
                    2.5 * (-(time_ms - model.predelay_ms) / (model.reflections_ms + 1.0)).exp();
                samples[idx] += (level * rng.bipolar() as f64) as f32;
            }
        }

        // Fade the last 50 ms to zero so the tail ends without a step.
        let fade = ((0.05 * rate) as usize).min(num_samples);
        for (k, sample) in samples[num_samples - fade..].iter_mut().enumerate() {
            let gain = 0.5 + 0.5 * (std::f64::consts::PI * (k as f64 + 1.0) / fade as f64).cos();
            *sample *= gain as f32;
        }
    }
    rooms
}

/// Scales all channels by one factor so each output side receives unit energy on average.
fn normalise_energy(channels: &mut [Vec<f32>], layout: IrLayout) {
    let energy: f64 = channels
        .iter()
        .flatten()
        .map(|&s| f64::from(s) * f64::from(s))
        .sum();
    // Mono and stereo: one channel per output side; true stereo: two per side.
    let num_outputs = match layout {
        IrLayout::Mono => 1.0,
        _ => 2.0,
    };
    if energy > 0.0 {
        let gain = (num_outputs / energy).sqrt() as f32;
        channels.iter_mut().flatten().for_each(|s| *s *= gain);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_speaker_bus_gets_a_room_per_speaker_and_ambisonics_the_stereo_room() {
        use super::super::mapping::ChannelFormat;
        let surround = BuiltinIr::Hall.generate_for(48_000, Bus::new(12, 12, ChannelFormat::Auto));
        assert_eq!(surround.layout, IrLayout::Channels(12));
        // The LFE is silent; every other speaker has unit energy and its own tail.
        assert!(surround.channels[3].iter().all(|&s| s == 0.0));
        let energy = |c: &[f32]| c.iter().map(|&s| f64::from(s).powi(2)).sum::<f64>();
        assert!((energy(&surround.channels[0]) - 1.0).abs() < 1e-3);
        assert_ne!(surround.channels[0], surround.channels[4]);
        let from_stereo = BuiltinIr::Hall.generate_for(48_000, Bus::new(2, 6, ChannelFormat::Auto));
        assert_eq!(from_stereo.layout, IrLayout::Channels(12));
        // The right input does not feed L; both feed C at half.
        assert!(from_stereo.channels[6].iter().all(|&s| s == 0.0));
        assert_eq!(from_stereo.channels[2], from_stereo.channels[8]);
        let ambisonics = Bus::new(4, 4, ChannelFormat::Ambisonics);
        assert_eq!(
            BuiltinIr::Hall.generate_for(48_000, ambisonics),
            BuiltinIr::Hall.generate(48_000)
        );
    }

    #[test]
    fn generation_is_deterministic_and_sized() {
        for ir in BuiltinIr::ALL {
            let a = ir.generate(48_000);
            assert_eq!(a.len(), (ir.seconds() * 48_000.0) as usize, "{ir:?}");
            assert_eq!(a.channels.len(), ir.layout().num_channels());
            assert_eq!(a, ir.generate(48_000));
            assert_eq!(BuiltinIr::from_id(ir.id()), Some(ir));
        }
        assert_eq!(BuiltinIr::Cathedral.generate(44_100).len(), 441_000);
    }

    /// FNV-1a over the bits of every sample, channel after channel.
    #[cfg(all(target_os = "linux", target_arch = "x86_64", target_env = "gnu"))]
    fn fingerprint(ir: &Ir) -> u64 {
        ir.channels
            .iter()
            .flatten()
            .fold(0xCBF2_9CE4_8422_2325, |hash, s| {
                (hash ^ u64::from(s.to_bits())).wrapping_mul(0x0100_0000_01B3)
            })
    }

    /// Saved projects name a built-in room by its id and play it as generated then: the rooms
    /// are pinned bit for bit (speed-ups of the generator must not change a sample). The
    /// fingerprints are glibc's on x86-64 (`exp`, `pow`, `ln` and `cos` may differ in the last
    /// bit elsewhere); a libm that rounds differently fails here too, which says the rooms moved.
    #[test]
    #[cfg(all(target_os = "linux", target_arch = "x86_64", target_env = "gnu"))]
    fn rooms_are_the_same_bit_for_bit_as_when_saved() {
        use super::super::mapping::ChannelFormat;
        let mut fingerprints: Vec<(String, u64)> = BuiltinIr::ALL
            .into_iter()
            .map(|ir| (format!("{ir:?} 48k"), fingerprint(&ir.generate(48_000))))
            .collect();
        fingerprints.push((
            "Plate 44.1k".into(),
            fingerprint(&BuiltinIr::Plate.generate(44_100)),
        ));
        for (n, m) in [(12, 12), (2, 6), (1, 6)] {
            let ir = BuiltinIr::SmallRoom.generate_for(48_000, Bus::new(n, m, ChannelFormat::Auto));
            fingerprints.push((format!("SmallRoom {n}x{m}"), fingerprint(&ir)));
        }
        let pinned: [u64; 9] = [
            0xf103_05dc_25d7_d456,
            0x04e6_b9e8_586c_4ede,
            0xb4e6_991c_1338_a1f2,
            0x3af6_543f_0db9_dfc9,
            0x1afb_c41d_9c2b_69d6,
            0x5adb_effe_6be3_46b9,
            0x3206_8df6_e9df_0555,
            0xa731_a146_3775_1d5b,
            0xbe35_c89a_3fe8_55a2,
        ];
        let found: Vec<u64> = fingerprints.iter().map(|(_, f)| *f).collect();
        assert_eq!(found, pinned, "{fingerprints:x?}");
    }

    /// Rendered together, in lockstep or on threads, every room is the one its seed gives
    /// alone, in the seeds' order.
    #[test]
    fn rooms_rendered_together_are_the_rooms_rendered_alone() {
        let model = BuiltinIr::SmallRoom.model();
        let seeds = [3, 1, 4, 1, 5];
        let together = render_lockstep(&model, 44_100, &seeds);
        assert_eq!(render_rooms(&model, 44_100, &seeds), together);
        assert_eq!(together.len(), seeds.len());
        for (room, &seed) in together.iter().zip(&seeds) {
            assert_eq!(room, &render_lockstep(&model, 44_100, &[seed])[0]);
        }
        assert_ne!(together[0], together[1]);
        assert_eq!(together[1], together[3]);
    }

    #[test]
    fn channels_are_decorrelated() {
        let ir = BuiltinIr::Hall.generate(48_000);
        let (l, r) = (&ir.channels[0], &ir.channels[1]);
        let dot: f64 = l
            .iter()
            .zip(r)
            .map(|(a, b)| f64::from(*a) * f64::from(*b))
            .sum();
        let norm = |x: &[f32]| x.iter().map(|s| f64::from(*s).powi(2)).sum::<f64>().sqrt();
        let correlation = dot / (norm(l) * norm(r));
        assert!(correlation.abs() < 0.1, "correlation {correlation}");
    }

    #[test]
    fn tails_decay_and_end_silent() {
        let ir = BuiltinIr::Cathedral.generate(48_000);
        let channel = &ir.channels[0];
        let rms = |x: &[f32]| {
            (x.iter().map(|s| f64::from(*s).powi(2)).sum::<f64>() / x.len() as f64).sqrt()
        };
        let early = rms(&channel[48_000..96_000]);
        let late = rms(&channel[384_000..432_000]);
        assert!(late < early * 0.05, "early {early} late {late}");
        assert_eq!(*channel.last().unwrap(), 0.0);
    }
}
