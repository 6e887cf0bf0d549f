//! The value half of flushes and compactions: large values go to a new blob
//! file, pointers are copied (or moved out of files being collected), and the
//! pointers dropped on the way are counted as dead bytes.

use super::pointer::BlobPointer;
use super::store::BlobStore;
use super::writer::BlobWriter;
use super::BlobMeta;
use crate::error::{Error, Result};
use crate::fs::FileSystem;
use crate::key::Kind;
use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

/// Routes the values of one flush or compaction. Not thread-safe; one per run.
pub struct Separator {
    fs: Arc<dyn FileSystem>,
    dir: PathBuf,
    store: Arc<BlobStore>,
    /// Values at least this long are written to a blob file.
    threshold: usize,
    /// A new blob file is started once the current one holds this many bytes.
    target_size: u64,
    /// Blob files whose live values this run moves.
    collect: HashSet<u64>,
    writer: Option<BlobWriter>,
    /// Finished (synced) blob files written by this run.
    written: Vec<BlobMeta>,
    /// Value bytes of the pointers read, and of the pointers written, per blob file.
    read: BTreeMap<u64, u64>,
    kept: BTreeMap<u64, u64>,
    /// Value bytes moved out of files being collected.
    moved: u64,
}

impl Separator {
    /// A separator writing values of `threshold` bytes or more to new blob files
    /// in `dir`, moving the live values of the files in `collect`.
    pub fn new(
        fs: Arc<dyn FileSystem>,
        dir: PathBuf,
        store: Arc<BlobStore>,
        threshold: usize,
        target_size: u64,
        collect: HashSet<u64>,
    ) -> Separator {
        Separator {
            fs,
            dir,
            store,
            threshold,
            target_size,
            collect,
            writer: None,
            written: Vec::new(),
            read: BTreeMap::new(),
            kept: BTreeMap::new(),
            moved: 0,
        }
    }

    /// Counts an input entry of kind 3 (every pointer read, kept or not).
    pub fn note_input(&mut self, value: &[u8]) -> Result<()> {
        let p = BlobStore::pointer(&self.dir, value)?;
        *self.read.entry(p.file).or_default() += u64::from(p.len);
        Ok(())
    }

    /// The kind and value to write for a surviving entry, or `None` to write it
    /// as it is. `new_file_number` allocates a number for a new blob file.
    pub fn route(
        &mut self,
        tree_key: &[u8],
        kind: Kind,
        value: &[u8],
        new_file_number: &mut dyn FnMut() -> u64,
    ) -> Result<Option<(Kind, Vec<u8>)>> {
        match kind {
            Kind::Put if value.len() >= self.threshold => {
                let p = self.append(tree_key, value, new_file_number)?;
                Ok(Some((Kind::Blob, p.encode())))
            }
            Kind::Blob => {
                let p = BlobStore::pointer(&self.dir, value)?;
                if !self.collect.contains(&p.file) {
                    *self.kept.entry(p.file).or_default() += u64::from(p.len);
                    return Ok(None);
                }
                let v = self.store.read(&p)?;
                self.moved += v.len() as u64;
                let moved = self.append(tree_key, &v, new_file_number)?;
                Ok(Some((Kind::Blob, moved.encode())))
            }
            _ => Ok(None),
        }
    }

    fn append(
        &mut self,
        tree_key: &[u8],
        value: &[u8],
        new_file_number: &mut dyn FnMut() -> u64,
    ) -> Result<BlobPointer> {
        if self
            .writer
            .as_ref()
            .is_some_and(|w| w.records() > 0 && w.bytes() >= self.target_size)
        {
            self.finish_current()?;
        }
        let w = match self.writer.as_mut() {
            Some(w) => w,
            None => self.writer.insert(BlobWriter::create(
                self.fs.as_ref(),
                &self.dir,
                new_file_number(),
            )?),
        };
        let p = w.add(tree_key, value)?;
        *self.kept.entry(p.file).or_default() += u64::from(p.len);
        Ok(p)
    }

    fn finish_current(&mut self) -> Result<()> {
        if let Some(w) = self.writer.take() {
            self.written.push(w.finish()?);
        }
        Ok(())
    }

    /// Finishes and syncs the blob file being written. Call once the tables
    /// are written; the files are then ready to be named in the manifest.
    pub fn finish(&mut self) -> Result<()> {
        self.finish_current()
    }

    /// Removes every blob file this run wrote (the run failed).
    pub fn abandon(&mut self) {
        let mut doomed: Vec<PathBuf> = self
            .written
            .drain(..)
            .map(|m| crate::filename::path(&self.dir, crate::filename::FileKind::Blob, m.number))
            .collect();
        if let Some(w) = self.writer.take() {
            doomed.push(w.path().to_path_buf());
        }
        for p in doomed {
            let _ = self.fs.remove_file(&p);
        }
    }

    /// What the run did, once it is finished.
    pub fn output(&mut self) -> Result<super::BlobOutput> {
        Ok(super::BlobOutput {
            dead: self.dead()?,
            written: std::mem::take(&mut self.written),
            moved: self.moved,
        })
    }

    /// Value bytes that died in this run, per existing blob file: those of the
    /// pointers read and not written again.
    fn dead(&self) -> Result<BTreeMap<u64, u64>> {
        let mut out = BTreeMap::new();
        for (&file, &read) in &self.read {
            let kept = self.kept.get(&file).copied().unwrap_or(0);
            let dead = read.checked_sub(kept).ok_or_else(|| {
                Error::corruption(
                    crate::filename::path(&self.dir, crate::filename::FileKind::Blob, file),
                    0,
                    "a compaction wrote more pointers into a blob file than it read",
                )
            })?;
            if dead > 0 {
                out.insert(file, dead);
            }
        }
        Ok(out)
    }
}
