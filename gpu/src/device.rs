//! Adapter choice and device opening.
//!
//! Preference: a discrete GPU, then an integrated one, then a virtual one. A CPU adapter (Mesa's
//! lavapipe, SwiftShader) computes correctly but slower than our own CPU code, so it is taken
//! only when asked for ([`OpenOptions::allow_cpu_adapter`], or `LONGTAIL_GPU_ALLOW_CPU=1` in
//! the environment): the tests do that to run every kernel without a GPU.
//!
//! The device is opened with the adapter's own limits (the IR spectra of many long IRs need
//! storage buffers far above WebGPU's defaults), and errors are captured instead of panicking:
//! wgpu's default handler for an uncaptured error panics, which must never take a host down.
//!
//! On Linux the Vulkan instance enables no window-system extension (see
//! `WINDOW_SYSTEM_EXTENSIONS`), so that looking for an adapter inside a host neither prints to
//! the host's stderr nor connects to its display server.

use std::sync::{Arc, Mutex, OnceLock};

use crate::GpuError;
use crate::fft_kernels::FftKernels;

/// Environment variable that lets a CPU adapter be chosen (`1`).
pub const ALLOW_CPU_ENV: &str = "LONGTAIL_GPU_ALLOW_CPU";
/// Environment variable (`1`) that makes a missing adapter fail the test suites instead of
/// skipping their GPU tests: CI sets it, as it installs Mesa's lavapipe.
pub const REQUIRE_ENV: &str = "LONGTAIL_REQUIRE_GPU";

/// For test suites: whether an adapter (lavapipe included) is there to run GPU tests on. Says
/// on stderr that the caller skips when there is none, and panics instead when
/// [`REQUIRE_ENV`] is `1`.
pub fn available_for_tests() -> bool {
    let found = !list_adapters().is_empty();
    if !found {
        assert!(
            std::env::var(REQUIRE_ENV).as_deref() != Ok("1"),
            "{REQUIRE_ENV}=1 but no Vulkan/Metal/DX12 adapter was found (install mesa-vulkan-drivers)"
        );
        eprintln!("skipped: no GPU adapter (set {REQUIRE_ENV}=1 to make this a failure)");
    }
    found
}

/// What kind of adapter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum AdapterKind {
    /// A discrete GPU.
    Discrete,
    /// A GPU sharing memory with the CPU.
    Integrated,
    /// A virtualised GPU.
    Virtual,
    /// A software rasteriser on the CPU (lavapipe).
    Cpu,
    /// Unknown.
    Other,
}

impl AdapterKind {
    fn from_wgpu(kind: wgpu::DeviceType) -> Self {
        match kind {
            wgpu::DeviceType::DiscreteGpu => Self::Discrete,
            wgpu::DeviceType::IntegratedGpu => Self::Integrated,
            wgpu::DeviceType::VirtualGpu => Self::Virtual,
            wgpu::DeviceType::Cpu => Self::Cpu,
            wgpu::DeviceType::Other => Self::Other,
        }
    }

    /// Lower is preferred.
    fn rank(self) -> u8 {
        match self {
            Self::Discrete => 0,
            Self::Integrated => 1,
            Self::Virtual => 2,
            Self::Other => 3,
            Self::Cpu => 4,
        }
    }

    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Discrete => "discrete",
            Self::Integrated => "integrated",
            Self::Virtual => "virtual",
            Self::Cpu => "cpu",
            Self::Other => "other",
        }
    }
}

/// One adapter, in plain words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdapterSummary {
    /// The adapter's name (e.g. "NVIDIA H100 80GB HBM3", "llvmpipe (LLVM 15.0.6, 256 bits)").
    pub name: String,
    /// Graphics API: "Vulkan", "Metal", "Dx12".
    pub backend: String,
    /// Kind of adapter.
    pub kind: AdapterKind,
    /// Driver and its version, where the API tells.
    pub driver: String,
}

impl AdapterSummary {
    fn from_wgpu(adapter: &wgpu::Adapter) -> Self {
        let info = adapter.get_info();
        let driver = [info.driver.as_str(), info.driver_info.as_str()]
            .iter()
            .filter(|s| !s.is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join(" ");
        Self {
            name: info.name,
            backend: format!("{:?}", info.backend),
            kind: AdapterKind::from_wgpu(info.device_type),
            driver,
        }
    }
}

impl std::fmt::Display for AdapterSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}, {})", self.name, self.backend, self.kind.name())
    }
}

/// How to open the GPU.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OpenOptions {
    /// Accept a CPU adapter (lavapipe) when no GPU is found.
    pub allow_cpu_adapter: bool,
    /// The FFT kernels (tiled where the device has the workgroup memory, by default).
    pub kernels: FftKernels,
}

impl OpenOptions {
    /// The defaults, with `LONGTAIL_GPU_ALLOW_CPU=1` and `LONGTAIL_GPU_KERNELS` honoured.
    pub fn from_env() -> Self {
        Self {
            allow_cpu_adapter: std::env::var(ALLOW_CPU_ENV).is_ok_and(|v| v == "1"),
            kernels: std::env::var(KERNELS_ENV)
                .ok()
                .and_then(|v| FftKernels::parse(&v))
                .unwrap_or_default(),
        }
    }
}

/// Environment variable naming the FFT kernels: `radix2`, `tiled` or `tiled:TILE` (anything
/// else: the default). For comparing them on one machine; the default is the faster.
pub const KERNELS_ENV: &str = "LONGTAIL_GPU_KERNELS";

/// Window-system extensions wgpu enables on Linux and the BSDs when the driver offers them.
///
/// Longtail's instance leaves them out. Mesa's device-selection layer (an implicit Vulkan layer
/// the loader puts into every instance, `VK_LAYER_MESA_device_select`) looks for the display
/// server of each window system an instance enabled when the adapters are enumerated: for
/// Wayland it calls `wl_display_connect`, which prints `error: XDG_RUNTIME_DIR is invalid or
/// not set in the environment.` to the host's stderr where that variable is unset (a plain
/// shell, CI, some hosts' audio engines), and for X11 it connects to `$DISPLAY`. We compute and
/// never present, so we enable none of them.
#[cfg(any(target_os = "linux", target_os = "freebsd"))]
const WINDOW_SYSTEM_EXTENSIONS: [&std::ffi::CStr; 3] = [
    c"VK_KHR_xlib_surface",
    c"VK_KHR_xcb_surface",
    c"VK_KHR_wayland_surface",
];

/// The instance every adapter of this crate comes from (its kernel tests use it too): one for
/// the process, created on first use and never destroyed.
///
/// NVIDIA's Vulkan driver corrupts its heap or crashes when instances are created and
/// destroyed on several threads at once (wgpu issue 5930; seen here on an H100 with driver
/// 580, in the GPU tests and in the fault test's hub reopening its device), so nothing in this
/// process makes a second one. Devices are opened one at a time for the same reason (see
/// [`one_at_a_time`]).
pub fn instance() -> wgpu::Instance {
    static INSTANCE: OnceLock<wgpu::Instance> = OnceLock::new();
    INSTANCE.get_or_init(new_instance).clone()
}

/// Runs `open` while no other thread of this process enumerates adapters or opens a device
/// through this crate: NVIDIA's driver races when devices are created concurrently (wgpu issue
/// 10234). The convolver opens its device under it; the kernel tests open theirs under it.
pub fn one_at_a_time<T>(open: impl FnOnce() -> T) -> T {
    static OPENING: Mutex<()> = Mutex::new(());
    // A panic while opening poisons nothing that matters: the guard protects no data.
    let _guard = OPENING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    open()
}

/// On Linux a Vulkan instance without `WINDOW_SYSTEM_EXTENSIONS`, and without a Vulkan loader
/// one with no adapter (as wgpu's own would be).
#[cfg(any(target_os = "linux", target_os = "freebsd"))]
fn new_instance() -> wgpu::Instance {
    use wgpu::hal::vulkan;
    let descriptor = wgpu::hal::InstanceDescriptor {
        name: "longtail",
        flags: wgpu::InstanceFlags::default(),
        memory_budget_thresholds: wgpu::MemoryBudgetThresholds::default(),
        backend_options: wgpu::BackendOptions::default(),
        telemetry: None,
        display: None,
    };
    let callback: Box<vulkan::CreateInstanceCallback> =
        Box::new(|args: vulkan::CreateInstanceCallbackArgs| {
            args.extensions
                .retain(|name| !WINDOW_SYSTEM_EXTENSIONS.contains(name));
        });
    // SAFETY: the descriptor is wgpu's default one. The callback only takes the window-system
    // extensions out of the list, where wgpu-hal's callback contract asks to only add: wgpu-hal
    // reads those three from the list solely to create a surface of their kind, and refuses
    // that with an error when the extension is not in the list. This instance creates no
    // surface (it never leaves this module).
    let hal = unsafe { vulkan::Instance::init_with_callback(&descriptor, Some(callback)) };
    match hal {
        // SAFETY: a Vulkan instance wgpu-hal has just created, handed over whole.
        Ok(hal) => unsafe { wgpu::Instance::from_hal::<wgpu::hal::api::Vulkan>(hal) },
        Err(_) => wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle()),
    }
}

/// Vulkan, Metal and DX12, as the platform offers.
#[cfg(not(any(target_os = "linux", target_os = "freebsd")))]
fn new_instance() -> wgpu::Instance {
    let mut descriptor = wgpu::InstanceDescriptor::new_without_display_handle();
    descriptor.backends = wgpu::Backends::VULKAN | wgpu::Backends::METAL | wgpu::Backends::DX12;
    wgpu::Instance::new(descriptor)
}

/// Every adapter that can run compute kernels, preferred first.
pub fn list_adapters() -> Vec<AdapterSummary> {
    one_at_a_time(usable_adapters)
        .iter()
        .map(AdapterSummary::from_wgpu)
        .collect()
}

/// The instance's adapters that can run compute kernels, preferred first. Call it under
/// [`one_at_a_time`].
fn usable_adapters() -> Vec<wgpu::Adapter> {
    let mut adapters: Vec<wgpu::Adapter> =
        pollster::block_on(instance().enumerate_adapters(wgpu::Backends::all()))
            .into_iter()
            .filter(usable)
            .collect();
    adapters.sort_by_key(|a| AdapterKind::from_wgpu(a.get_info().device_type).rank());
    adapters
}

fn usable(adapter: &wgpu::Adapter) -> bool {
    adapter
        .get_downlevel_capabilities()
        .flags
        .contains(wgpu::DownlevelFlags::COMPUTE_SHADERS)
}

/// Errors the device reported since the last check (validation, out of memory, loss).
#[derive(Debug, Clone, Default)]
pub(crate) struct ErrorSink(Arc<Mutex<Option<String>>>);

impl ErrorSink {
    fn record(&self, message: String) {
        if let Ok(mut slot) = self.0.lock()
            && slot.is_none()
        {
            *slot = Some(message);
        }
    }

    /// The first error recorded, if any (it stays recorded: a device with an error is done).
    pub(crate) fn error(&self) -> Option<String> {
        self.0.lock().ok().and_then(|slot| slot.clone())
    }
}

/// An open device with its queue.
pub(crate) struct OpenDevice {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub summary: AdapterSummary,
    pub limits: wgpu::Limits,
    pub errors: ErrorSink,
}

/// Opens the preferred adapter's device.
pub(crate) fn open(options: OpenOptions) -> Result<OpenDevice, GpuError> {
    one_at_a_time(|| open_now(options))
}

fn open_now(options: OpenOptions) -> Result<OpenDevice, GpuError> {
    let adapters = usable_adapters();
    let found: Vec<String> = adapters
        .iter()
        .map(|a| AdapterSummary::from_wgpu(a).to_string())
        .collect();
    let adapter = adapters
        .into_iter()
        .find(|a| {
            options.allow_cpu_adapter
                || AdapterKind::from_wgpu(a.get_info().device_type) != AdapterKind::Cpu
        })
        .ok_or_else(|| {
            GpuError::NoAdapter(if found.is_empty() {
                "no Vulkan, Metal or DX12 adapter with compute shaders".into()
            } else {
                format!(
                    "only CPU adapters ({}); set {ALLOW_CPU_ENV}=1 to use them",
                    found.join(", ")
                )
            })
        })?;
    let summary = AdapterSummary::from_wgpu(&adapter);
    let limits = adapter.limits();
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("longtail"),
        // Timestamps, where the adapter has them, time a period on the GPU for the benchmark.
        required_features: adapter.features() & wgpu::Features::TIMESTAMP_QUERY,
        required_limits: limits.clone(),
        memory_hints: wgpu::MemoryHints::Performance,
        ..Default::default()
    }))
    .map_err(|err| GpuError::Device(format!("{summary}: {err}")))?;
    let errors = ErrorSink::default();
    let sink = errors.clone();
    device.on_uncaptured_error(Arc::new(move |error: wgpu::Error| {
        sink.record(error.to_string());
    }));
    let sink = errors.clone();
    device.set_device_lost_callback(move |reason, message| {
        sink.record(format!("device lost ({reason:?}): {message}"));
    });
    Ok(OpenDevice {
        device,
        queue,
        summary,
        limits,
        errors,
    })
}
