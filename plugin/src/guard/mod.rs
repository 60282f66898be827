//! What keeps a fault of ours, or of nice-plug's, from taking the host down.
//!
//! nice-plug calls the plugin from `extern "C"` functions with no `catch_unwind`: a panic in any
//! host call aborts the host, and so does one in nice-plug's own code (see the "Known issues in
//! dependencies" of `docs/plugin.md`). Two parts:
//!
//! - [`fence`]: `deactivate()` drains the instance's tasks from nice-plug's shared task thread,
//!   so that the host's release of the instance cannot leave a stale task there (which ends the
//!   thread and makes the last release abort the host);
//! - [`unwind`]: the host's calls into our code catch a panic and fail soft (pass-through,
//!   silence, no editor, a status message) instead of unwinding into the host.

pub mod fence;
pub mod unwind;

#[cfg(test)]
mod tests;
