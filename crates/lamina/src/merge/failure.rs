//! A merge that cannot be folded is a problem of one key: its error names the
//! key and keyspace, and a write that is certain to fail is refused at the
//! call when that is cheap to see.

use crate::db::Inner;
use crate::error::{Error, Result};
use crate::key::{self, KeyspaceId, Kind};
use std::sync::Arc;

/// The key of `tree_key` in words: its bytes, printable ones as they are and
/// others hex-escaped (`"user\x00id"`), and its keyspace.
pub fn describe_key(tree_key: &[u8]) -> String {
    let ks = tree_key
        .get(..key::KEYSPACE_ID_LEN)
        .and_then(|b| <[u8; 4]>::try_from(b).ok())
        .map_or(0, KeyspaceId::from_be_bytes);
    let user = tree_key.get(key::KEYSPACE_ID_LEN..).unwrap_or_default();
    let space = if ks == 0 {
        "the default keyspace".to_string()
    } else {
        format!("keyspace #{ks}")
    };
    format!("key \"{}\" in {space}", user.escape_ascii())
}

/// The error of a merge operator that refused to fold the operands of
/// `tree_key`, naming the key.
pub(crate) fn merge_error(tree_key: &[u8], why: &str) -> Error {
    Error::Merge(format!("{}: {why}", describe_key(tree_key)))
}

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
        let mem = Arc::clone(&self.state.lock().mem);
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
            self.opts.merge_operator.as_ref(),
        )
        .map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_described_printably() {
        assert_eq!(
            describe_key(&key::tree_key(0, b"k")),
            "key \"k\" in the default keyspace"
        );
        assert_eq!(
            describe_key(&key::tree_key(3, b"a\x00\xff\"")),
            "key \"a\\x00\\xff\\\"\" in keyspace #3"
        );
    }
}
