//! In-memory file system that can simulate a crash.

/// In-memory file system (to be implemented).
#[derive(Debug, Default, Clone)]
pub struct MemFs;
