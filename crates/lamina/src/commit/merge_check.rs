//! A merge operand that certainly cannot be folded is refused at the call,
//! when the value below it is cheap to find.

use crate::db::Inner;
use crate::error::Result;
use crate::key::{self, KeyspaceId, Kind};
use std::sync::Arc;

impl Inner {
    /// Refuses a merge operand for `user_key` in keyspace `ks` that cannot be
    /// folded onto the value below it, when that value is cheap to find: a
    /// Put in the active memtable with nothing but operands above it.
    /// Otherwise (the value is older, or absent) nothing is checked here and
    /// a read of the key reports the failure.
    pub(crate) fn refuse_unfoldable_merge(
        &self,
        ks: KeyspaceId,
        user_key: &[u8],
        operand: &[u8],
    ) -> Result<()> {
        self.check_open()?;
        let mem = Arc::clone(&self.state().lock().mem);
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
            self.opts().merge_operator.as_ref(),
        )
        .map(drop)
    }
}
