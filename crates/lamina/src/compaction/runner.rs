//! Writes the surviving entries of a sorted stream into new tables: the I/O
//! half of both memtable flushes and compactions.

use super::collapse::{collapse, Entry};
use crate::error::{Error, Result};
use crate::filename::{self, FileKind};
use crate::fs::FileSystem;
use crate::iter::InternalIterator;
use crate::key::{self, KeyspaceId, Kind, SeqNo};
use crate::manifest::FileMeta;
use crate::merge::MergeOperator;
use crate::table::{TableBuilder, TableOptions};
use std::iter::Peekable;
use std::path::PathBuf;

/// Everything the writer needs besides the input stream.
pub struct OutputSpec<'a> {
    /// File system.
    pub fs: &'a dyn FileSystem,
    /// Database directory.
    pub dir: PathBuf,
    /// Options of the tables to write.
    pub table: TableOptions,
    /// The database identity written in every table's properties.
    pub identity: u128,
    /// Cut a new table once one reaches this many bytes (only between keys).
    pub target_size: u64,
    /// Live snapshot seqnos, ascending.
    pub snapshots: Vec<SeqNo>,
    /// No older entry of any input key exists outside the stream.
    pub bottommost: bool,
    /// Whether entries of a keyspace are still wanted.
    pub keyspace_live: &'a dyn Fn(KeyspaceId) -> bool,
    /// Folds merge operands.
    pub merge_operator: &'a dyn MergeOperator,
    /// Allocates file numbers for new tables.
    pub new_file_number: &'a mut dyn FnMut() -> u64,
    /// Polled now and then; when it returns true the run stops with
    /// `Error::Closed` and removes what it wrote (the database is closing).
    pub cancelled: &'a dyn Fn() -> bool,
    /// Routes values to blob files and counts the pointers read and written.
    pub blobs: &'a mut crate::blob::Separator,
    /// Tree keys, ascending, before each of which a new table starts: the
    /// first keys of tables the output level keeps (a compaction's
    /// untouched next-level tables), which no output table may span.
    pub cut_before: &'a [Vec<u8>],
}

/// What a run wrote.
#[derive(Debug, Default)]
pub struct Output {
    /// The new tables, synced (their directory entries are not yet synced).
    pub tables: Vec<FileMeta>,
    /// Bytes of entries read from the stream.
    pub bytes_read: u64,
    /// Bytes of table files written.
    pub bytes_written: u64,
    /// Blob files written (synced), dead bytes per existing blob file, and
    /// value bytes moved out of collected files; filled in by the caller.
    pub blobs: crate::blob::BlobOutput,
}

struct Current {
    builder: TableBuilder,
    number: u64,
}

/// Reads `input` from the start and writes what survives into new tables.
/// On error the partial tables are removed.
pub fn write_tables(input: &mut dyn InternalIterator, spec: &mut OutputSpec<'_>) -> Result<Output> {
    let mut out = Output::default();
    let mut cur: Option<Current> = None;
    let result = run(input, spec, &mut out, &mut cur);
    if result.is_err() {
        if let Some(c) = cur.take() {
            drop(c.builder);
            let _ = spec
                .fs
                .remove_file(&filename::path(&spec.dir, FileKind::Table, c.number));
        }
        for t in &out.tables {
            let _ = spec
                .fs
                .remove_file(&filename::path(&spec.dir, FileKind::Table, t.number));
        }
    }
    result.map(|()| out)
}

fn run(
    input: &mut dyn InternalIterator,
    spec: &mut OutputSpec<'_>,
    out: &mut Output,
    cur: &mut Option<Current>,
) -> Result<()> {
    input.seek_to_first();
    let mut entries: Vec<Entry> = Vec::new();
    let mut tree_key: Vec<u8> = Vec::new();
    let mut ikey = Vec::new();
    let mut steps = 0u64;
    let mut fences = spec.cut_before.iter().peekable();
    loop {
        let next_key = read_key(&*input, spec, out)?;
        let same = next_key.is_some_and(|p| p.tree_key == tree_key.as_slice());
        if !same && !entries.is_empty() {
            let kept = keep(&tree_key, &mut entries, spec);
            if !kept.is_empty() {
                write_kept(&tree_key, &kept, spec, out, cur, &mut fences, &mut ikey)?;
            }
        }
        let Some(p) = next_key else { break };
        if !same {
            tree_key.clear();
            tree_key.extend_from_slice(p.tree_key);
        }
        if p.kind == Kind::Blob {
            spec.blobs.note_input(input.value())?;
        }
        if (spec.keyspace_live)(p.keyspace()) {
            entries.push(Entry {
                seqno: p.seqno,
                kind: p.kind,
                value: input.value().to_vec(),
            });
        }
        input.next();
        steps += 1;
        if steps.is_multiple_of(4096) && (spec.cancelled)() {
            return Err(Error::Closed);
        }
    }
    if cur.is_some() {
        finish(cur, out)?;
    }
    Ok(())
}

/// The key `input` is on, parsed, its bytes and its value's counted as
/// read; `None` at the input's end.
fn read_key<'a>(
    input: &'a dyn InternalIterator,
    spec: &OutputSpec<'_>,
    out: &mut Output,
) -> Result<Option<key::Parsed<'a>>> {
    if !input.valid() {
        input.status()?;
        return Ok(None);
    }
    let k = input.key();
    let p = key::parse(k).ok_or_else(|| {
        Error::corruption(
            spec.dir.clone(),
            0,
            format!(
                "malformed internal key in compaction input ({} bytes)",
                k.len()
            ),
        )
    })?;
    out.bytes_read += (k.len() + input.value().len()) as u64;
    Ok(Some(p))
}

/// The entries of `tree_key` the output keeps, taken from `entries`: a
/// lone put as it is, others collapsed.
fn keep(tree_key: &[u8], entries: &mut Vec<Entry>, spec: &OutputSpec<'_>) -> Vec<Entry> {
    if entries.len() == 1 && entries.first().is_some_and(|e| e.kind == Kind::Put) {
        std::mem::take(entries)
    } else {
        collapse(
            tree_key,
            std::mem::take(entries),
            &spec.snapshots,
            spec.bottommost,
            spec.merge_operator,
        )
    }
}

/// Writes `kept`, the entries of `tree_key`, to the table being written:
/// first finishes it where a fence or the target size says, and starts
/// one if none is open. `ikey` is scratch space for the internal keys.
fn write_kept(
    tree_key: &[u8],
    kept: &[Entry],
    spec: &mut OutputSpec<'_>,
    out: &mut Output,
    cur: &mut Option<Current>,
    fences: &mut Peekable<std::slice::Iter<'_, Vec<u8>>>,
    ikey: &mut Vec<u8>,
) -> Result<()> {
    // Past a kept table's first key: the table being written ends before
    // it.
    let mut past_fence = false;
    while fences.next_if(|f| tree_key >= f.as_slice()).is_some() {
        past_fence = true;
    }
    if past_fence
        || cur
            .as_ref()
            .is_some_and(|c| c.builder.estimated_size() >= spec.target_size)
    {
        finish(cur, out)?;
    }
    if cur.is_none() {
        let number = (spec.new_file_number)();
        let path = filename::path(&spec.dir, FileKind::Table, number);
        let file = spec.fs.create(&path).map_err(|e| Error::io(&path, e))?;
        let mut builder = TableBuilder::new(file, path, spec.table);
        builder.set_origin(spec.identity, number);
        *cur = Some(Current { builder, number });
    }
    if let Some(c) = cur.as_mut() {
        for e in kept {
            let routed = spec
                .blobs
                .route(tree_key, e.kind, &e.value, spec.new_file_number)?;
            let (kind, value) = match &routed {
                Some((k, v)) => (*k, v.as_slice()),
                None => (e.kind, e.value.as_slice()),
            };
            ikey.clear();
            ikey.extend_from_slice(tree_key);
            key::push_trailer(ikey, e.seqno, kind as u8);
            c.builder.add(ikey, value)?;
        }
    }
    Ok(())
}

fn finish(cur: &mut Option<Current>, out: &mut Output) -> Result<()> {
    let Some(c) = cur.take() else { return Ok(()) };
    let s = c.builder.finish()?;
    out.bytes_written += s.file_size;
    out.tables.push(FileMeta {
        number: c.number,
        size: s.file_size,
        smallest: s.smallest,
        largest: s.largest,
        smallest_seqno: s.smallest_seqno,
        largest_seqno: s.largest_seqno,
        entries: s.entries,
    });
    Ok(())
}
