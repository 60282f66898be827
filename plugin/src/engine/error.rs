//! Why an engine could not be built. Uses the routing's channel limit.

use thiserror::Error;

use super::routing::MAX_CHANNELS;

/// Why an engine could not be built.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum EngineError {
    #[error("{num_inputs} in / {num_outputs} out is not supported; 1 to {MAX_CHANNELS} each")]
    UnsupportedChannels {
        num_inputs: usize,
        num_outputs: usize,
    },
    #[error(
        "a {inputs} x {outputs} matrix IR needs {inputs} inputs and {outputs} outputs, \
         not {num_inputs} in / {num_outputs} out"
    )]
    MatrixMismatch {
        inputs: usize,
        outputs: usize,
        num_inputs: usize,
        num_outputs: usize,
    },
    /// The IR cannot play on this bus, or is over the budget ([`crate::ir::mapping`]).
    #[error("{0}")]
    Mapping(String),
    #[error("the IR is empty")]
    EmptyIr,
    #[error("the maximum block size must be at least 1")]
    ZeroBlockSize,
    #[error("cannot start a worker thread: {0}")]
    Thread(String),
}
