//! How an IR meets a bus: for every IR and every bus, one rule says which IR channel feeds
//! which path, and every combination it cannot play is refused with a message that names the
//! counts. The rule is shown before anything plays (`longtail-cli ir-info --outputs`, the
//! editor).
//!
//! A bus is `inputs -> outputs` with a [`ChannelFormat`] that says what its channels are.
//! Buses of at most two channels a side are the stereo buses of today; wider ones are
//! `N -> N`, `1 -> N` or `2 -> N` (nice-plug offers no buses with more inputs than outputs).
//! The width of a bus is its output count.
//!
//! The rules, first match wins:
//!
//! 1. **A matrix IR** ([`IrLayout::Matrix`], from per-input files or the bench) plays only on a
//!    bus of its own size.
//! 2. **One channel per path** (`inputs * outputs` channels, on a bus wider than stereo):
//!    channel `i * outputs + o` is input `i` to output `o`, the peer contract's order.
//! 3. **One channel per output** (as many channels as the bus is wide, on `N -> N` or
//!    `1 -> N`): channel `o` feeds output `o`, from input `o` (or from the one input). A 7.1.4
//!    room measured per speaker, or an AmbiX file (ACN order, SN3D) on an Ambisonics bus, is
//!    used as it is; a 4-channel file on a 4-wide bus is read this way, not as true stereo.
//! 4. **Mono, stereo and true-stereo IRs by sides.** Each bus channel has a side from its
//!    format: left, right, centre (both sides at half), LFE (none: the LFE stays dry) or an
//!    Ambisonics channel (like a centre, each channel through the IR's mid). An input carries
//!    its side (a mono input both), an output takes its side's IR channels; on `N -> N` an
//!    output is fed by its own input and by the other speaker of its left/right pair (true
//!    stereo's cross paths), on the stereo buses and `1 -> N`, `2 -> N` by every input. On
//!    `1 -> N` and `2 -> N` Ambisonics only W (ACN 0) gets the reverb: a mono or stereo IR
//!    has no direction to encode. Identical paths share one spectrum in the engine, so a
//!    stereo IR on 7.1.4 costs two spectra, not ten.
//! 5. Everything else is refused, naming the IR's channels and the bus.
//!
//! On the stereo buses rule 4 is today's stereo behaviour exactly: a mono input feeds both
//! sides of the IR, a mono output takes the average of both sides.
//!
//! Budget: a mapping of more than [`MAX_PATH_SECONDS`] path-seconds, or more than
//! [`MAX_SPECTRA_BYTES`] of spectra, is refused with the figures (see [`check_budget`]).

use super::speakers::{SPEAKER_SETS, SpeakerSet, check_mask, label_side};
use super::{IrError, IrLayout};

/// Most path-seconds an engine takes: paths (after sharing) times the IR's seconds. A 16 x 16
/// matrix of 4 s rooms is 1024; 64 x 64 paths fit up to 0.5 s each.
pub const MAX_PATH_SECONDS: f64 = 2048.0;
/// Most bytes of spectra an engine keeps: 8 bytes (one complex `f32` bin per two taps, twice
/// zero-padded) per tap of every unique path. 2048 path-seconds at 48 kHz is 786 MB.
pub const MAX_SPECTRA_BYTES: u64 = 1 << 30;

/// How a bus wider than stereo reads its channels: the plugin's Channel format setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ChannelFormat {
    /// The speaker set of the width where there is one (quad, 5.0, 5.1, 7.0, 7.1, 7.1.2,
    /// 7.1.4, 9.1.6), else Ambisonics where the width is a square, else discrete.
    #[default]
    Auto,
    /// The speaker set of the width (discrete where the width has none).
    Speakers,
    /// Ambisonics, ACN order and SN3D, where the width is `(order + 1)²` (else discrete).
    Ambisonics,
    /// Numbered channels, odd ones left and even ones right.
    Discrete,
}

/// What the channels of a bus are, once its width is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BusFormat {
    /// One or two channels: mono or left/right.
    Stereo,
    /// A speaker set.
    Speakers(&'static SpeakerSet),
    /// Ambisonics of this order (ACN, SN3D).
    Ambisonics(usize),
    /// Numbered channels.
    Discrete,
}

impl ChannelFormat {
    /// What a bus of `width` channels is under this setting.
    pub fn resolve(self, width: usize) -> BusFormat {
        if width <= 2 {
            return BusFormat::Stereo;
        }
        let speakers = SPEAKER_SETS.iter().find(|set| set.labels.len() == width);
        let order = ambisonic_order(width);
        match (self, speakers, order) {
            (Self::Auto | Self::Speakers, Some(set), _) => BusFormat::Speakers(set),
            (Self::Auto | Self::Ambisonics, _, Some(order)) => BusFormat::Ambisonics(order),
            _ => BusFormat::Discrete,
        }
    }
}

/// The Ambisonics order of a width of `(order + 1)²` channels, order 1 to 7.
pub fn ambisonic_order(width: usize) -> Option<usize> {
    (1..=7).find(|order| (order + 1) * (order + 1) == width)
}

impl BusFormat {
    /// Its name, for users ("7.1.4", "Ambisonics order 1", "12 discrete channels").
    pub fn name(self, width: usize) -> String {
        match self {
            Self::Stereo if width == 1 => "mono".into(),
            Self::Stereo => "stereo".into(),
            Self::Speakers(set) => set.name.into(),
            Self::Ambisonics(order) => format!("Ambisonics order {order} (ACN, SN3D)"),
            Self::Discrete => format!("{width} discrete channels"),
        }
    }

    /// The label of channel `idx` for a narrow column: as [`BusFormat::label`], an
    /// Ambisonics channel by its number alone.
    pub fn short_label(self, idx: usize, width: usize) -> String {
        match self {
            Self::Ambisonics(_) => idx.to_string(),
            _ => self.label(idx, width),
        }
    }

    /// The label of channel `idx` ("L", "LFE", "ACN 3", "7").
    pub fn label(self, idx: usize, width: usize) -> String {
        match self {
            Self::Stereo if width == 1 => "M".into(),
            Self::Stereo => ["L", "R"][idx.min(1)].into(),
            Self::Speakers(set) => set.labels[idx].into(),
            Self::Ambisonics(_) => format!("ACN {idx}"),
            Self::Discrete => (idx + 1).to_string(),
        }
    }

    fn side(self, idx: usize) -> Side {
        match self {
            Self::Stereo | Self::Discrete => [Side::Left, Side::Right][idx % 2],
            Self::Speakers(set) => match label_side(set.labels[idx]) {
                "LFE" => Side::None,
                "C" => Side::Centre,
                "L" => Side::Left,
                _ => Side::Right,
            },
            Self::Ambisonics(_) => Side::Centre,
        }
    }

    /// The other channel of `idx`'s left/right pair, if it has one.
    fn partner(self, idx: usize, width: usize) -> Option<usize> {
        let other = match self.side(idx) {
            Side::Left => idx + 1,
            Side::Right => idx.checked_sub(1)?,
            _ => return None,
        };
        let expected = match self.side(idx) {
            Side::Left => Side::Right,
            _ => Side::Left,
        };
        (other < width && self.side(other) == expected).then_some(other)
    }
}

/// The side of a bus channel, for rule 4.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Left,
    Right,
    /// Both sides at half.
    Centre,
    /// No reverb (LFE).
    None,
}

/// A bus: channel counts and what its channels are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bus {
    /// Input channels.
    pub inputs: usize,
    /// Output channels (the width).
    pub outputs: usize,
    /// The Channel format setting.
    pub format: ChannelFormat,
}

impl Bus {
    /// A bus of `inputs -> outputs` read as `format`.
    pub fn new(inputs: usize, outputs: usize, format: ChannelFormat) -> Self {
        Self {
            inputs,
            outputs,
            format,
        }
    }

    /// What its outputs are.
    pub fn output_format(self) -> BusFormat {
        self.format.resolve(self.outputs)
    }

    /// What its inputs are: the outputs' format on `N -> N`, mono or stereo otherwise.
    pub fn input_format(self) -> BusFormat {
        if self.inputs == self.outputs {
            self.output_format()
        } else {
            BusFormat::Stereo
        }
    }

    /// Whether it is wider than stereo.
    pub fn is_wide(self) -> bool {
        self.inputs > 2 || self.outputs > 2
    }
}

impl std::fmt::Display for Bus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let out = self.output_format().name(self.outputs);
        if self.inputs == self.outputs {
            write!(f, "{out} ({} in / {} out)", self.inputs, self.outputs)
        } else {
            let input = self.input_format().name(self.inputs);
            write!(
                f,
                "{input} -> {out} ({} in / {} out)",
                self.inputs, self.outputs
            )
        }
    }
}

/// Which rule a mapping follows (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// Rules 1 and 2: one IR channel per path of the whole matrix.
    Matrix,
    /// Rule 3: one IR channel per output.
    PerOutput,
    /// Rule 4: mono, stereo or true stereo by sides.
    Sides,
}

/// One path and the IR channels summed into its taps, each with its weight.
#[derive(Debug, Clone, PartialEq)]
pub struct MappedPath {
    /// Input channel.
    pub input: usize,
    /// Output channel.
    pub output: usize,
    /// `(IR channel, weight)`, summed in this order.
    pub terms: Vec<(usize, f32)>,
}

/// The paths of one IR on one bus.
#[derive(Debug, Clone, PartialEq)]
pub struct Mapping {
    /// The rule that matched.
    pub rule: Rule,
    /// The bus.
    pub bus: Bus,
    /// The paths, in the order their first IR channel comes.
    pub paths: Vec<MappedPath>,
}

/// The mapping of an IR of `layout` on `bus`, or why it cannot play there.
pub fn map(layout: IrLayout, bus: Bus) -> Result<Mapping, IrError> {
    let (n, m) = (bus.inputs, bus.outputs);
    IrLayout::matrix(n, m).ok_or(IrError::MatrixSize {
        inputs: n,
        outputs: m,
    })?;
    let refuse = || IrError::Unmappable {
        ir: layout.to_string(),
        channels: layout.num_channels(),
        bus: bus.to_string(),
    };
    let num_channels = layout.num_channels();
    let matrix = |rule| Mapping {
        rule,
        bus,
        paths: (0..n * m)
            .map(|channel| MappedPath {
                input: channel / m,
                output: channel % m,
                terms: vec![(channel, 1.0)],
            })
            .collect(),
    };
    if let IrLayout::Matrix { inputs, outputs } = layout {
        return if (inputs, outputs) == (n, m) {
            Ok(matrix(Rule::Matrix))
        } else {
            Err(refuse())
        };
    }
    if bus.is_wide() && num_channels == n * m {
        return Ok(matrix(Rule::Matrix));
    }
    if bus.is_wide() && num_channels == m && (n == m || n == 1) {
        let paths = (0..m)
            .map(|output| MappedPath {
                input: if n == 1 { 0 } else { output },
                output,
                terms: vec![(output, 1.0)],
            })
            .collect();
        return Ok(Mapping {
            rule: Rule::PerOutput,
            bus,
            paths,
        });
    }
    let ir_terms: &[(usize, Side, Side)] = match layout {
        IrLayout::Mono => &[(0, Side::Left, Side::Left), (0, Side::Right, Side::Right)],
        IrLayout::Stereo => &[(0, Side::Left, Side::Left), (1, Side::Right, Side::Right)],
        IrLayout::TrueStereo => &[
            (0, Side::Left, Side::Left),
            (1, Side::Left, Side::Right),
            (2, Side::Right, Side::Left),
            (3, Side::Right, Side::Right),
        ],
        _ => return Err(refuse()),
    };
    if n > 2 && n != m {
        return Err(refuse());
    }
    let (in_format, out_format) = (bus.input_format(), bus.output_format());
    let carries = |input: usize, side: Side| match n {
        1 => true,
        2 => side == [Side::Left, Side::Right][input],
        _ => match in_format.side(input) {
            Side::Centre => true,
            Side::None => false,
            own => own == side,
        },
    };
    let weight = |output: usize, side: Side| -> Option<f32> {
        let own = match (m, out_format) {
            (1, _) => Side::Centre,
            // 1 -> N and 2 -> N Ambisonics: only W.
            (_, BusFormat::Ambisonics(_)) if n != m && output != 0 => Side::None,
            _ => out_format.side(output),
        };
        match own {
            Side::Centre => Some(0.5),
            Side::None => None,
            own => (own == side).then_some(1.0),
        }
    };
    let feeds = |input: usize, output: usize| {
        n <= 2 || input == output || out_format.partner(output, m) == Some(input)
    };
    let mut paths: Vec<MappedPath> = Vec::new();
    for &(channel, source, destination) in ir_terms {
        for input in (0..n).filter(|&input| carries(input, source)) {
            for output in (0..m).filter(|&output| feeds(input, output)) {
                let Some(w) = weight(output, destination) else {
                    continue;
                };
                match paths
                    .iter_mut()
                    .find(|p| (p.input, p.output) == (input, output))
                {
                    Some(path) => path.terms.push((channel, w)),
                    None => paths.push(MappedPath {
                        input,
                        output,
                        terms: vec![(channel, w)],
                    }),
                }
            }
        }
    }
    Ok(Mapping {
        rule: Rule::Sides,
        bus,
        paths,
    })
}

/// Refuses a file of `num_channels` channels whose WAV channel `mask` disagrees with the bus:
/// checked where the file has one channel per output of a speaker bus (rule 3), the only
/// case where its speakers meet the bus's one for one. Ambisonics and discrete buses, and the
/// other rules, do not read masks.
pub fn check_file_mask(mask: Option<u32>, num_channels: usize, bus: Bus) -> Result<(), IrError> {
    match (mask, bus.output_format()) {
        (Some(mask), BusFormat::Speakers(set)) if num_channels == bus.outputs => {
            check_mask(mask, set)
        }
        _ => Ok(()),
    }
}

/// The `WAVE_FORMAT_EXTENSIBLE` channel mask of a file of this bus's outputs: the speaker
/// set's, mono's centre or stereo's left and right; 0 (no speaker positions) for Ambisonics,
/// discrete channels and 9.1.6.
pub fn wav_mask(bus: Bus) -> u32 {
    match bus.output_format() {
        BusFormat::Stereo if bus.outputs == 1 => 0x4,
        BusFormat::Stereo => 0x3,
        BusFormat::Speakers(set) => set.wav_mask,
        BusFormat::Ambisonics(_) | BusFormat::Discrete => 0,
    }
}

/// Where an output's dry signal comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dry {
    /// No dry signal.
    None,
    /// This input.
    Input(usize),
    /// The average of inputs 0 and 1.
    Mid,
}

/// The dry signal of `output` on `bus`: each channel its own on `N -> N`; a mono source on
/// both sides of a stereo bus and on L and R of a wider one; a stereo source on L and R; on
/// Ambisonics from a source, only W (a mono dry, or the stereo source's mid); a stereo source
/// on a mono output, its average. Other outputs (a matrix with more outputs than inputs) are
/// wet only. Does not allocate.
pub fn dry_source(bus: Bus, output: usize) -> Dry {
    let (n, m) = (bus.inputs, bus.outputs);
    if n == m {
        return Dry::Input(output);
    }
    let ambisonics = m > 2 && matches!(bus.output_format(), BusFormat::Ambisonics(_));
    match (n, ambisonics) {
        (1, false) if m <= 2 || output < 2 => Dry::Input(0),
        (1, true) if output == 0 => Dry::Input(0),
        (2, false) if m == 1 => Dry::Mid,
        (2, false) if output < 2 => Dry::Input(output),
        (2, true) if output == 0 => Dry::Mid,
        _ if n > 2 && output < n => Dry::Input(output),
        _ => Dry::None,
    }
}

/// Refuses a mapping over the budget: `unique_paths` spectra of `taps` taps at `sample_rate`.
pub fn check_budget(unique_paths: usize, taps: usize, sample_rate: u32) -> Result<(), IrError> {
    let path_seconds = unique_paths as f64 * taps as f64 / f64::from(sample_rate.max(1));
    let bytes = 8 * unique_paths as u64 * taps as u64;
    if path_seconds > MAX_PATH_SECONDS || bytes > MAX_SPECTRA_BYTES {
        return Err(IrError::OverBudget {
            paths: unique_paths,
            path_seconds,
            megabytes: bytes as f64 / 1e6,
        });
    }
    Ok(())
}

impl Mapping {
    /// One line for the rule, as users read it.
    pub fn summary(&self, layout: IrLayout) -> String {
        let bus = self.bus;
        let how = match self.rule {
            Rule::Matrix => "one IR channel per path, input-major (channel i x outputs + o)",
            Rule::PerOutput if bus.inputs == 1 => "one IR channel per output, from the input",
            Rule::PerOutput => "one IR channel per output, each from its own input",
            Rule::Sides if matches!(bus.output_format(), BusFormat::Ambisonics(_)) => {
                if bus.inputs == bus.outputs {
                    "every channel through the IR's mid (its sides at half)"
                } else {
                    "W (ACN 0) through the IR's mid (its sides at half); the other channels \
                     get no reverb from a source without direction"
                }
            }
            Rule::Sides if bus.is_wide() && self.has_dry_output() => {
                "each channel through its side of the IR, centres through both at half, \
                 the LFE dry"
            }
            Rule::Sides if bus.is_wide() => {
                "each channel through its side of the IR, centres through both at half"
            }
            Rule::Sides => "each side through its side of the IR",
        };
        format!("{layout} IR on {bus}: {} paths; {how}", self.paths.len())
    }

    /// Whether an output of the bus has no path (an LFE, or Ambisonics past W from a source).
    fn has_dry_output(&self) -> bool {
        (0..self.bus.outputs).any(|o| !self.paths.iter().any(|p| p.output == o))
    }

    /// One line per path, by output and then input: `C -> C: 0.5 x IR 1 + 0.5 x IR 2`.
    pub fn lines(&self) -> Vec<String> {
        let bus = self.bus;
        let (in_format, out_format) = (bus.input_format(), bus.output_format());
        let mut sorted: Vec<&MappedPath> = self.paths.iter().collect();
        sorted.sort_by_key(|path| (path.output, path.input));
        sorted
            .into_iter()
            .map(|path| {
                let terms: Vec<String> = path
                    .terms
                    .iter()
                    .map(|&(channel, w)| {
                        if w == 1.0 {
                            format!("IR {}", channel + 1)
                        } else {
                            format!("{w} x IR {}", channel + 1)
                        }
                    })
                    .collect();
                format!(
                    "{} -> {}: {}",
                    in_format.label(path.input, bus.inputs),
                    out_format.label(path.output, bus.outputs),
                    terms.join(" + ")
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Found = Vec<(usize, usize, Vec<(usize, f32)>)>;

    fn paths(layout: IrLayout, bus: Bus) -> Found {
        map(layout, bus)
            .expect("maps")
            .paths
            .into_iter()
            .map(|p| (p.input, p.output, p.terms))
            .collect()
    }

    fn bus(inputs: usize, outputs: usize) -> Bus {
        Bus::new(inputs, outputs, ChannelFormat::Auto)
    }

    #[test]
    fn the_stereo_buses_keep_todays_routes() {
        // Mono input: both sides of the IR; true stereo sums LL + RL into the left output.
        assert_eq!(
            paths(IrLayout::TrueStereo, bus(1, 2)),
            [
                (0, 0, vec![(0, 1.0), (2, 1.0)]),
                (0, 1, vec![(1, 1.0), (3, 1.0)])
            ]
        );
        assert_eq!(
            paths(IrLayout::Stereo, bus(2, 2)),
            [(0, 0, vec![(0, 1.0)]), (1, 1, vec![(1, 1.0)])]
        );
        // A mono output is the average of both sides.
        assert_eq!(
            paths(IrLayout::Mono, bus(1, 1)),
            [(0, 0, vec![(0, 0.5), (0, 0.5)])]
        );
        assert_eq!(
            paths(IrLayout::Stereo, bus(2, 1)),
            [(0, 0, vec![(0, 0.5)]), (1, 0, vec![(1, 0.5)])]
        );
        assert_eq!(
            map(IrLayout::TrueStereo, bus(2, 2)).unwrap().rule,
            Rule::Sides
        );
    }

    #[test]
    fn a_stereo_ir_on_7_1_4_goes_by_sides_and_leaves_the_lfe_dry() {
        let mapping = map(IrLayout::Stereo, bus(12, 12)).expect("maps");
        assert_eq!(mapping.rule, Rule::Sides);
        let lines = mapping.lines();
        assert_eq!(lines.len(), 11, "{lines:?}");
        assert_eq!(lines[0], "L -> L: IR 1");
        assert_eq!(lines[2], "C -> C: 0.5 x IR 1 + 0.5 x IR 2");
        assert_eq!(lines[3], "Lrs -> Lrs: IR 1");
        assert!(lines.iter().all(|line| !line.contains("LFE")), "{lines:?}");
        assert!(lines.contains(&"Rtr -> Rtr: IR 2".to_string()), "{lines:?}");
        assert!(
            mapping
                .summary(IrLayout::Stereo)
                .starts_with("stereo IR on 7.1.4 (12 in / 12 out): 11 paths"),
            "{}",
            mapping.summary(IrLayout::Stereo)
        );
    }

    #[test]
    fn true_stereo_on_5_1_crosses_within_each_speaker_pair() {
        let found = paths(IrLayout::TrueStereo, bus(6, 6));
        // Ls (4) and Rs (5) are a pair: Ls -> Rs through LR, Rs -> Ls through RL.
        assert!(found.contains(&(4, 5, vec![(1, 1.0)])), "{found:?}");
        assert!(found.contains(&(5, 4, vec![(2, 1.0)])), "{found:?}");
        // No path crosses pairs, and none touches the LFE.
        assert!(found.iter().all(|&(i, o, _)| i / 2 == o / 2 || i == o));
        assert!(found.iter().all(|&(i, o, _)| i != 3 && o != 3));
    }

    #[test]
    fn a_file_as_wide_as_the_bus_is_one_channel_per_output() {
        let diagonal = paths(IrLayout::Channels(12), bus(12, 12));
        assert_eq!(diagonal.len(), 12);
        assert!(
            diagonal
                .iter()
                .all(|(i, o, t)| i == o && *t == vec![(*o, 1.0)])
        );
        let row = paths(IrLayout::Channels(12), bus(1, 12));
        assert!(
            row.iter()
                .enumerate()
                .all(|(o, (i, out, _))| *i == 0 && *out == o)
        );
        // Four channels on a four-wide bus: per output, not true stereo.
        let quad = map(IrLayout::TrueStereo, bus(4, 4)).expect("maps");
        assert_eq!(quad.rule, Rule::PerOutput);
        // inputs x outputs channels: the whole matrix.
        let matrix = map(IrLayout::Channels(24), bus(2, 12)).expect("maps");
        assert_eq!(matrix.rule, Rule::Matrix);
        assert_eq!(matrix.paths[13].input, 1);
        assert_eq!(matrix.paths[13].output, 1);
    }

    #[test]
    fn ambisonics_plays_the_mid_on_every_channel_and_only_w_from_a_source() {
        let ambi = Bus::new(4, 4, ChannelFormat::Ambisonics);
        assert_eq!(ambi.output_format(), BusFormat::Ambisonics(1));
        let found = paths(IrLayout::Stereo, ambi);
        assert_eq!(found.len(), 4);
        assert!(
            found
                .iter()
                .all(|(i, o, t)| i == o && *t == vec![(0, 0.5), (1, 0.5)])
        );
        let from_mono = paths(IrLayout::Mono, Bus::new(1, 9, ChannelFormat::Auto));
        assert_eq!(from_mono, [(0, 0, vec![(0, 0.5), (0, 0.5)])]);
        // Auto: quad at 4 channels, Ambisonics at 9, discrete where neither fits.
        assert_eq!(bus(4, 4).output_format().name(4), "quad");
        assert_eq!(bus(9, 9).output_format(), BusFormat::Ambisonics(2));
        assert_eq!(bus(24, 24).output_format(), BusFormat::Discrete);
        assert_eq!(
            Bus::new(16, 16, ChannelFormat::Ambisonics).output_format(),
            BusFormat::Ambisonics(3)
        );
        assert_eq!(
            Bus::new(16, 16, ChannelFormat::Discrete).output_format(),
            BusFormat::Discrete
        );
    }

    #[test]
    fn what_cannot_play_is_refused_with_the_counts() {
        for (layout, bus) in [
            (IrLayout::Channels(5), bus(12, 12)),
            (IrLayout::Stereo, bus(3, 5)),
            (IrLayout::Channels(3), bus(2, 2)),
            (
                IrLayout::Matrix {
                    inputs: 4,
                    outputs: 4,
                },
                bus(2, 2),
            ),
        ] {
            let message = map(layout, bus).unwrap_err().to_string();
            assert!(
                message.contains(&format!("({} channels)", layout.num_channels()))
                    && message.contains(&format!("{} in / {} out", bus.inputs, bus.outputs)),
                "{message}"
            );
        }
        assert!(matches!(
            map(IrLayout::Mono, bus(65, 65)),
            Err(IrError::MatrixSize { .. })
        ));
    }

    #[test]
    fn the_dry_signal_goes_where_the_source_is() {
        let dry =
            |inputs, outputs, format, output| dry_source(Bus::new(inputs, outputs, format), output);
        let auto = ChannelFormat::Auto;
        assert_eq!(dry(2, 2, auto, 1), Dry::Input(1));
        assert_eq!(dry(1, 2, auto, 1), Dry::Input(0));
        assert_eq!(dry(2, 1, auto, 0), Dry::Mid);
        assert_eq!(dry(12, 12, auto, 3), Dry::Input(3));
        assert_eq!(dry(1, 12, auto, 1), Dry::Input(0));
        assert_eq!(dry(1, 12, auto, 2), Dry::None);
        assert_eq!(dry(2, 6, auto, 1), Dry::Input(1));
        assert_eq!(dry(2, 6, auto, 4), Dry::None);
        let ambisonics = ChannelFormat::Ambisonics;
        assert_eq!(dry(2, 4, ambisonics, 0), Dry::Mid);
        assert_eq!(dry(2, 4, ambisonics, 1), Dry::None);
        assert_eq!(dry(1, 9, auto, 0), Dry::Input(0));
        assert_eq!(dry(1, 9, auto, 1), Dry::None);
    }

    #[test]
    fn the_budget_counts_path_seconds_and_bytes() {
        assert!(check_budget(256, 4 * 48_000, 48_000).is_ok());
        let message = check_budget(4096, 48_000, 48_000).unwrap_err().to_string();
        assert!(
            message.starts_with("4096 paths of this IR are 4096 path-seconds"),
            "{message}"
        );
        // Bytes bind at high rates: 1024 path-seconds at 192 kHz is 1.6 GB.
        assert!(check_budget(256, 4 * 192_000, 192_000).is_err());
    }
}
