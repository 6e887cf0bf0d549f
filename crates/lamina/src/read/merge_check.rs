//! A merge operand that certainly cannot be folded is refused at the call,
//! when the value below it is cheap to find.

use super::Reads;
use crate::error::Result;
use crate::key::{self, KeyspaceId, Kind};

impl Reads {
    /// Refuses a merge operand for `user_key` in keyspace `ks` that cannot be
    /// folded onto the value below it, when that value is cheap to find: a
    /// Put in the newest memtable of the published view with nothing but
    /// operands above it. Otherwise (the value is older, or absent) nothing
    /// is checked here and a read of the key reports the failure. The view
    /// is read without a lock, as a read is: a write racing the call may
    /// land on either side of the check, as it may with any write.
    pub(crate) fn refuse_unfoldable_merge(
        &self,
        ks: KeyspaceId,
        user_key: &[u8],
        operand: &[u8],
    ) -> Result<()> {
        let view = self.pinned()?;
        let Some(mem) = view.mems.first() else {
            return Ok(());
        };
        let tk = key::tree_key(ks, user_key);
        let mut entries = vec![(Kind::Merge, operand.to_vec())];
        if !mem.collect_entries(&tk, &key::seek_key(&tk), &mut entries) {
            return Ok(());
        }
        if !matches!(entries.last(), Some((Kind::Put, _))) {
            return Ok(());
        }
        crate::iter::resolve(
            &tk,
            entries.iter().map(|(k, v)| (*k, v.as_slice())),
            self.merge_operator.as_ref(),
        )
        .map(drop)
    }
}
