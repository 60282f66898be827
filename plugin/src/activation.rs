//! One activation's state on the audio thread ([`Active`]): the signal path, what its engine
//! was built from ([`EngineKey`]), and the exchange of engines with the preparation thread
//! ([`Active::service_preparer`]): requests for the engine the parameters ask for, the built
//! engine crossfaded in, the replaced one handed back to be dropped. Never allocates or waits.

use nice_plug::prelude::PluginApi;

use crate::audio::monitor::LoadMeter;
use crate::audio::processor::Processor;
use crate::engine::{Engine, EngineConfig, Executor, LatencyMode};
use crate::ir::edit::EditSettings;
use crate::ir::mapping::ChannelFormat;
use crate::preparer::{IrSource, Preparer, Request};

/// What an engine is built from, besides the activation's configuration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct EngineKey {
    pub(crate) source: IrSource,
    pub(crate) edits: EditSettings,
    pub(crate) latency_mode: LatencyMode,
    pub(crate) executor: Executor,
    pub(crate) format: ChannelFormat,
}

/// State of one activation. Built in `activate()`, used on the audio thread.
pub(crate) struct Active {
    pub(crate) processor: Processor,
    /// Session sample rate, in Hz.
    pub(crate) sample_rate: u32,
    /// Configuration of every engine of this activation (the latency mode comes from the key).
    pub(crate) config: EngineConfig,
    /// Offline rendering (`ProcessMode::Offline`): engines wait for workers, no stagger.
    pub(crate) offline: bool,
    /// What the playing engine was built from.
    pub(crate) current: EngineKey,
    /// What the preparation thread is building, if anything.
    pub(crate) pending: Option<EngineKey>,
    /// A key the preparation thread could not build; not asked again until the settings change.
    pub(crate) failed: Option<EngineKey>,
    /// The settings seen in the last block: edit changes wait for [`EDIT_DEBOUNCE_MS`] of
    /// stillness before a rebuild.
    pub(crate) last_desired: EngineKey,
    /// Samples processed since `last_desired` last changed.
    pub(crate) stable_samples: usize,
    /// [`EDIT_DEBOUNCE_MS`] in samples.
    pub(crate) debounce_samples: usize,
    /// An engine that could not be retired yet (the retire ring was full).
    pub(crate) retire_backlog: Option<Box<Engine>>,
    /// Per-sample mix values of the current block.
    pub(crate) mix_buffer: Vec<f32>,
    /// Per-sample wet width values of the current block.
    pub(crate) width_buffer: Vec<f32>,
    /// Per-sample output gain of the current block.
    pub(crate) gain_buffer: Vec<f32>,
    /// Callback load histogram for the editor.
    pub(crate) load_meter: LoadMeter,
    /// The sidechain has carried a sample in this activation (looked at in the standalone
    /// only, see [`Active::sidechain_keys`]).
    pub(crate) sidechain_fed: bool,
}

impl Active {
    /// Whether the ducking listens to `sidechain` in this block: where the user `chose` the
    /// Sidechain key and there is a sidechain bus, except in the standalone until its sidechain
    /// has carried a sample. Its ALSA backend has no sidechain (nice-plug leaves the buffers
    /// silent), nor has a JACK sidechain port that nothing is connected to, so the input keys
    /// the ducking there. Reads the sidechain until it is fed; never allocates.
    pub(crate) fn sidechain_keys(
        &mut self,
        chosen: bool,
        api: PluginApi,
        sidechain: &[&mut [f32]],
    ) -> bool {
        if !chosen || sidechain.is_empty() {
            return false;
        }
        if api != PluginApi::Standalone {
            return true;
        }
        if !self.sidechain_fed {
            self.sidechain_fed = sidechain
                .iter()
                .any(|channel| channel.iter().any(|&s| s != 0.0));
        }
        self.sidechain_fed
    }

    /// Hands `engine` to the preparation thread to be dropped, or keeps it for a later try.
    pub(crate) fn retire(&mut self, preparer: &mut Preparer, engine: Box<Engine>) {
        if let Err(engine) = preparer.retire(engine) {
            debug_assert!(self.retire_backlog.is_none());
            self.retire_backlog = Some(engine);
        }
    }

    /// Exchanges engines with the preparation thread. Audio thread; never allocates or waits.
    pub(crate) fn service_preparer(
        &mut self,
        preparer: &mut Preparer,
        desired: EngineKey,
        generation: u64,
        stagger_idx: Option<u64>,
        num_frames: usize,
    ) {
        if desired == self.last_desired {
            self.stable_samples = self.stable_samples.saturating_add(num_frames);
        } else {
            self.last_desired = desired;
            self.stable_samples = 0;
        }
        if let Some(engine) = self.retire_backlog.take() {
            self.retire(preparer, engine);
        }
        // Nothing more leaves the processor while an engine waits to be retired: there is one
        // backlog slot, and an engine must never be dropped here.
        if self.retire_backlog.is_none()
            && let Some(engine) = self.processor.take_finished()
        {
            self.retire(preparer, engine);
        }
        while self.retire_backlog.is_none() {
            let Some(prepared) = preparer.take_ready() else {
                break;
            };
            let key = EngineKey {
                source: prepared.request.source,
                edits: prepared.request.edits,
                latency_mode: prepared.request.config.latency_mode,
                executor: prepared.request.config.executor,
                format: prepared.request.format,
            };
            let current_generation = prepared.request.generation == generation;
            match prepared.engine {
                Some(engine) if current_generation && Some(key) == self.pending => {
                    self.pending = None;
                    self.current = key;
                    // The engine this activation plays now, so a restart keeps it.
                    self.config = prepared.request.config;
                    if let Some(outgoing) = self.processor.begin_swap(engine) {
                        self.retire(preparer, outgoing);
                    }
                }
                None if current_generation && Some(key) == self.pending => {
                    // Could not be built: keep playing, and do not ask again for these settings.
                    self.pending = None;
                    self.failed = Some(key);
                }
                engine => {
                    // An answer for an older activation, or for a request this activation no
                    // longer waits for: drop it off the audio thread. A current-generation
                    // answer ends the request either way, so the next block may ask again.
                    if current_generation {
                        self.pending = None;
                    }
                    if let Some(engine) = engine {
                        self.retire(preparer, engine);
                    }
                }
            }
        }
        // Only the edits changed (a knob): wait until they stay put before rebuilding.
        let only_edits_changed = desired.source == self.current.source
            && desired.latency_mode == self.current.latency_mode
            && desired.format == self.current.format;
        let settled = !only_edits_changed || self.stable_samples >= self.debounce_samples;
        if desired != self.current
            && Some(desired) != self.failed
            && settled
            && self.pending.is_none()
            && self.retire_backlog.is_none()
        {
            let request = Request {
                source: desired.source,
                edits: desired.edits,
                sample_rate: self.sample_rate,
                config: EngineConfig {
                    latency_mode: desired.latency_mode,
                    executor: desired.executor,
                    ..self.config
                },
                format: desired.format,
                generation,
                stagger_idx,
            };
            if preparer.request(request) {
                self.pending = Some(desired);
            }
        }
    }
}
