//! The SDK instruments of ours, on the gym meter: what only the SDK holds.
//!
//! | file | what it holds |
//! |---|---|
//! | `verify.rs` | the verify counters and success rate, observed from the recording core |
//! | `process.rs` | this process's resource use, as the `process.*` conventions |
//! | `memory.rs` | NeMo Gym's memory gauges, from the orchestrator's profiler |
//! | `metrics_bridge/` | the `metrics` crate bridged into the SDK (feature `metrics-bridge`) |

pub(crate) mod memory;
#[cfg(feature = "metrics-bridge")]
pub(crate) mod metrics_bridge;
pub(crate) mod process;
pub(crate) mod verify;
