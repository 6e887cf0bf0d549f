//! The values of many keys at once (`get_many`): one view serves the whole
//! batch, the keys are looked up in key order through the point lookup
//! every read takes, and the data blocks a batch needs from the disk are
//! asked for together before the lookups that wait for them.

use super::point::{answered, check_key_len, seek_target, At, Lookup, Pinned};
use super::Reads;
use crate::cache::Count;
use crate::error::Result;
use crate::key::{self, KeyspaceId, SeqNo};
use crate::manifest::NUM_LEVELS;
use crate::read::Cached;

impl Reads {
    /// The values of `keys` in keyspace `ks` as of `at`,
    /// in the order of `keys`, `None` where a key has none; each read whole,
    /// as [`Reads::get_with`] reads it. One view serves the whole batch, and
    /// the keys are looked up in key order through the lookup every point
    /// read takes: neighbours share tables and blocks, and a block read for
    /// one key is the thread's last for the next. A key too long is refused
    /// before any lookup (the first in the order of `keys`).
    pub(crate) fn get_many<K: AsRef<[u8]>>(
        &self,
        ks: KeyspaceId,
        keys: &[K],
        at: At,
    ) -> Result<Vec<Option<Vec<u8>>>> {
        for k in keys {
            check_key_len(k.as_ref())?;
        }
        let mut out: Vec<Option<Vec<u8>>> = vec![None; keys.len()];
        if keys.is_empty() {
            return Ok(out);
        }
        let pinned = self.pinned()?;
        let mut order: Vec<(&[u8], usize)> = keys.iter().map(AsRef::as_ref).zip(0..).collect();
        order.sort_unstable();
        // First from memory; the keys that need the disk then have their
        // blocks asked for together, and are looked up again.
        // `point_in` is inlined at each call with its `Lookup` a constant:
        // through one closure taking it as an argument, batches of absent
        // keys served from memory ran 0.75-0.82x the one-pass loop.
        let mut pending = Vec::new();
        for (key, i) in order {
            let found = self.point_in(
                &pinned,
                at,
                ks,
                key,
                Lookup::CACHED_VALUE,
                <[u8]>::to_vec,
                |v, _| v.into_vec(),
            )?;
            match found {
                Cached::Answered(v) => {
                    if let Some(slot) = out.get_mut(i) {
                        *slot = v;
                    }
                }
                Cached::NeedsIo => pending.push((key, i)),
            }
        }
        if pending.len() > 1 {
            self.will_need_blocks(&pinned, ks, at.seqno, &pending)?;
        }
        for (key, i) in pending {
            let found = self.point_in(
                &pinned,
                at,
                ks,
                key,
                Lookup::VALUE,
                <[u8]>::to_vec,
                |v, _| v.into_vec(),
            )?;
            if let Some(slot) = out.get_mut(i) {
                *slot = answered(found)?;
            }
        }
        let n = u64::try_from(keys.len()).unwrap_or(u64::MAX);
        self.tables.block_cache().count(Count::Lookup, n);
        Ok(out)
    }

    /// Asks the operating system to start reading, for every key of a
    /// batch, the data block of each table below level 0 whose filter
    /// allows it, unless cached: the reads are then in flight together,
    /// where the lookups that follow wait for them one at a time. Tables
    /// not opened yet are skipped (opening one reads the disk), as are
    /// the memtables and level 0 (a key found there needs no deeper
    /// block; a hint the lookup does not use costs a read of the disk and
    /// nothing else).
    fn will_need_blocks(
        &self,
        pinned: &Pinned,
        ks: KeyspaceId,
        seqno: SeqNo,
        order: &[(&[u8], usize)],
    ) -> Result<()> {
        let version = &pinned.version;
        for (key, _) in order {
            let tk = key::tree_key(ks, key);
            let hash = crate::table::key_hash(&tk);
            let target = seek_target(ks, key, seqno);
            for level in 1..NUM_LEVELS {
                let Some((_, f)) = version.find_in_level(level, &tk) else {
                    continue;
                };
                if let Some(table) = self.tables.get_if_open(f.number) {
                    table.will_need_for(target.as_slice(), hash)?;
                }
            }
        }
        Ok(())
    }
}
