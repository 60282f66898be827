//! Helper threads that outlive the call that starts them (the editor's IR preview and file
//! requests), and what keeps the library's code mapped if one cannot be joined.
//!
//! A host unloads the plugin library once its last instance and its factory are gone: on
//! removal, on a rescan, in a sandbox. A thread still running the library's code then runs
//! unmapped code and takes the host down. So every thread the library starts is joined before
//! the object that started it is gone: the engine's workers, the GPU hub and its way back, the
//! preparer, the governor (after the last engine) and the thermal monitor each join their own
//! in `Drop`; [`Jobs`] here does the same for one-off work, as soon as its owner knows no more
//! starts (the editor joins its jobs when its window closes, in `editor::window`).
//!
//! A join waits for each thread at most its bound ([`Jobs::spawn`]), so closing an editor never
//! hangs on one (a file dialog waits for the user, for example). A thread still running then
//! is left to finish, and the library is pinned ([`pin_library`]): the host can no longer unmap
//! it, so the thread finishes safely. That costs the host the library's memory until it exits,
//! and happens only when a bound is missed.

use std::sync::mpsc::{Receiver, TryRecvError};
use std::sync::{Mutex, Once};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often a join looks whether its thread has finished.
const JOIN_POLL: Duration = Duration::from_millis(2);

/// The threads of one owner's jobs (the editor's), joined together: by [`Jobs::join_all`]
/// where the owner knows no more jobs start (the editor's window has closed), else on drop.
#[derive(Default)]
pub struct Jobs {
    /// Each job's thread and how long a join waits for it.
    threads: Mutex<Vec<(JoinHandle<()>, Duration)>>,
}

/// One job's result, to poll; its thread belongs to the [`Jobs`] that started it.
pub struct Job<T> {
    result: Receiver<T>,
}

/// What [`Job::poll`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum Poll<T> {
    /// The work's result.
    Ready(T),
    /// Still working.
    Pending,
    /// The thread ended without a result (it panicked).
    Lost,
}

impl Jobs {
    /// Runs `work` on a new thread named `name`. A join waits for it at most `join_bound`, then
    /// pins the library instead. Threads of earlier jobs that have finished are joined here.
    pub fn spawn<T: Send + 'static>(
        &self,
        name: &str,
        join_bound: Duration,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> std::io::Result<Job<T>> {
        let (sender, result) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || {
                let _ = sender.send(work());
            })?;
        let mut threads = self.threads.lock().unwrap_or_else(|p| p.into_inner());
        let (finished, running) = std::mem::take(&mut *threads)
            .into_iter()
            .partition::<Vec<_>, _>(|(thread, _)| thread.is_finished());
        *threads = running;
        threads.push((thread, join_bound));
        drop(threads);
        for (thread, _) in finished {
            let _ = thread.join();
        }
        Ok(Job { result })
    }

    /// Joins every job's thread, each within its bound (see [`join_within`]).
    pub fn join_all(&self) {
        let threads = std::mem::take(&mut *self.threads.lock().unwrap_or_else(|p| p.into_inner()));
        for (thread, bound) in threads {
            join_within(thread, bound);
        }
    }

    /// How many threads have not been joined yet (finished or not).
    pub fn unjoined(&self) -> usize {
        self.threads.lock().unwrap_or_else(|p| p.into_inner()).len()
    }
}

impl Drop for Jobs {
    fn drop(&mut self) {
        self.join_all();
    }
}

impl std::fmt::Debug for Jobs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Jobs")
            .field("unjoined", &self.unjoined())
            .finish()
    }
}

impl<T> Job<T> {
    /// The result once there is one; never blocks.
    pub fn poll(&self) -> Poll<T> {
        match self.result.try_recv() {
            Ok(result) => Poll::Ready(result),
            Err(TryRecvError::Empty) => Poll::Pending,
            Err(TryRecvError::Disconnected) => Poll::Lost,
        }
    }
}

impl<T> std::fmt::Debug for Job<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Job").finish_non_exhaustive()
    }
}

/// The end of a thread the library does not start or join itself (the editor window's, which
/// the windowing library starts): [`ThreadEnd::of_current_thread`] marks it from inside, and
/// [`ThreadEnd::wait`] returns once the thread has run everything but its last steps out of
/// the C library (thread-local destructors run after the thread's function and its drops).
#[derive(Debug)]
pub struct ThreadEnd {
    thread: std::thread::ThreadId,
    ended: Mutex<bool>,
    signal: std::sync::Condvar,
}

/// Marks its [`ThreadEnd`] when its thread's locals are destroyed.
struct EndMark(std::sync::Arc<ThreadEnd>);

impl Drop for EndMark {
    fn drop(&mut self) {
        *self.0.ended.lock().unwrap_or_else(|p| p.into_inner()) = true;
        self.0.signal.notify_all();
    }
}

thread_local! {
    static END_MARK: std::cell::RefCell<Option<EndMark>> = const { std::cell::RefCell::new(None) };
}

impl ThreadEnd {
    /// A latch the calling thread sets as it ends.
    pub fn of_current_thread() -> std::sync::Arc<Self> {
        let end = std::sync::Arc::new(Self {
            thread: std::thread::current().id(),
            ended: Mutex::new(false),
            signal: std::sync::Condvar::new(),
        });
        let mark = EndMark(std::sync::Arc::clone(&end));
        // A thread marked before (a window opened again on the same thread) keeps the newest.
        drop(END_MARK.with(|slot| slot.borrow_mut().replace(mark)));
        end
    }

    /// Waits at most `bound` for the thread to end; returns whether it did. Returns at once
    /// when called from that thread itself (a window that runs on the host's GUI thread, as on
    /// Windows and macOS), which outlives the window.
    pub fn wait(&self, bound: Duration) -> bool {
        if std::thread::current().id() == self.thread {
            return false;
        }
        let ended = self.ended.lock().unwrap_or_else(|p| p.into_inner());
        let (ended, _) = self
            .signal
            .wait_timeout_while(ended, bound, |ended| !*ended)
            .unwrap_or_else(|p| p.into_inner());
        *ended
    }
}

/// Joins `thread` if it finishes within `bound`; else leaves it running and pins the library.
/// Returns whether it was joined.
pub fn join_within(thread: JoinHandle<()>, bound: Duration) -> bool {
    let deadline = Instant::now() + bound;
    while !thread.is_finished() {
        if Instant::now() >= deadline {
            pin_library();
            return false;
        }
        std::thread::sleep(JOIN_POLL);
    }
    let _ = thread.join();
    true
}

/// Keeps this library mapped until the process exits, whatever the host unloads: for a thread
/// that could not be joined. Once per process; harmless where the library is the executable
/// (the standalone, the CLI, the tests).
pub fn pin_library() {
    static PINNED: Once = Once::new();
    PINNED.call_once(|| {
        if !pin() {
            nice_plug::prelude::nice_warn!(
                "a helper thread outlives its instance, and the library could not be pinned"
            );
        }
    });
}

#[cfg(unix)]
fn pin() -> bool {
    // SAFETY: dladdr reads the loader's tables for an address inside this library (a function
    // of it); the name it returns lives as long as the library. dlopen with RTLD_NOLOAD only
    // looks the loaded library up, and RTLD_NODELETE marks it never to be unloaded; the handle
    // it returns is deliberately never closed.
    unsafe {
        let mut info: libc::Dl_info = std::mem::zeroed();
        let here = pin_library as fn() as *const libc::c_void;
        if libc::dladdr(here, &mut info) == 0 || info.dli_fname.is_null() {
            return false;
        }
        !libc::dlopen(
            info.dli_fname,
            libc::RTLD_NOLOAD | libc::RTLD_NODELETE | libc::RTLD_LAZY,
        )
        .is_null()
    }
}

#[cfg(windows)]
fn pin() -> bool {
    use windows_sys::Win32::System::LibraryLoader::{
        GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS, GET_MODULE_HANDLE_EX_FLAG_PIN, GetModuleHandleExW,
    };
    let mut module = std::ptr::null_mut();
    // SAFETY: FROM_ADDRESS takes any address inside the module (a function of it) in place of a
    // name; PIN keeps the module loaded until the process ends. `module` is written only.
    unsafe {
        GetModuleHandleExW(
            GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_PIN,
            pin_library as fn() as *const u16,
            &mut module,
        ) != 0
    }
}

#[cfg(not(any(unix, windows)))]
fn pin() -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wait_for<T>(job: &Job<T>) -> Poll<T> {
        let start = Instant::now();
        loop {
            match job.poll() {
                Poll::Pending => std::thread::sleep(Duration::from_millis(1)),
                done => return done,
            }
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "the job never ended"
            );
        }
    }

    #[test]
    fn a_job_gives_its_result_and_its_thread_is_joined() {
        let jobs = Jobs::default();
        let job = jobs
            .spawn("longtail-test-job", Duration::from_secs(10), || 7)
            .unwrap();
        assert_eq!(wait_for(&job), Poll::Ready(7));
        assert_eq!(jobs.unjoined(), 1);
        // The next spawn joins the finished thread.
        let next = jobs
            .spawn("longtail-test-job", Duration::from_secs(10), || 8)
            .unwrap();
        assert_eq!(jobs.unjoined(), 1);
        assert_eq!(wait_for(&next), Poll::Ready(8));
        jobs.join_all();
        assert_eq!(jobs.unjoined(), 0);
    }

    #[test]
    fn join_all_waits_for_running_threads() {
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = std::sync::Arc::clone(&done);
        let jobs = Jobs::default();
        let _job = jobs
            .spawn("longtail-test-job", Duration::from_secs(10), move || {
                std::thread::sleep(Duration::from_millis(50));
                flag.store(true, std::sync::atomic::Ordering::SeqCst);
            })
            .unwrap();
        jobs.join_all();
        assert!(done.load(std::sync::atomic::Ordering::SeqCst));
        assert_eq!(jobs.unjoined(), 0);
    }

    #[test]
    fn a_thread_past_its_bound_is_left_running() {
        let (release, wait) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            let _ = wait.recv();
        });
        // Pinning is harmless here (the library is this test executable).
        assert!(!join_within(thread, Duration::from_millis(20)));
        let _ = release.send(());
        let thread = std::thread::spawn(|| {});
        assert!(join_within(thread, Duration::from_secs(10)));
    }

    #[test]
    fn a_thread_end_is_seen_after_the_thread_has_run() {
        let (send, receive) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            let end = ThreadEnd::of_current_thread();
            // The thread's own wait returns at once.
            assert!(!end.wait(Duration::from_secs(10)));
            send.send(end).unwrap();
            std::thread::sleep(Duration::from_millis(30));
        });
        let end = receive.recv().unwrap();
        assert!(
            end.wait(Duration::from_secs(10)),
            "the thread's end was not seen"
        );
        assert!(thread.is_finished() || thread.join().is_ok());
    }

    #[test]
    fn a_panicking_job_is_lost() {
        let jobs = Jobs::default();
        let job = jobs
            .spawn("longtail-test-job", Duration::from_secs(10), || -> u32 {
                panic!("on purpose")
            })
            .unwrap();
        assert_eq!(wait_for(&job), Poll::Lost);
    }
}
