//! Compaction: the policy that picks work ([`picker`], a pure function of the
//! version), the per-key rules that decide which entries survive
//! ([`collapse`]), the runner that does the I/O ([`runner`]), and the pace
//! writers keep while compaction is behind ([`pacing`]).

pub mod collapse;
pub mod pacing;
pub mod picker;
pub mod runner;

#[cfg(any(test, feature = "internals"))]
pub use picker::{pick, PickerOptions, Task};
