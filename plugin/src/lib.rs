pub mod engine;
pub mod ir;
pub mod rng;
