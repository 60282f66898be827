//! The command line's tools, not the plugin: what `longtail-cli` runs besides rendering.
//!
//! - [`bench`](mod@bench): engines driven block by block like a host, measured (`longtail-cli bench`),
//!   at every host pacing (its `pace` part) and checked against the offline render,
//! - [`soak`]: hours of audio through the plugin as a host drives it (`longtail-cli soak`),
//! - [`status`]: what this machine offers and what Longtail would do (`longtail-cli status`),
//! - [`demo`]: the built-in dry signal of `longtail-cli demo`,
//! - [`resources`]: this process's memory, file descriptors (handles on Windows) and threads
//!   (`bench` and `soak`);
//! - [`host_context`]: the contexts of a host of our own that drives the plugin in process
//!   (`soak`, and the tests' hosts).
//!
//! Their JSON reports are written by `serde_json`.
//!
//! Tools use the library (the plugin, the engine, IRs, the thermal probes), never the other
//! way round: nothing else in the library names this folder. The four tools do not use one
//! another; what two of them share lives in `resources`, which uses nothing of the
//! crate, or `host_context`, which uses only the plugin. They are public only so that `longtail-cli` and the tests (which soak the plugin and
//! sample resources as the CLI does) reach them as `longtail::tools::soak` and so on.
//! [`crate::render`] is not here: it is the library's offline render, shared by the CLI, the
//! demo and the tests.

pub mod bench;
pub mod demo;
pub mod host_context;
pub mod resources;
pub mod soak;
pub mod status;
