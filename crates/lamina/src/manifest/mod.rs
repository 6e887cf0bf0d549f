//! The manifest: the log of version edits that says which tables make up the
//! tree, and the version (the set of live tables) it describes.

mod edit;
mod version;
mod version_set;

pub use edit::{FileMeta, Lifetime, VersionEdit};
pub use version::{Version, NUM_LEVELS};
pub(crate) use version_set::write_manifest;
pub use version_set::VersionSet;
