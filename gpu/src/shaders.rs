//! The WGSL sources, each kernel with the shared prelude (`shaders/common.wgsl`) in front.

/// A compute kernel: its name and full source.
#[derive(Debug, Clone, Copy)]
pub struct Kernel {
    /// File stem under `shaders/`.
    pub name: &'static str,
    /// The prelude and the kernel.
    pub source: &'static str,
}

macro_rules! kernel {
    ($name:literal) => {
        Kernel {
            name: $name,
            source: concat!(
                include_str!("../shaders/common.wgsl"),
                include_str!(concat!("../shaders/", $name, ".wgsl"))
            ),
        }
    };
}

/// Builds each overlap-save window from the history and the uploaded chunk.
pub const WINDOW: Kernel = kernel!("window");
/// Makes the uploaded chunk the history.
pub const HISTORY: Kernel = kernel!("history");
/// One radix-2 Stockham stage, forward or inverse.
pub const FFT_STOCKHAM: Kernel = kernel!("fft_stockham");
/// The real-FFT post-pass into the frequency-domain delay line.
pub const FDL_UPDATE: Kernel = kernel!("fdl_update");
/// The spectral multiply-accumulate.
pub const SPECTRAL_MAC: Kernel = kernel!("spectral_mac");
/// The inverse real-FFT pre-pass.
pub const C2R_PRE: Kernel = kernel!("c2r_pre");
/// The overlap-save output.
pub const OVERLAP_SAVE: Kernel = kernel!("overlap_save");

/// Every kernel.
pub const ALL: [Kernel; 7] = [
    WINDOW,
    HISTORY,
    FFT_STOCKHAM,
    FDL_UPDATE,
    SPECTRAL_MAC,
    C2R_PRE,
    OVERLAP_SAVE,
];
