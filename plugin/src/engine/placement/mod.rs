//! Where an engine's levels run while it plays: on the GPU or the CPU, decided when the engine
//! is built and moved by the thermal and load policies afterwards.
//!
//! Runs off the audio thread: on the thread that builds an engine, on the governor's, and on
//! the editor's, which reads the probes.
//!
//! # Parts
//!
//! Each part uses only the parts listed before it:
//!
//! - [`gpu_placement`]: which levels the GPU takes (opening the hub, the rules that place a
//!   level there or let it go back), and the CPU's cost it is compared with.
//! - [`load_policy`]: Auto for the whole process: when the big levels of the engines Auto
//!   kept on the CPU go to the GPU (a loaded CPU, a GPU that costs less) and come back.
//! - [`probe`]: what other threads see of an engine ([`BackendProbe`]), and the thermal and
//!   load policies' lever on it; it reads the worker levels' own views.
//! - [`governor`]: the thread that runs the thermal policy per watched engine and the load
//!   policy for all of them, through their probes.
//!
//! [`BackendProbe`]: probe::BackendProbe

pub mod governor;
pub mod gpu_placement;
pub mod load_policy;
pub mod probe;
