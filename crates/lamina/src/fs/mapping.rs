//! A window of a file mapped shared for writing, so that a write is a copy
//! into the operating system's page cache with no system call (`memmap2`).
//!
//! This module allows `unsafe` for one call, the mapping itself. Mapping a
//! file is unsafe because the bytes behind it may change or vanish under
//! the process: if the file is truncated below the window, touching the
//! window kills the process (`SIGBUS`). lamina maps only WAL segments it
//! is writing, while it holds the database's `LOCK` (no other writer), and
//! never truncates or shortens a file it has mapped: a segment only grows
//! (docs/format.md#recyclable-segments), and it is created,
//! reused or removed only after its writer, and so its window, is gone.
#![allow(unsafe_code)]

use memmap2::{MmapMut, MmapOptions};
use std::fs::File;
use std::io;

/// Bytes of a window made writable at once, ahead of the copies: the pages
/// of a shared file mapping start write-protected, so that the kernel sees
/// each page's first write (a fault, then the file system's page-mkwrite);
/// `MADV_POPULATE_WRITE` does that work for 16 pages in one system call
/// instead of a fault per page (sequential puts from Python ran 14% faster:
/// `bench/point_loops.py fill sequential`; 16 KiB and 256 KiB at once did
/// no better than 64 KiB). It
/// dirties pages the copies will write next anyway, at most this far past
/// the last record.
const AHEAD: usize = 64 << 10;

/// The bytes `start..start + len` of a file, mapped shared and writable.
pub(super) struct WriteMap {
    map: MmapMut,
    start: u64,
    /// The window's first `ready` bytes are mapped writable.
    ready: usize,
}

impl WriteMap {
    /// Maps `file`'s bytes `from..to`; their pages are made writable as the
    /// copies reach them, [`AHEAD`] bytes at a time.
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
        let map = unsafe { MmapOptions::new().offset(from).len(len).map_mut(file)? };
        Ok(WriteMap {
            map,
            start: from,
            ready: 0,
        })
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
        let end = at.saturating_add(data.len());
        if end > self.ready && end <= self.map.len() {
            let upto = end.saturating_add(AHEAD).min(self.map.len());
            // Advisory: where the kernel refuses, the copy faults the pages in.
            let _ = self.map.advise_range(
                memmap2::Advice::PopulateWrite,
                self.ready,
                upto - self.ready,
            );
            self.ready = upto;
        }
        match self.map.get_mut(at..end) {
            Some(dst) => {
                dst.copy_from_slice(data);
                true
            }
            None => false,
        }
    }
}
