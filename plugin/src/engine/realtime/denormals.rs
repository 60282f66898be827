//! Flush-to-zero and denormals-are-zero for threads nice-plug does not manage (the CLI's render
//! loop, the preparation thread, future workers). Inside `process()` nice-plug already sets
//! them (feature `unsafe_flush_denormals`).
//!
//! Denormal floats appear in every decaying reverb tail and make x86 arithmetic up to a hundred
//! times slower; treating them as zero changes the output by less than 1e-38.

/// Sets FTZ/DAZ on the current thread until dropped, then restores the previous mode.
#[derive(Debug)]
pub struct ScopedFtz {
    #[cfg_attr(
        not(any(target_arch = "x86_64", target_arch = "aarch64")),
        expect(dead_code, reason = "no FTZ control on this architecture")
    )]
    previous: u64,
}

#[cfg(target_arch = "x86_64")]
mod arch {
    /// MXCSR bits: flush-to-zero (15) and denormals-are-zero (6).
    const FTZ_DAZ: u32 = (1 << 15) | (1 << 6);

    pub fn enable() -> u64 {
        let mut csr: u32 = 0;
        // SAFETY: `stmxcsr` stores the SSE control register to the given valid address.
        unsafe { std::arch::asm!("stmxcsr [{}]", in(reg) &mut csr, options(nostack)) };
        let new = csr | FTZ_DAZ;
        // SAFETY: only the FTZ and DAZ bits change, which affect float results, not safety.
        unsafe { std::arch::asm!("ldmxcsr [{}]", in(reg) &new, options(nostack)) };
        u64::from(csr)
    }

    pub fn restore(previous: u64) {
        let csr = previous as u32;
        // SAFETY: restores the value read by `enable()` on this thread.
        unsafe { std::arch::asm!("ldmxcsr [{}]", in(reg) &csr, options(nostack)) };
    }
}

#[cfg(target_arch = "aarch64")]
mod arch {
    /// FPCR bit 24: flush-to-zero.
    const FZ: u64 = 1 << 24;

    pub fn enable() -> u64 {
        let fpcr: u64;
        // SAFETY: reading FPCR has no side effects.
        unsafe { std::arch::asm!("mrs {}, fpcr", out(reg) fpcr, options(nomem, nostack)) };
        // SAFETY: only the FZ bit changes, which affects float results, not safety.
        unsafe { std::arch::asm!("msr fpcr, {}", in(reg) fpcr | FZ, options(nomem, nostack)) };
        fpcr
    }

    pub fn restore(previous: u64) {
        // SAFETY: restores the value read by `enable()` on this thread.
        unsafe { std::arch::asm!("msr fpcr, {}", in(reg) previous, options(nomem, nostack)) };
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
mod arch {
    pub fn enable() -> u64 {
        0
    }
    pub fn restore(_previous: u64) {}
}

impl ScopedFtz {
    /// Enables flush-to-zero on this thread. No allocation, no system call.
    pub fn enable() -> Self {
        Self {
            previous: arch::enable(),
        }
    }
}

impl Drop for ScopedFtz {
    fn drop(&mut self) {
        arch::restore(self.previous);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    fn denormals_flush_inside_the_scope_only() {
        let tiny = std::hint::black_box(f32::MIN_POSITIVE);
        let half = std::hint::black_box(0.5f32);
        {
            let _ftz = ScopedFtz::enable();
            assert_eq!(std::hint::black_box(tiny * half), 0.0);
        }
        assert!(std::hint::black_box(tiny * half) > 0.0);
    }
}
