//! Which FFT kernels a device gets: the choice ([`FftKernels`], from the options a device is
//! opened with or `LONGTAIL_GPU_KERNELS`) and the tile it gives for the device's workgroup
//! memory. Kept apart from the kernels themselves (`convolver::kernels`), so the device
//! options and the convolver both read it without depending on each other.

/// Largest tile (complex points in a workgroup's buffer) the tiled kernels use: 64 KiB of
/// workgroup memory.
pub const MAX_TILE: u32 = 8192;
/// Smallest tile for the tiled kernels (2 KiB of workgroup memory): with less, the radix-2
/// kernels run.
pub const MIN_TILE: u32 = 256;
/// Bytes of workgroup memory per point of a tile (one `vec2<f32>`).
pub const TILE_POINT_BYTES: u32 = 8;

/// Which FFT kernels a convolver runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum FftKernels {
    /// The tiled kernels with the largest tile the device's workgroup memory holds (up to
    /// [`MAX_TILE`]), else radix-2.
    #[default]
    Auto,
    /// One dispatch per radix-2 stage.
    Radix2,
    /// The tiled kernels with this tile (a power of two from [`MIN_TILE`] to [`MAX_TILE`],
    /// capped by the device's workgroup memory), for tests and benchmarks.
    Tiled(u32),
}

impl FftKernels {
    /// `radix2`, `tiled` (the default) or `tiled:TILE`.
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim() {
            "radix2" => Some(Self::Radix2),
            "tiled" | "auto" => Some(Self::Auto),
            other => {
                let tile = other.strip_prefix("tiled:")?.parse().ok()?;
                Some(Self::Tiled(tile))
            }
        }
    }

    /// The tile for a device whose workgroups have `workgroup_bytes` of memory, or `None` for
    /// the radix-2 kernels.
    pub fn tile(self, workgroup_bytes: u32) -> Option<u32> {
        let fits = (workgroup_bytes / TILE_POINT_BYTES).min(MAX_TILE);
        let fits = if fits == 0 { 0 } else { 1 << fits.ilog2() };
        let tile = match self {
            Self::Auto => fits,
            Self::Radix2 => return None,
            Self::Tiled(tile) => tile.min(fits),
        };
        (tile >= MIN_TILE && tile.is_power_of_two()).then_some(tile)
    }
}
