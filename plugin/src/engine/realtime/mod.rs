//! What every thread that convolves asks of the OS and of the host: floats without denormals,
//! a real-time priority, and the time the host leaves before a result is due.
//!
//! Uses nothing of the engine; the audio thread, the workers, the GPU hub's thread and the
//! command line's loops use it.
//!
//! # Parts
//!
//! - [`denormals`]: the scope that flushes denormal floats to zero, on every thread that
//!   convolves.
//! - [`priority`]: real-time scheduling for the worker threads and the GPU hub's, below the
//!   hosts' audio threads.
//! - [`pace`]: how far ahead of real time the host runs, and so how long a call may wait.

pub mod denormals;
pub mod pace;
pub mod priority;
