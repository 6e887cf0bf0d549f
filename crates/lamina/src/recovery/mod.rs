//! The recovery subsystem: opening a database — its identity and lock, the
//! manifest, WAL replay with its checks (`open`) — and the view a read-only
//! handle chooses and refreshes beside a live writer (`reader`); and
//! salvage, which reads a damaged database's files one by one without
//! opening it (`salvage`, public as `lamina::salvage`).

mod open;
mod reader;
mod replay;
pub mod salvage;

pub(crate) use open::{destroy, open};
pub(crate) use reader::{writer_is_live, ReaderState};
pub(crate) use replay::tear_ends_log;
