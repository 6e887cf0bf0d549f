//! Writes a table from entries added in ascending internal-key order.
//!
//! Layout: docs/format.md#table.

use super::block_builder::BlockBuilder;
use super::bloom::BloomBuilder;
use super::compress::{BlockCompressor, BLOCK_TRAILER_LEN};
use super::footer::{BlockHandle, Footer, TABLE_VERSION};
use super::properties::Properties;
use super::{TableOptions, MAX_BLOCK_SIZE, PAGE};
use crate::error::{Error, Result};
use crate::fs::WritableFile;
use crate::key::{self, Kind};
use crate::Compression;
use std::cmp::Ordering;
use std::path::PathBuf;
use xxhash_rust::xxh3::xxh3_64;

/// Bytes of finished blocks gathered before they are appended to the file.
const WRITE_CHUNK: usize = 256 << 10;

/// Longest internal key accepted: keyspace id, longest user key, trailer.
const MAX_INTERNAL_KEY_LEN: usize = key::KEYSPACE_ID_LEN + key::MAX_KEY_LEN + key::TRAILER_LEN;

/// Most raw bytes of a block of a page that compresses: a block aims at
/// the room to its page boundary with its stored bytes, and so holds
/// several pages of raw bytes; at most four, so that a point read
/// decompresses little more than it would read uncompressed.
const COMPRESSED_PAGE_RAW_MAX: usize = 4 * PAGE;

/// Most bytes an entry adds to a block beyond its key and value: three
/// varint32 lengths, a restart point and two hash buckets.
const ENTRY_GROWTH_MAX: usize = 3 * 5 + 4 + 2;

/// What a finished table holds; what the manifest records about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableSummary {
    /// Size of the file in bytes.
    pub file_size: u64,
    /// The first internal key.
    pub smallest: Vec<u8>,
    /// The last internal key.
    pub largest: Vec<u8>,
    /// Smallest seqno of any entry.
    pub smallest_seqno: u64,
    /// Largest seqno of any entry.
    pub largest_seqno: u64,
    /// Number of entries.
    pub entries: u64,
}

/// Writes one table.
///
/// Entries go into data blocks of about `block_size` bytes; finished blocks
/// are buffered and appended to the file in chunks of 256 KiB. Nothing is
/// durable until [`finish`](TableBuilder::finish) returns. After any error
/// the builder must be dropped and the partly written file removed by the
/// caller. Dropping a builder without finishing leaves an incomplete file.
pub struct TableBuilder {
    out: Output,
    opts: TableOptions,
    data: BlockBuilder,
    index: BlockBuilder,
    bloom: BloomBuilder,
    props: Properties,
    /// With blocks of a page: the raw bytes the pending data block may
    /// reach before it is cut, fixed when the block starts (its start and
    /// the table's compression so far decide it).
    raw_room: usize,
    smallest: Vec<u8>,
    last_key: Vec<u8>,
    handle_buf: Vec<u8>,
}

/// The file being written, behind a buffer of finished blocks.
struct Output {
    file: Box<dyn WritableFile>,
    path: PathBuf,
    buf: Vec<u8>,
    /// Bytes already appended to the file.
    written: u64,
    compressor: BlockCompressor,
}

impl Output {
    /// File offset of the next byte written.
    fn offset(&self) -> u64 {
        self.written + self.buf.len() as u64
    }

    /// Buffers `raw` as a stored block with its trailer.
    fn write_block(&mut self, raw: &[u8], compression: Compression) -> Result<BlockHandle> {
        let offset = self.offset();
        let size = self.compressor.append(raw, compression, &mut self.buf);
        self.finish_block(offset, size)
    }

    /// Buffers the data block `raw` as a stored block with its trailer
    /// (compressed or not as [`BlockCompressor::append_data`] decides).
    fn write_data_block(&mut self, raw: &[u8], compression: Compression) -> Result<BlockHandle> {
        let offset = self.offset();
        let size = self.compressor.append_data(raw, compression, &mut self.buf);
        self.finish_block(offset, size)
    }

    /// The handle of the block of `size` bytes just buffered at `offset`;
    /// the buffer goes to the file once it holds a chunk.
    fn finish_block(&mut self, offset: u64, size: usize) -> Result<BlockHandle> {
        if self.buf.len() >= WRITE_CHUNK {
            self.flush()?;
        }
        Ok(BlockHandle {
            offset,
            size: size as u64,
        })
    }

    fn flush(&mut self) -> Result<()> {
        self.file
            .append(&self.buf)
            .map_err(|e| Error::io(&self.path, e))?;
        self.written += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }
}

impl TableBuilder {
    /// A builder writing to `file` (an empty file just created at `path`,
    /// which is only used to name the file in errors).
    pub fn new(file: Box<dyn WritableFile>, path: PathBuf, opts: TableOptions) -> TableBuilder {
        let opts = TableOptions {
            block_size: opts.block_size.clamp(1, MAX_BLOCK_SIZE),
            restart_interval: opts.restart_interval.max(1),
            ..opts
        };
        let data = BlockBuilder::with_hash_index(opts.restart_interval);
        let mut builder = TableBuilder {
            out: Output {
                file,
                path,
                buf: Vec::with_capacity(WRITE_CHUNK + opts.block_size),
                written: 0,
                compressor: BlockCompressor::default(),
            },
            data,
            index: BlockBuilder::new(1),
            opts,
            bloom: BloomBuilder::new(),
            props: Properties::default(),
            raw_room: 0,
            smallest: Vec::new(),
            last_key: Vec::new(),
            handle_buf: Vec::new(),
        };
        builder.raw_room = builder.next_raw_room();
        builder
    }

    /// Adds an entry.
    ///
    /// REQUIRES: `ikey` is a well-formed internal key sorting strictly after
    /// every key added before (by `key::compare`), at most 64 KiB of user
    /// key, and `value` at most 256 MiB; otherwise `InvalidArgument` and
    /// nothing is added. An I/O error leaves the builder unusable.
    pub fn add(&mut self, ikey: &[u8], value: &[u8]) -> Result<()> {
        let parsed = key::parse(ikey).ok_or_else(|| {
            Error::InvalidArgument(format!("table key {ikey:02x?} is not an internal key"))
        })?;
        if ikey.len() > MAX_INTERNAL_KEY_LEN || value.len() > key::MAX_VALUE_LEN {
            return Err(Error::InvalidArgument(format!(
                "table entry too large: key of {} bytes, value of {} bytes",
                ikey.len(),
                value.len()
            )));
        }
        // One comparison with the key before says both whether the key is
        // in order and whether its tree key is new (then hashed once, for
        // the filter and the block's hash index).
        let new_tree_key = if self.props.entries == 0 {
            true
        } else {
            let same = match key::tree_key_of(&self.last_key).cmp(parsed.tree_key) {
                Ordering::Less => false,
                Ordering::Equal => true,
                Ordering::Greater => return Err(self.out_of_order(ikey)),
            };
            if same && key::compare(&self.last_key, ikey) != Ordering::Less {
                return Err(self.out_of_order(ikey));
            }
            !same
        };
        let p = &mut self.props;
        if p.entries == 0 {
            self.smallest = ikey.to_vec();
            p.smallest_seqno = parsed.seqno;
        }
        p.entries += 1;
        p.deletes += u64::from(parsed.kind == Kind::Delete);
        p.merges += u64::from(parsed.kind == Kind::Merge);
        p.key_bytes += parsed.tree_key.len() as u64;
        p.value_bytes += value.len() as u64;
        p.smallest_seqno = p.smallest_seqno.min(parsed.seqno);
        p.largest_seqno = p.largest_seqno.max(parsed.seqno);
        if self.page_aligned() && !self.data.is_empty() {
            let most = self.data.estimated_size() + ENTRY_GROWTH_MAX + ikey.len() + value.len();
            if most > self.raw_room {
                self.flush_data_block()?;
            }
        }
        let hash = (new_tree_key || self.data.is_empty()).then(|| xxh3_64(parsed.tree_key));
        if let (true, Some(h)) = (new_tree_key, hash) {
            self.bloom.add_hash(h);
        }
        self.data.add_hashed(ikey, value, hash);
        self.last_key.clear();
        self.last_key.extend_from_slice(ikey);
        // A block of small entries reaches the hash index's limit of restart
        // points before 64 KiB: cut it there, so that it keeps its index.
        let full = !self.page_aligned() && self.data.estimated_size() >= self.opts.block_size;
        if full || self.data.hash_index_full() {
            self.flush_data_block()?;
        }
        Ok(())
    }

    /// Whether data blocks end on the file's page boundaries: with blocks
    /// of a page (docs/format.md#block, "Blocks of a page").
    fn page_aligned(&self) -> bool {
        self.opts.block_size == PAGE
    }

    /// Bytes of the data blocks so far as stored (trailers left out) and
    /// raw.
    fn stored_and_raw(&self) -> (u64, u64) {
        let p = &self.props;
        let trailers = p.data_blocks * BLOCK_TRAILER_LEN as u64;
        (p.data_stored_bytes - trailers, p.data_raw_bytes)
    }

    /// Whether this table's data blocks compress: the blocks so far stored
    /// in less than eight ninths of their raw bytes.
    fn compresses(&self) -> bool {
        let (stored, raw) = self.stored_and_raw();
        stored.saturating_mul(9) / 8 < raw
    }

    /// With blocks of a page, the raw bytes the next data block may reach:
    /// the room to its page boundary, less its trailer; where blocks
    /// compress, the raw bytes whose stored size, estimated from the
    /// blocks so far with an eighth to spare, fills that room, at most
    /// [`COMPRESSED_PAGE_RAW_MAX`].
    fn next_raw_room(&self) -> usize {
        if !self.page_aligned() {
            return 0;
        }
        let room = self.room_to_page().saturating_sub(BLOCK_TRAILER_LEN);
        if !self.compresses() {
            return room;
        }
        let (stored, raw) = self.stored_and_raw();
        let fill =
            (room as u64).saturating_mul(raw).saturating_mul(8) / stored.max(1).saturating_mul(9);
        usize::try_from(fill).map_or(COMPRESSED_PAGE_RAW_MAX, |f| f.min(COMPRESSED_PAGE_RAW_MAX))
    }

    /// Bytes from the pending data block's start to the page boundary it
    /// is to end on: the next one, or, for a block stored as it is, the
    /// one after when the next is less than a quarter page away (a block
    /// that compresses ends short of its boundary, and the next one would
    /// then cross it).
    fn room_to_page(&self) -> usize {
        let start = self.out.offset();
        let page = PAGE as u64;
        let mut end = (start / page + 1) * page;
        if end - start < page / 4 && !self.compresses() {
            end += page;
        }
        (end - start) as usize
    }

    /// The error refusing `ikey`, which does not sort after the key added
    /// before.
    fn out_of_order(&self, ikey: &[u8]) -> Error {
        Error::InvalidArgument(format!(
            "table keys must be added in strictly ascending order: {} after {}",
            key::describe(ikey),
            key::describe(&self.last_key)
        ))
    }

    /// Writes the pending data block and its index entry.
    fn flush_data_block(&mut self) -> Result<()> {
        // A block stored as it is gets buckets to end on its boundary; one
        // that compresses cannot be made to, and gets none.
        let len = if self.page_aligned() && !self.compresses() {
            self.room_to_page().saturating_sub(BLOCK_TRAILER_LEN)
        } else {
            0
        };
        let raw = self.data.finish_to(len);
        let raw_len = raw.len() as u64;
        let handle = self.out.write_data_block(raw, self.opts.compression)?;
        self.data.reset();
        self.props.data_blocks += 1;
        self.props.data_stored_bytes += handle.size + BLOCK_TRAILER_LEN as u64;
        self.props.data_raw_bytes += raw_len;
        self.handle_buf.clear();
        handle.encode_to(&mut self.handle_buf);
        self.index.add(&self.last_key, &self.handle_buf);
        self.raw_room = self.next_raw_room();
        Ok(())
    }

    /// Bytes the table would have if finished now, before compression of
    /// the pending block, and without filter, properties, index or footer.
    pub fn estimated_size(&self) -> u64 {
        self.out.offset() + self.data.estimated_size() as u64
    }

    /// Records the settings of the TableWriter writing this table in its
    /// properties (docs/format.md#properties, counters 20 and above).
    pub fn set_writer_props(&mut self, writer: super::WriterProps) {
        self.props.writer = Some(writer);
    }

    /// Entries added so far.
    pub fn num_entries(&self) -> u64 {
        self.props.entries
    }

    /// Records in the properties the database identity and the table's file
    /// number (docs/format.md#properties, counters 10–12).
    pub fn set_origin(&mut self, identity: u128, file_number: u64) {
        self.props.identity = identity;
        self.props.file_number = file_number;
    }

    /// Writes the last data block, the filter, properties and index blocks
    /// and the footer, then syncs the file. When it returns `Ok`, the
    /// table's bytes are durable (the file's directory entry is not: the
    /// caller syncs the directory). `InvalidArgument` if no entry was added.
    pub fn finish(mut self) -> Result<TableSummary> {
        if self.props.entries == 0 {
            return Err(Error::InvalidArgument(
                "a table needs at least one entry".into(),
            ));
        }
        if !self.data.is_empty() {
            self.flush_data_block()?;
        }
        let filter = self.bloom.build(self.opts.bloom_bits_per_key);
        let filter = self.out.write_block(&filter, Compression::None)?;
        let properties = self
            .out
            .write_block(&self.props.encode(), Compression::None)?;
        let index = self
            .out
            .write_block(self.index.finish(), self.opts.compression)?;
        let footer = Footer {
            filter,
            properties,
            index,
            version: TABLE_VERSION,
        };
        self.out.buf.extend_from_slice(&footer.encode());
        self.out.flush()?;
        self.out
            .file
            .sync_data()
            .map_err(|e| Error::io(&self.out.path, e))?;
        Ok(TableSummary {
            file_size: self.out.written,
            smallest: self.smallest,
            largest: self.last_key,
            smallest_seqno: self.props.smallest_seqno,
            largest_seqno: self.props.largest_seqno,
            entries: self.props.entries,
        })
    }
}

impl std::fmt::Debug for TableBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableBuilder")
            .field("path", &self.out.path)
            .field("opts", &self.opts)
            .field("entries", &self.props.entries)
            .field("offset", &self.out.offset())
            .finish_non_exhaustive()
    }
}
