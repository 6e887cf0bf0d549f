//! A window of a file mapped shared for writing, so that a write is a copy
//! into the operating system's page cache with no system call (`memmap2`).
//!
//! This module allows `unsafe` for one call, the mapping itself. Mapping a
//! file is unsafe because the bytes behind it may change or vanish under
//! the process: if the file is truncated below the window, touching the
//! window kills the process (`SIGBUS`). lamina maps only WAL segments it
//! is writing, while it holds the database's `LOCK` (no other writer), and
//! never truncates or shortens a file it has mapped: a segment only grows
//! (docs/format.md#recyclable-segments-version-3), and it is created,
//! reused or removed only after its writer, and so its window, is gone.
#![allow(unsafe_code)]

use memmap2::{MmapMut, MmapOptions};
use std::fs::File;
use std::io;

/// The bytes `start..start + len` of a file, mapped shared and writable.
pub(super) struct WriteMap {
    map: MmapMut,
    start: u64,
}

impl WriteMap {
    /// Maps `file`'s bytes `from..to`, their pages faulted in ahead.
    /// REQUIRES: `to` is at most the file's length, and the file is not
    /// truncated below `to` while the map lives (see the module doc).
    pub(super) fn new(file: &File, from: u64, to: u64) -> io::Result<WriteMap> {
        let len = usize::try_from(to.saturating_sub(from))
            .map_err(|_| io::Error::other("mapped window too large"))?;
        if len == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "cannot map an empty window",
            ));
        }
        // SAFETY: the caller keeps the file at least `to` bytes long while
        // the map lives, and only this process writes it (module doc); the
        // bytes are only ever copied in, never referenced.
        let map = unsafe {
            MmapOptions::new()
                .offset(from)
                .len(len)
                .populate()
                .map_mut(file)?
        };
        Ok(WriteMap { map, start: from })
    }

    /// Copies `data` to the file's `offset`; `false` (nothing copied) if the
    /// range is not inside the window.
    pub(super) fn write(&mut self, offset: u64, data: &[u8]) -> bool {
        let Some(at) = offset
            .checked_sub(self.start)
            .and_then(|at| usize::try_from(at).ok())
        else {
            return false;
        };
        match self.map.get_mut(at..at.saturating_add(data.len())) {
            Some(dst) => {
                dst.copy_from_slice(data);
                true
            }
            None => false,
        }
    }
}
