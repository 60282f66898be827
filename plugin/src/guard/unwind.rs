//! Host calls that fail soft: a panic in our code is caught where the host called in and
//! becomes a logged message, pass-through, silence or no editor, never an unwind into nice-plug's
//! `extern "C"` functions (which aborts the host).
//!
//! Where it is used, and what a caught panic becomes:
//!
//! - `activate()`: the dry signal passes through, and the editor says why;
//! - `process()` and `reset()`: silence until the next activation, and the editor says so
//!   ([`crate::audio::monitor::EngineMonitor::faulted`]);
//! - `deactivate()`: logged;
//! - `editor()`: no editor; the editor window's open: an error to nice-plug, which tells the
//!   host it failed; its close: logged;
//! - loading the project's IR file from the state: the current IR stays, with a status message.
//!
//! On the audio thread [`catch_quietly`] neither logs nor frees: the panic's payload (allocated
//! by the panic itself) is leaked, a few bytes once. Debug and test builds abort on that
//! allocation anyway (nice-plug's `assert_process_allocs`), so there a panic in `process()`
//! stays the loud failure it should be in a test.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Runs `f`; where it panics, returns the panic's message. Not on the audio thread (the message
/// is allocated).
pub fn catch<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|payload| message(&*payload))
}

/// Runs `f`; where it panics, returns `None` without allocating, freeing or logging: for the
/// audio thread.
pub fn catch_quietly<T>(f: impl FnOnce() -> T) -> Option<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(value) => Some(value),
        Err(payload) => {
            // Freeing it here would free on the audio thread.
            std::mem::forget(payload);
            None
        }
    }
}

/// A panic payload's text: the message of `panic!` with a literal or a format.
pub fn message(payload: &(dyn Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic without a message".to_owned()
    }
}

/// Runs `f` with the panic hook silenced (the default one would print each panic into a test's
/// output), one such test at a time, and restores the hook after: for tests that panic on
/// purpose.
#[cfg(test)]
pub(crate) fn without_panic_hook<T>(f: impl FnOnce() -> T) -> T {
    static HOOK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one_at_a_time = HOOK.lock().unwrap_or_else(|p| p.into_inner());
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let result = f();
    std::panic::set_hook(previous);
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_its_message_or_none() {
        without_panic_hook(|| {
            assert_eq!(catch(|| 7), Ok(7));
            assert_eq!(
                catch(|| -> u8 { panic!("the IR at {} broke", 3) }),
                Err("the IR at 3 broke".to_owned())
            );
            assert_eq!(
                catch(|| -> u8 { panic!("literal") }),
                Err("literal".to_owned())
            );
            assert_eq!(
                catch(|| std::panic::panic_any(5u32)),
                Err("a panic without a message".to_owned())
            );
            assert_eq!(catch_quietly(|| 7), Some(7));
            let v: Vec<u8> = Vec::new();
            assert_eq!(catch_quietly(|| v[3]), None);
        });
    }
}
