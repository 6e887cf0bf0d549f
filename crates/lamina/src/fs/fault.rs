//! Fault-injecting wrapper.

/// Fault-injecting file system (to be implemented).
#[derive(Debug)]
pub struct FaultFs;
/// Controls which faults fire.
#[derive(Debug)]
pub struct Faults;
/// Kind of operation a fault applies to.
#[derive(Debug)]
pub enum FaultKind {}
