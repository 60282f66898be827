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
use crate::preparer::{IrSource, Prepared, Preparer, Request, Slot};

/// What an engine is built from, besides the activation's configuration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct EngineKey {
    pub(crate) source: IrSource,
    pub(crate) edits: EditSettings,
    pub(crate) latency_mode: LatencyMode,
    pub(crate) executor: Executor,
    pub(crate) format: ChannelFormat,
}

/// One IR slot's engine keys: what plays, what is being built, what failed, and how long the
/// settings have stayed put.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SlotKeys {
    /// What the slot's playing engine was built from; `None`: none plays.
    pub(crate) current: Option<EngineKey>,
    /// What the preparation thread is building, if anything.
    pub(crate) pending: Option<EngineKey>,
    /// A key the preparation thread could not build; not asked again until the settings change.
    pub(crate) failed: Option<EngineKey>,
    /// The settings seen in the last block: edit changes wait for [`EDIT_DEBOUNCE_MS`] of
    /// stillness before a rebuild.
    pub(crate) last_desired: Option<EngineKey>,
    /// Samples processed since `last_desired` last changed.
    pub(crate) stable_samples: usize,
}

impl SlotKeys {
    /// A slot whose engine, built from `key`, plays.
    pub(crate) fn playing(key: Option<EngineKey>) -> Self {
        Self {
            current: key,
            last_desired: key,
            ..Self::default()
        }
    }

    /// Counts how long `desired` has stayed put, over a block of `num_frames`.
    fn observe(&mut self, desired: Option<EngineKey>, num_frames: usize) {
        if desired == self.last_desired {
            self.stable_samples = self.stable_samples.saturating_add(num_frames);
        } else {
            self.last_desired = desired;
            self.stable_samples = 0;
        }
    }

    /// Whether to ask for `desired` now: it is not what plays, nor what failed, nothing is
    /// being built, and where only the edits changed (a knob), they have rested `debounce`
    /// samples.
    fn wants(&self, desired: EngineKey, debounce: usize) -> bool {
        let only_edits_changed = self.current.is_some_and(|current| {
            desired.source == current.source
                && desired.latency_mode == current.latency_mode
                && desired.format == current.format
        });
        let settled = !only_edits_changed || self.stable_samples >= debounce;
        Some(desired) != self.current
            && Some(desired) != self.failed
            && settled
            && self.pending.is_none()
    }
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
    /// The first IR's engine keys.
    pub(crate) a: SlotKeys,
    /// The second IR's (slot B, blended in), where one is chosen.
    pub(crate) b: SlotKeys,
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
    /// Per-sample blend (the second IR's share) of the current block.
    pub(crate) blend_buffer: Vec<f32>,
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

    /// Exchanges engines with the preparation thread for both slots: `desired` for the first
    /// IR, `desired_b` for the second (`None`: Off, and a parked second engine goes back to be
    /// dropped). Audio thread; never allocates or waits.
    pub(crate) fn service_preparer(
        &mut self,
        preparer: &mut Preparer,
        (desired, desired_b): (EngineKey, Option<EngineKey>),
        generation: u64,
        stagger_idx: Option<u64>,
        num_frames: usize,
    ) {
        self.a.observe(Some(desired), num_frames);
        self.b.observe(desired_b, num_frames);
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
        if desired_b.is_none()
            && self.retire_backlog.is_none()
            && let Some(engine) = self.processor.take_parked_second()
        {
            self.b = SlotKeys::playing(None);
            self.retire(preparer, engine);
        }
        while self.retire_backlog.is_none() {
            let Some(prepared) = preparer.take_ready() else {
                break;
            };
            self.take_prepared(preparer, prepared, generation);
        }
        for (slot, desired) in [(Slot::A, Some(desired)), (Slot::B, desired_b)] {
            let Some(desired) = desired else { continue };
            let keys = match slot {
                Slot::A => &self.a,
                Slot::B => &self.b,
            };
            if !keys.wants(desired, self.debounce_samples) || self.retire_backlog.is_some() {
                continue;
            }
            let request = Request {
                slot,
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
                match slot {
                    Slot::A => self.a.pending = Some(desired),
                    Slot::B => self.b.pending = Some(desired),
                }
            }
        }
    }

    /// Takes one answer of the preparation thread: the engine its slot waits for crossfades in;
    /// anything else goes back to be dropped.
    fn take_prepared(&mut self, preparer: &mut Preparer, prepared: Prepared, generation: u64) {
        let slot = prepared.request.slot;
        let key = EngineKey {
            source: prepared.request.source,
            edits: prepared.request.edits,
            latency_mode: prepared.request.config.latency_mode,
            executor: prepared.request.config.executor,
            format: prepared.request.format,
        };
        let current_generation = prepared.request.generation == generation;
        let keys = match slot {
            Slot::A => &mut self.a,
            Slot::B => &mut self.b,
        };
        let awaited = current_generation && Some(key) == keys.pending;
        if current_generation {
            // The answer ends the request either way, so the next block may ask again.
            keys.pending = None;
        }
        match prepared.engine {
            Some(engine) if awaited => {
                keys.current = Some(key);
                let outgoing = match slot {
                    Slot::A => {
                        // The engine this activation plays now, so a restart keeps it.
                        self.config = prepared.request.config;
                        self.processor.begin_swap(engine)
                    }
                    Slot::B => self.processor.begin_swap_second(engine),
                };
                if let Some(outgoing) = outgoing {
                    self.retire(preparer, outgoing);
                }
            }
            // Could not be built: keep playing, and do not ask again for these settings.
            None if awaited => keys.failed = Some(key),
            // An answer for an older activation, or for a request this activation no longer
            // waits for: dropped off the audio thread.
            engine => {
                if let Some(engine) = engine {
                    self.retire(preparer, engine);
                }
            }
        }
    }
}
