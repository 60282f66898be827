//! The contexts of a host of our own that drives the plugin in process, as nice-plug's
//! wrappers do (`longtail-cli soak`, and the tests' hosts): no events, the plugin's tasks (its
//! fences) run at once, latency changes and restart requests recorded. Uses only the plugin.

use std::cell::Cell;

use nice_plug::context::process::SendEventError;
use nice_plug::prelude::*;

use crate::Longtail;
use crate::guard::fence::Task;

/// The process and activate context.
pub struct HostContext {
    /// The API the plugin is told it runs in (CLAP sleeps it on a quiet input; VST3 marks its
    /// fence).
    pub api: PluginApi,
    /// The transport every call reports (no tempo).
    pub transport: Transport,
    /// Latency the plugin reported last, in samples.
    pub latency_samples: Cell<u32>,
    /// Whether the plugin asked for a restart since the host last took the request.
    pub restart_requested: Cell<bool>,
    /// Tasks the plugin has run through this context.
    pub tasks_run: Cell<usize>,
}

impl HostContext {
    /// A context at `rate` in `api`.
    pub fn new(api: PluginApi, rate: u32) -> Self {
        Self {
            api,
            transport: Transport::new(rate as f32),
            latency_samples: Cell::new(0),
            restart_requested: Cell::new(false),
            tasks_run: Cell::new(0),
        }
    }

    /// One call of `plugin.process()` on two channels in place (`left` and `right`, of the same
    /// length), with no auxiliary buses, as the wrappers make it. `around` makes the call (a
    /// test wraps it in `assert_no_alloc`: the buffer is set up, which allocates, outside it).
    pub fn process_stereo(
        &mut self,
        plugin: &mut Longtail,
        (left, right): (&mut [f32], &mut [f32]),
        around: impl FnOnce(&mut dyn FnMut() -> ProcessStatus) -> ProcessStatus,
    ) -> ProcessStatus {
        let mut buffer = Buffer::default();
        // SAFETY: both slices outlive `buffer`, which is dropped before they are used again,
        // and hold `left.len()` samples each.
        unsafe {
            buffer.set_slices(left.len(), |slices| {
                slices.clear();
                slices.push(left);
                slices.push(right);
            });
        }
        let mut aux = AuxiliaryBuffers {
            inputs: &mut [],
            outputs: &mut [],
        };
        around(&mut || plugin.process(&mut buffer, &mut aux, self))
    }

    fn run(&self, task: Task) {
        self.tasks_run.set(self.tasks_run.get() + 1);
        task.run();
    }
}

impl ProcessContext<Longtail> for HostContext {
    fn plugin_api(&self) -> PluginApi {
        self.api
    }

    fn execute_background(&self, task: Task) {
        self.run(task);
    }

    fn execute_gui(&self, task: Task) {
        self.run(task);
    }

    fn transport(&self) -> &Transport {
        &self.transport
    }

    fn next_event(&mut self) -> Option<PluginNoteEvent<Longtail>> {
        None
    }

    fn try_send_event(
        &mut self,
        event: PluginNoteEvent<Longtail>,
    ) -> Result<(), (PluginNoteEvent<Longtail>, SendEventError)> {
        Err((event, SendEventError::NoOutputBuffer))
    }

    fn set_latency_samples(&self, samples: u32) {
        self.latency_samples.set(samples);
    }

    fn request_restart(&self) {
        self.restart_requested.set(true);
    }

    fn set_current_voice_capacity(&self, _capacity: u32) {}
}

impl ActivateContext<Longtail> for HostContext {
    fn plugin_api(&self) -> PluginApi {
        self.api
    }

    fn execute(&self, task: Task) {
        self.run(task);
    }

    fn set_latency_samples(&self, samples: u32) {
        self.latency_samples.set(samples);
    }

    fn set_current_voice_capacity(&self, _capacity: u32) {}
}
