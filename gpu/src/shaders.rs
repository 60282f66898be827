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

/// The FFTs in workgroup memory, with the window, post-pass and overlap-save fused in (entry
/// points `forward_whole`, `inverse_whole`, `forward_columns`, `forward_rows`,
/// `inverse_columns`, `inverse_rows`). Its workgroup buffer's size is set per device: compile
/// [`tiled_source`], not this source alone.
pub const FFT_TILED: Kernel = kernel!("fft_tiled");
/// The spectral multiply-accumulate fused with the inverse real-FFT pre-pass.
pub const MAC_PRE: Kernel = kernel!("mac_pre");

/// [`FFT_TILED`]'s source for a workgroup buffer of `tile` complex points (a power of two; the
/// kernels use `8 * tile` bytes of workgroup memory).
pub fn tiled_source(tile: u32) -> String {
    format!("const TILE: u32 = {tile}u;\n{}", FFT_TILED.source)
}

/// Every kernel with a `main` entry point (the radix-2 path's kernels and [`MAC_PRE`]).
pub const ALL: [Kernel; 8] = [
    WINDOW,
    HISTORY,
    FFT_STOCKHAM,
    FDL_UPDATE,
    SPECTRAL_MAC,
    C2R_PRE,
    OVERLAP_SAVE,
    MAC_PRE,
];
