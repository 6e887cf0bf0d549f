//! Checks of an open table: against what the manifest lists for it
//! (`check_listed`, before it serves a read) and against everything the
//! format promises (`verify`, for `check`).
//!
//! Layout: docs/format.md#table.

use super::{corruption, Table};
use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::key::{self, Kind};
use crate::manifest::FileMeta;
use crate::table::block::Block;
use crate::table::compress::BLOCK_TRAILER_LEN;
use crate::table::footer::BlockHandle;
use crate::table::properties::Properties;
use std::cmp::Ordering;
use std::sync::Arc;

impl Table {
    /// Checks the table against what the manifest lists for it, before it
    /// serves a read (docs/format.md#properties, "Checked on open"): its
    /// identity must be `identity` (the database's) and its file number its
    /// own — unless it is a table writer's table linked in as it is, which
    /// names neither (docs/format.md#ingested-tables) — and its size, entry
    /// count, seqno range and first and last keys must be the manifest's.
    /// Any difference is corruption naming the table: it was copied or
    /// renamed in from elsewhere, or damaged.
    pub fn check_listed(&self, listed: &FileMeta, identity: u128) -> Result<()> {
        self.check_identity(identity)?;
        let p = &self.props;
        if self.file_size != listed.size {
            let (l, f) = (listed.size.to_string(), self.file_size.to_string());
            return Err(self.differs("a size of", l, f));
        }
        if p.entries != listed.entries {
            let (l, f) = (listed.entries.to_string(), p.entries.to_string());
            return Err(self.differs("an entry count of", l, f));
        }
        if (p.smallest_seqno, p.largest_seqno) != (listed.smallest_seqno, listed.largest_seqno) {
            return Err(self.differs(
                "seqnos",
                format!("{}..={}", listed.smallest_seqno, listed.largest_seqno),
                format!("{}..={}", p.smallest_seqno, p.largest_seqno),
            ));
        }
        self.check_key_range(listed)
    }

    /// Checks, for [`Table::check_listed`], that the table names database
    /// `identity` and its own file number, unless it is a table writer's
    /// table linked in as it is.
    fn check_identity(&self, identity: u128) -> Result<()> {
        let props_at = self.footer.properties.offset;
        let p = &self.props;
        let linked = p.writer.is_some() && p.identity == 0 && p.file_number == 0;
        if !linked && p.identity != identity {
            let reason = if p.identity == 0 {
                "table names no database (identity 0) and no table writer wrote it: it was \
                 copied in from elsewhere"
                    .to_string()
            } else {
                format!(
                    "table belongs to another database (identity {:032x}, this database's is \
                     {identity:032x})",
                    p.identity
                )
            };
            return Err(corruption(&self.path, props_at, reason));
        }
        if !linked && p.file_number != self.file_number {
            return Err(corruption(
                &self.path,
                props_at,
                format!(
                    "table was written as number {} but is named as number {} (copied or renamed)",
                    p.file_number, self.file_number
                ),
            ));
        }
        Ok(())
    }

    /// Checks, for [`Table::check_listed`], that the table's first and last
    /// keys are the ones `listed`.
    fn check_key_range(&self, listed: &FileMeta) -> Result<()> {
        let mut index = self.index.iter();
        index.seek_to_last();
        let last = index.valid().then(|| index.key().to_vec());
        index.status()?;
        if last.as_deref() != Some(listed.largest.as_slice()) {
            let found = last.map_or_else(|| "no key".to_string(), |k| format!("{k:02x?}"));
            return Err(self.differs("the largest key", format!("{:02x?}", listed.largest), found));
        }
        index.seek_to_first();
        let first = if index.valid() {
            let block = Arc::new(self.read_data_block(self.handle_of(index.value())?)?);
            let mut it = block.iter();
            it.seek_to_first();
            let k = it.valid().then(|| it.key().to_vec());
            it.status()?;
            k
        } else {
            None
        };
        if first.as_deref() != Some(listed.smallest.as_slice()) {
            let found = first.map_or_else(|| "no key".to_string(), |k| format!("{k:02x?}"));
            return Err(self.differs(
                "the smallest key",
                format!("{:02x?}", listed.smallest),
                found,
            ));
        }
        Ok(())
    }

    /// Corruption for [`Table::check_listed`]: the manifest lists `what`
    /// as `listed`, the table has `found`.
    fn differs(&self, what: &str, listed: String, found: String) -> Error {
        corruption(
            &self.path,
            0,
            format!("the manifest lists {what} {listed} but the table has {found}"),
        )
    }

    /// Reads every data block from the file (bypassing the cache) and checks
    /// everything the format promises: checksums, entry encoding, keys well
    /// formed and strictly ascending, each tree key in the filter, blocks
    /// contiguous from offset 0 to the filter, each index key equal to its
    /// block's last key, and every counter in the properties. Returns the
    /// number of entries; the first problem found is a Corruption naming
    /// its offset.
    pub fn verify(&self) -> Result<u64> {
        self.verify_entries(|_, _| Ok(()))
    }

    /// The handles of the data blocks, in order (for tests of the layout).
    #[cfg(test)]
    pub(crate) fn data_block_handles(&self) -> Result<Vec<BlockHandle>> {
        let mut out = Vec::new();
        let mut index = self.index.iter();
        index.seek_to_first();
        while index.valid() {
            out.push(self.handle_of(index.value())?);
            index.next();
        }
        index.status()?;
        Ok(out)
    }

    /// [`Table::verify`], handing each entry (its key parsed, and its
    /// value) in order to `each` once its key is checked; the first error
    /// `each` returns ends the pass and is returned, before the properties
    /// are compared with the entries.
    pub fn verify_entries(
        &self,
        mut each: impl FnMut(&key::Parsed<'_>, &[u8]) -> Result<()>,
    ) -> Result<u64> {
        let mut seen = Properties {
            smallest_seqno: u64::MAX,
            ..Properties::default()
        };
        let mut last_key: Vec<u8> = Vec::new();
        let mut next_offset = 0u64;
        let mut index = self.index.iter();
        index.seek_to_first();
        while index.valid() {
            let handle = self.handle_of(index.value())?;
            if handle.offset != next_offset {
                return Err(corruption(
                    &self.path,
                    handle.offset,
                    format!(
                        "data block starts at {}, expected {next_offset}",
                        handle.offset
                    ),
                ));
            }
            let block = Arc::new(self.read_data_block(handle)?);
            self.verify_block(&block, handle, &mut last_key, &mut seen, &mut each)?;
            if index.key() != last_key.as_slice() {
                return Err(corruption(
                    &self.path,
                    self.footer.index.offset,
                    format!(
                        "index key of the block at {} is not its last key",
                        handle.offset
                    ),
                ));
            }
            seen.data_blocks += 1;
            seen.data_stored_bytes += handle.size + BLOCK_TRAILER_LEN as u64;
            seen.data_raw_bytes += block.data().len() as u64;
            next_offset = handle.end_with_trailer().unwrap_or(u64::MAX);
            index.next();
        }
        index.status()?;
        if next_offset != self.footer.filter.offset {
            return Err(corruption(
                &self.path,
                next_offset,
                format!(
                    "data blocks end at {next_offset} but the filter starts at {}",
                    self.footer.filter.offset
                ),
            ));
        }
        self.check_counters(&seen)?;
        Ok(seen.entries)
    }

    /// Checks the entries of data block `block`, read at `handle`, for
    /// [`Table::verify_entries`]: hands each to `each` and counts it in
    /// `seen`; `last_key` holds the key before the block's first and is
    /// left holding its last.
    fn verify_block(
        &self,
        block: &Arc<Block>,
        handle: BlockHandle,
        last_key: &mut Vec<u8>,
        seen: &mut Properties,
        each: &mut impl FnMut(&key::Parsed<'_>, &[u8]) -> Result<()>,
    ) -> Result<()> {
        block.verify_hash_index()?;
        let mut it = block.iter();
        it.seek_to_first();
        while it.valid() {
            let p = self.check_entry(handle, last_key, it.key())?;
            each(&p, it.value())?;
            seen.entries += 1;
            seen.deletes += u64::from(p.kind == Kind::Delete);
            seen.merges += u64::from(p.kind == Kind::Merge);
            seen.key_bytes += p.tree_key.len() as u64;
            seen.value_bytes += it.value().len() as u64;
            seen.smallest_seqno = seen.smallest_seqno.min(p.seqno);
            seen.largest_seqno = seen.largest_seqno.max(p.seqno);
            last_key.clear();
            last_key.extend_from_slice(it.key());
            it.next();
        }
        it.status()
    }

    /// Compares the counters in the properties with those `seen` in the
    /// data blocks.
    fn check_counters(&self, seen: &Properties) -> Result<()> {
        for ((name, stored), counted) in Properties::NAMES
            .iter()
            .zip(self.props.counters())
            .zip(seen.counters())
        {
            if stored != counted {
                return Err(corruption(
                    &self.path,
                    self.footer.properties.offset,
                    format!("properties say {name} is {stored} but the data blocks give {counted}"),
                ));
            }
        }
        Ok(())
    }

    /// Checks one entry for `verify`: a well-formed internal key, after
    /// `prev` (empty for the first entry), present in the filter.
    fn check_entry<'k>(
        &self,
        handle: BlockHandle,
        prev: &[u8],
        ikey: &'k [u8],
    ) -> Result<key::Parsed<'k>> {
        let Some(p) = key::parse(ikey) else {
            return Err(corruption(
                &self.path,
                handle.offset,
                format!("malformed internal key {ikey:02x?}"),
            ));
        };
        if !prev.is_empty() && key::compare(prev, ikey) != Ordering::Less {
            return Err(corruption(
                &self.path,
                handle.offset,
                format!("key {ikey:02x?} does not sort after the key before it {prev:02x?}"),
            ));
        }
        if !self.may_contain(p.tree_key) {
            return Err(corruption(
                &self.path,
                self.footer.filter.offset,
                format!("filter does not contain the tree key {:02x?}", p.tree_key),
            ));
        }
        Ok(p)
    }
}
