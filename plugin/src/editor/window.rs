//! The editor as nice-plug sees it: nice-plug-egui's editor, whose window, once closed, ends the
//! threads the editor's state started (`super::WindowThreads`: the IR preview, the file
//! requests, the thermal monitor).
//!
//! Why here: a host closes the editor (CLAP's `gui.destroy`, VST3's `removed`), destroys the
//! instance and may unload the library at once. nice-plug drops the editor's state with the
//! plugin, and when a task of its own still holds the plugin at that moment, it does so later,
//! on its background thread; a preview thread joined only then would still run while the host
//! unloads. Dropping the window is the one step a host always takes first, and it happens on the
//! host's GUI thread after the window's own thread has ended, so no job can start after it.
//!
//! Opening and closing catch a panic (`crate::guard::unwind`): a failed open is an error to the
//! host, a failed close a logged message. Both park nice-plug's shared task thread meanwhile
//! ([`QueueHold`]). Everything else is passed through to nice-plug-egui
//! unchanged. Generic over the app, so this file needs nothing of the editor's.

use std::error::Error;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nice_plug::context::gui::GuiContext;
use nice_plug::editor::dpi::NativeSize;
use nice_plug::editor::{
    EditorHandle, HostMethods, Modifiers, ParentWindowHandle, ResizeHint, SpawnedEditor,
    VirtualKeyCode,
};
use nice_plug::plugin::TrackInfo;
use nice_plug::prelude::PluginApi;
use nice_plug_egui::{EguiEditor, EguiEditorHandle, NiceEguiApp};

use crate::guard::fence::{HOLD_LIMIT, Hold, TaskFence};

/// The egui window's type.
type EguiWindow = <EguiEditorHandle as EditorHandle>::Window;

/// What a window calls once it has closed.
pub type OnClosed = Arc<dyn Fn() + Send + Sync>;

/// How long opening or closing the window waits for nice-plug's task thread to reach its hold
/// (it first runs the tasks queued before).
const HOLD_WAIT: Duration = Duration::from_millis(500);

/// The plugin's editor: an [`EguiEditor`], and what its windows call once closed.
pub struct Editor<A: NiceEguiApp> {
    egui: EguiEditor<A>,
    on_closed: OnClosed,
    queue: Arc<QueueHold>,
}

impl<A: NiceEguiApp> Editor<A> {
    /// The editor; with `fence`, opening and closing its window hold nice-plug's task thread
    /// (see [`QueueHold`]).
    pub(super) fn new(
        egui: EguiEditor<A>,
        on_closed: OnClosed,
        fence: Option<Arc<TaskFence>>,
    ) -> Self {
        Self {
            egui,
            on_closed,
            queue: Arc::new(QueueHold {
                fence,
                hold: Mutex::new(None),
                open: AtomicBool::new(false),
            }),
        }
    }
}

/// Keeps nice-plug's shared task thread parked while nice-plug opens or closes the window.
///
/// nice-plug's VST3 wrapper keeps the open window in an `AtomicRefCell`, borrowed mutably on the
/// host's GUI thread for the whole of `attached()` (our `spawn` and `show`) and `removed()` (our
/// window's drop), and borrowed on its shared task thread by every parameter notice a host's
/// audio thread posts there. The cell panics where a lock would wait: the task thread dies, and
/// the last instance's release then aborts the host. pluginval met it in "Editor Automation",
/// right after "Automation" had posted thousands of notices. So the thread is parked in a task
/// of ours ([`TaskFence::hold`]) from before the mutable borrow to after it:
///
/// - opening: from the host's size query before `attached()` (JUCE and most hosts ask for the
///   size first), or else from `spawn` on, until `show` has returned;
/// - closing: from the start of the window's drop to its end.
///
/// Each hold ends by itself after [`crate::guard::fence::HOLD_LIMIT`].
struct QueueHold {
    fence: Option<Arc<TaskFence>>,
    hold: Mutex<Option<(Hold, Instant)>>,
    /// A window is open.
    open: AtomicBool,
}

impl QueueHold {
    /// Parks the task thread unless a hold that has not expired is in place (VST3 only: the
    /// other wrappers send no editor task to that thread).
    fn take(&self) {
        let Some(fence) = self.fence.as_ref().filter(|fence| fence.is_vst3()) else {
            return;
        };
        let mut slot = self.hold.lock().unwrap_or_else(|p| p.into_inner());
        if slot
            .as_ref()
            .is_some_and(|(_, since)| since.elapsed() < HOLD_LIMIT)
        {
            return;
        }
        *slot = fence.hold(HOLD_WAIT).map(|hold| (hold, Instant::now()));
    }

    /// Lets the task thread go on at once.
    fn release(&self) {
        self.hold.lock().unwrap_or_else(|p| p.into_inner()).take();
    }

    /// Lets the task thread go on once nice-plug has left the call we return into.
    fn release_settled(&self) {
        let hold = self.hold.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some((hold, _)) = hold {
            hold.release_settled();
        }
    }
}

/// An open editor's handle: nice-plug-egui's.
pub struct Handle(EguiEditorHandle);

/// An open editor's window: nice-plug-egui's, and on drop, once that has closed, the call.
pub struct Window {
    egui: Option<EguiWindow>,
    on_closed: OnClosed,
    queue: Arc<QueueHold>,
}

impl Window {
    fn egui(&self) -> &EguiWindow {
        self.egui
            .as_ref()
            .expect("the window is only taken on drop or run_until_closed")
    }
}

impl Drop for Window {
    fn drop(&mut self) {
        // nice-plug holds the window's cell for the whole drop: park its task thread meanwhile.
        self.queue.take();
        // Closes the window and ends its thread (baseview joins it): nothing starts a thread
        // after this. The host's close call: a panic must not unwind into it.
        let egui = self.egui.take();
        if let Err(message) = crate::guard::unwind::catch(|| drop(egui)) {
            nice_plug::nice_error!("Longtail's editor failed while closing: {message}");
        }
        if let Err(message) = crate::guard::unwind::catch(|| (self.on_closed)()) {
            nice_plug::nice_error!("Longtail's editor threads failed to end: {message}");
        }
        self.queue.open.store(false, Relaxed);
        self.queue.release();
    }
}

impl<A: NiceEguiApp> nice_plug::editor::Editor for Editor<A> {
    type Handle = Handle;

    fn spawn(
        &self,
        parent: Option<ParentWindowHandle>,
        wait_for_parent: bool,
        fallback_scale_factor: Option<f64>,
        gui_context: GuiContext,
        host: Option<HostMethods>,
    ) -> Result<SpawnedEditor<Handle>, Box<dyn Error>> {
        // nice-plug holds the window's cell from here until `show` has returned.
        if gui_context.plugin_api() == PluginApi::Vst3
            && let Some(fence) = &self.queue.fence
        {
            fence.mark_vst3();
        }
        self.queue.take();
        self.queue.open.store(true, Relaxed);
        // The host's open call: a panic becomes an error, which nice-plug reports to the host.
        let spawned = crate::guard::unwind::catch(|| {
            self.egui.spawn(
                parent,
                wait_for_parent,
                fallback_scale_factor,
                gui_context,
                host,
            )
        })
        .map_err(|message| format!("the editor failed to open: {message}"))
        .and_then(|spawned| spawned.map_err(|err| err.to_string()));
        let spawned = match spawned {
            Ok(spawned) => spawned,
            Err(message) => {
                self.queue.open.store(false, Relaxed);
                self.queue.release();
                return Err(message.into());
            }
        };
        Ok(SpawnedEditor {
            handle: Handle(spawned.handle),
            window: Window {
                egui: Some(spawned.window),
                on_closed: Arc::clone(&self.on_closed),
                queue: Arc::clone(&self.queue),
            },
        })
    }

    fn size(&self) -> NativeSize<u32> {
        // A host asks for the size before it attaches the window: park nice-plug's task thread
        // now, before nice-plug borrows the window's cell (see `QueueHold`).
        if !self.queue.open.load(Relaxed) {
            self.queue.take();
        }
        self.egui.size()
    }

    fn resize_hint(&self) -> ResizeHint {
        self.egui.resize_hint()
    }

    fn track_info_updated(&self, info: TrackInfo) {
        self.egui.track_info_updated(info);
    }

    unsafe fn assume_standalone_in_process(&self) {
        // SAFETY: the caller's promise, passed on.
        unsafe { self.egui.assume_standalone_in_process() }
    }
}

impl EditorHandle for Handle {
    type Window = Window;
    type Error = <EguiEditorHandle as EditorHandle>::Error;

    fn run_until_closed(mut window: Window) -> Result<(), Self::Error> {
        let egui = window.egui.take().expect("a window is run once");
        let result = EguiEditorHandle::run_until_closed(egui);
        drop(window);
        result
    }

    fn set_parent(&self, parent: ParentWindowHandle, window: &Window) -> Result<(), Self::Error> {
        self.0.set_parent(parent, window.egui())
    }

    fn show(&self, window: &Window) -> Result<(), Self::Error> {
        let shown = self.0.show(window.egui());
        // nice-plug stores the window and lets go of its cell right after this returns.
        window.queue.release_settled();
        shown
    }

    fn hide(&self, window: &Window) -> Result<(), Self::Error> {
        self.0.hide(window.egui())
    }

    fn set_size(&self, new_size: NativeSize<u32>, window: &Window) -> Result<(), Self::Error> {
        self.0.set_size(new_size, window.egui())
    }

    fn host_main_thread_callback(&self, window: &Window) {
        self.0.host_main_thread_callback(window.egui());
    }

    fn adjust_size(&self, new_size: NativeSize<u32>, window: &Window) -> Option<NativeSize<u32>> {
        self.0.adjust_size(new_size, window.egui())
    }

    fn set_fallback_scale_factor(
        &self,
        scale_factor: f64,
        window: &Window,
    ) -> Result<(), Self::Error> {
        self.0
            .set_fallback_scale_factor(scale_factor, window.egui())
    }

    fn on_virtual_key_from_host(
        &self,
        key_code: VirtualKeyCode,
        is_down: bool,
        modifiers: Modifiers,
    ) -> bool {
        self.0
            .on_virtual_key_from_host(key_code, is_down, modifiers)
    }

    fn state_changed(&self) {
        self.0.state_changed();
    }

    fn param_value_changed(&self, id: &str, normalized_value: f32) {
        self.0.param_value_changed(id, normalized_value);
    }

    fn param_modulation_changed(&self, id: &str, modulation_offset: f32) {
        self.0.param_modulation_changed(id, modulation_offset);
    }
}
