//! Host pacing for `longtail-cli bench`: how the measuring thread releases blocks ([`Pace`],
//! as the hosts Longtail meets do: real time, a bounce, anticipative processing, split periods),
//! the clock that releases them (`Pacer`), and the offline render a `--check` run is compared
//! with (`OfflineRender`).

use std::time::{Duration, Instant};

use crate::engine::{Engine, EngineConfig, EngineError};
use crate::ir::Ir;

/// How the measuring thread releases blocks, as the hosts Longtail meets do.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pace {
    /// Back to back, engines in offline mode (they wait for their workers): a bounce the plugin
    /// is told about.
    Offline,
    /// Each block at its real-time deadline.
    Realtime,
    /// Back to back in real-time mode: a bounce the plugin is not told about.
    Fast,
    /// Anticipative processing: `starts` times, evenly spread over the run, the host stops for
    /// [`AHEAD_PAUSE`], then renders `seconds` ahead of real time as fast as it can and keeps
    /// that lead at real-time pace (REAPER, Bitwig).
    Ahead { seconds: f64, starts: u32 },
    /// One device period of `period` samples split into calls of the block size, delivered back
    /// to back, each period at its deadline (automation splitting, sub-blocks). The engines
    /// are told the period as the largest block, as such a host tells the plugin.
    Split { period: usize },
}

/// How long an [`Pace::Ahead`] host stops before each start.
pub const AHEAD_PAUSE: Duration = Duration::from_millis(250);

impl Pace {
    /// Whether the engines run in real-time mode (results not ready when due are dropped).
    pub fn realtime_mode(self) -> bool {
        self != Self::Offline
    }

    /// `offline`, `realtime`, `fast`, `ahead:SECONDSxSTARTS` or `split:PERIOD`.
    pub fn name(self) -> String {
        match self {
            Self::Offline => "offline".into(),
            Self::Realtime => "realtime".into(),
            Self::Fast => "fast".into(),
            Self::Ahead { seconds, starts } => format!("ahead:{seconds}x{starts}"),
            Self::Split { period } => format!("split:{period}"),
        }
    }

    /// Parses what [`Self::name`] writes (`ahead:SECONDS` means one start).
    pub fn parse(text: &str) -> Result<Self, String> {
        let bad = || {
            format!(
                "'{text}' is not a pace: use offline, realtime, fast, ahead:SECONDS[xSTARTS] \
                 (0 to 10 s, 1 to 100 starts) or split:PERIOD (samples)"
            )
        };
        match text {
            "offline" => Ok(Self::Offline),
            "realtime" => Ok(Self::Realtime),
            "fast" => Ok(Self::Fast),
            _ => {
                if let Some(rest) = text.strip_prefix("ahead:") {
                    let (seconds, starts) = rest.split_once('x').unwrap_or((rest, "1"));
                    let seconds: f64 = seconds.parse().map_err(|_| bad())?;
                    let starts: u32 = starts.parse().map_err(|_| bad())?;
                    if !(0.0..=10.0).contains(&seconds) || !(1..=100).contains(&starts) {
                        return Err(bad());
                    }
                    Ok(Self::Ahead { seconds, starts })
                } else if let Some(period) = text.strip_prefix("split:") {
                    let period: usize = period.parse().map_err(|_| bad())?;
                    if !(1..=1 << 20).contains(&period) {
                        return Err(bad());
                    }
                    Ok(Self::Split { period })
                } else {
                    Err(bad())
                }
            }
        }
    }
}

/// Releases blocks at the times a [`Pace`] gives.
pub(super) struct Pacer {
    pace: Pace,
    rate: f64,
    /// The host's clock: frame `anchor_frame` is due at `anchor`.
    anchor: Instant,
    anchor_frame: usize,
    /// Frames per [`Pace::Ahead`] segment (one start each).
    segment_frames: usize,
}

impl Pacer {
    pub(super) fn new(pace: Pace, rate: u32, num_frames: usize, start: Instant) -> Self {
        let segment_frames = match pace {
            Pace::Ahead { starts, .. } => num_frames.div_ceil(starts as usize).max(1),
            _ => usize::MAX,
        };
        Self {
            pace,
            rate: f64::from(rate),
            anchor: start,
            anchor_frame: 0,
            segment_frames,
        }
    }

    /// Before the call that starts at `frame`: an [`Pace::Ahead`] host stops and starts again
    /// at each segment's first frame.
    pub(super) fn before(&mut self, frame: usize) {
        if frame > 0 && frame.is_multiple_of(self.segment_frames) && frame != self.anchor_frame {
            std::thread::sleep(AHEAD_PAUSE);
            self.anchor = Instant::now();
            self.anchor_frame = frame;
        }
    }

    /// After a call: waits until the call that starts at `frame` is due.
    pub(super) fn after(&self, frame: usize) {
        let due_in = |frames: usize, lead: f64| {
            let seconds = (frames - self.anchor_frame) as f64 / self.rate - lead;
            self.anchor + Duration::from_secs_f64(seconds.max(0.0))
        };
        let due = match self.pace {
            Pace::Offline | Pace::Fast => return,
            Pace::Realtime => due_in(frame, 0.0),
            Pace::Ahead { seconds, .. } => {
                if frame.is_multiple_of(self.segment_frames) {
                    return;
                }
                due_in(frame, seconds)
            }
            Pace::Split { period } => due_in(frame - frame % period, 0.0),
        };
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
    }
}

/// The offline render a `--check` run is compared with: a fresh engine in offline mode, the
/// same input in the same blocks.
pub(super) struct OfflineRender<'a> {
    pub(super) ir: &'a Ir,
    pub(super) input: &'a [Vec<f32>],
    pub(super) config: EngineConfig,
    pub(super) phase: u64,
    pub(super) block: usize,
    pub(super) num_frames: usize,
}

impl OfflineRender<'_> {
    /// `output` against this render, in dB (300 when identical).
    pub(super) fn snr_db(&self, output: &[Vec<f32>]) -> Result<f64, EngineError> {
        let mut engine = Engine::new(self.ir, self.config)?;
        engine.set_stagger(self.phase);
        engine.set_offline(true);
        let mut scratch = vec![vec![0.0f32; self.block]; self.config.num_outputs];
        let (mut signal, mut noise) = (0.0f64, 0.0f64);
        for start in (0..self.num_frames).step_by(self.block) {
            let len = self.block.min(self.num_frames - start);
            let inputs: Vec<&[f32]> = self.input.iter().map(|c| &c[start..start + len]).collect();
            let mut outputs: Vec<&mut [f32]> = scratch.iter_mut().map(|c| &mut c[..len]).collect();
            engine.process(&inputs, &mut outputs);
            for (reference, played) in scratch.iter().zip(output) {
                for (&r, &p) in reference[..len].iter().zip(&played[start..start + len]) {
                    signal += f64::from(r) * f64::from(r);
                    noise += (f64::from(r) - f64::from(p)).powi(2);
                }
            }
        }
        Ok(if noise == 0.0 {
            300.0
        } else {
            (10.0 * (signal / noise).log10()).min(300.0)
        })
    }
}
