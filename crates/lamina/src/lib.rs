//! lamina: an embedded, ordered, crash-safe key-value store built on a
//! log-structured merge tree.

pub mod cache;
pub mod coding;
mod error;
pub mod fs;
pub mod iter;
pub mod key;
pub mod merge;
mod options;
pub mod table;

pub use error::{Error, Result};
pub use options::{Compression, Durability, Options};
