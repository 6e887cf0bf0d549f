//! A value found by a lookup, read from its blob file only when asked.

use super::file::BlobFile;
use super::hot::{HotValues, Kept};
use super::pointer::BlobPointer;
use super::reader::check_buffer;
use crate::error::Result;
use std::mem::MaybeUninit;
use std::sync::Arc;

/// A value returned by [`crate::Db::get_lazy`]: either in memory, or a value
/// in a blob file that is read (and its checksum verified) straight into the
/// buffer the caller provides, so a large value is copied once at most.
///
/// It holds the blob file open: the value stays readable even if a later
/// compaction removes the file. Thread-safe; may be read any number of times.
pub struct LazyValue(Repr);

enum Repr {
    Inline(Vec<u8>),
    /// A blob value kept in memory, verified when it was read.
    Hot(Kept),
    Blob {
        file: Arc<BlobFile>,
        pointer: BlobPointer,
        /// Offered each value read, to keep the ones read again.
        hot: Arc<HotValues>,
    },
}

impl LazyValue {
    /// A value already in memory.
    pub fn inline(v: Vec<u8>) -> LazyValue {
        LazyValue(Repr::Inline(v))
    }

    pub(crate) fn blob(
        file: Arc<BlobFile>,
        pointer: BlobPointer,
        hot: Arc<HotValues>,
    ) -> LazyValue {
        LazyValue(Repr::Blob { file, pointer, hot })
    }

    pub(crate) fn hot(v: Kept) -> LazyValue {
        LazyValue(Repr::Hot(v))
    }

    /// The object a blob value kept in memory is held in (a copy the
    /// engine made, or the object a reader offered with
    /// [`LazyValue::keep`]); `None` for any other value.
    pub fn kept(&self) -> Option<&Kept> {
        match &self.0 {
            Repr::Hot(v) => Some(v),
            _ => None,
        }
    }

    /// The value's bytes when they are already in memory (a value stored
    /// in the tree, or a blob value kept once verified): reading them
    /// cannot wait for the disk.
    pub fn in_memory(&self) -> Option<&[u8]> {
        match &self.0 {
            Repr::Inline(v) => Some(v),
            Repr::Hot(v) => Some(v.bytes()),
            Repr::Blob { .. } => None,
        }
    }

    /// Length of the value in bytes.
    pub fn len(&self) -> usize {
        match &self.0 {
            Repr::Blob { pointer, .. } => pointer.len as usize,
            _ => self.in_memory().map_or(0, <[u8]>::len),
        }
    }

    /// True for an empty value.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True when the value lives in a blob file (and is read by `read_into`).
    pub fn is_separated(&self) -> bool {
        matches!(self.0, Repr::Blob { .. } | Repr::Hot(_))
    }

    /// Copies the value into `buf`, which must be exactly [`len`](Self::len)
    /// bytes. A blob value is copied into `buf` once (from the file's mapping,
    /// or with one positional read where the file system cannot map) and its
    /// checksum verified: on `Corruption` (naming the blob file and offset)
    /// `buf`'s contents must not be used. A value read more than once may
    /// be copied from memory instead, where it was kept once verified.
    pub fn read_into(&self, buf: &mut [u8]) -> Result<()> {
        if let Repr::Blob { file, pointer, hot } = &self.0 {
            file.read_into(pointer, buf)?;
            hot.offer(pointer, buf);
            return Ok(());
        }
        let v = self.in_memory().unwrap_or_default();
        check_buffer(buf.len(), v.len())?;
        buf.copy_from_slice(v);
        Ok(())
    }

    /// [`LazyValue::read_into`] a buffer not yet initialised (such as a
    /// new Python `bytes` object's), which must be exactly
    /// [`len`](Self::len) bytes: the value is copied in once, with no
    /// zeroing before. Returns the buffer, initialised.
    pub fn read_into_uninit<'b>(&self, buf: &'b mut [MaybeUninit<u8>]) -> Result<&'b [u8]> {
        let value = self.read_into_uninit_unkept(buf)?;
        if let Repr::Blob { pointer, hot, .. } = &self.0 {
            hot.offer(pointer, value);
        }
        Ok(value)
    }

    /// [`LazyValue::read_into_uninit`], except that the value read is not
    /// offered to the values kept in memory: the caller may offer the
    /// object it read it into with [`LazyValue::keep`].
    pub fn read_into_uninit_unkept<'b>(&self, buf: &'b mut [MaybeUninit<u8>]) -> Result<&'b [u8]> {
        if let Repr::Blob { file, pointer, .. } = &self.0 {
            return file.read_into_uninit(pointer, buf);
        }
        let v = self.in_memory().unwrap_or_default();
        check_buffer(buf.len(), v.len())?;
        Ok(buf.write_copy_of_slice(v))
    }

    /// Offers the object `make` gives, which holds this blob value as read
    /// (verified) by [`LazyValue::read_into_uninit_unkept`], to be kept in
    /// memory in its stead: made and kept on the value's second read, as a
    /// copy would be, and handed back by later lookups ([`LazyValue::kept`]).
    /// Does nothing for a value not read from a blob file.
    pub fn keep(&self, make: impl FnOnce() -> Kept) {
        if let Repr::Blob { pointer, hot, .. } = &self.0 {
            hot.offer_with(pointer, pointer.len as usize, make);
        }
    }

    /// The value as an owned vector.
    pub fn into_vec(self) -> Result<Vec<u8>> {
        match self.0 {
            Repr::Inline(v) => Ok(v),
            Repr::Hot(v) => Ok(v.bytes().to_vec()),
            Repr::Blob { file, pointer, hot } => {
                let mut v = vec![0u8; pointer.len as usize];
                file.read_into(&pointer, &mut v)?;
                hot.offer(&pointer, &v);
                Ok(v)
            }
        }
    }
}

impl std::fmt::Debug for LazyValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Repr::Inline(v) => f.debug_tuple("Inline").field(&v.len()).finish(),
            Repr::Hot(v) => f.debug_tuple("Hot").field(&v.bytes().len()).finish(),
            Repr::Blob { file, pointer, .. } => f
                .debug_struct("Blob")
                .field("path", &file.path())
                .field("pointer", pointer)
                .finish(),
        }
    }
}
