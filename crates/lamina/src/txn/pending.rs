//! A transaction's own writes, key by key: what the key was set to (a Put,
//! a Delete, or nothing: the snapshot's value) and the merge operands added
//! since, oldest first; folded on read, written as one batch at commit.

use crate::batch::Batch;
use crate::error::Result;
use crate::key::{self, KeyspaceId, Kind};
use crate::merge::MergeOperator;

/// What a transaction wrote to one key.
#[derive(Debug, Clone)]
pub(crate) enum Base {
    /// Nothing but operands: they fold onto the snapshot's value.
    Snapshot,
    Put(Vec<u8>),
    Delete,
}

/// A transaction's writes to one key (see the module doc).
#[derive(Debug, Clone)]
pub(crate) struct Pending {
    pub base: Base,
    pub operands: Vec<Vec<u8>>,
}

impl Pending {
    /// Whether reading the key needs the snapshot's value.
    pub fn needs_snapshot(&self) -> bool {
        matches!(self.base, Base::Snapshot)
    }

    /// Whether the key has a value: a Put, or operands (a key whose newest
    /// entries are operands exists, as `Db::contains_key` says).
    pub fn exists(&self) -> bool {
        matches!(self.base, Base::Put(_)) || !self.operands.is_empty()
    }

    /// The key's value, with `snapshot` the snapshot's value (read only if
    /// [`Pending::needs_snapshot`]): the operands folded onto the base.
    pub fn value(
        &self,
        tree_key: &[u8],
        snapshot: Option<&[u8]>,
        op: &dyn MergeOperator,
    ) -> Result<Option<Vec<u8>>> {
        let base = match &self.base {
            Base::Snapshot => snapshot,
            Base::Put(v) => Some(v.as_slice()),
            Base::Delete => None,
        };
        if self.operands.is_empty() {
            return Ok(base.map(<[u8]>::to_vec));
        }
        let operands: Vec<&[u8]> = self.operands.iter().map(Vec::as_slice).collect();
        let user_key = tree_key.get(key::KEYSPACE_ID_LEN..).unwrap_or_default();
        op.full_merge(user_key, base, &operands)
            .map(Some)
            .map_err(|why| crate::merge::merge_error(tree_key, &why))
    }

    /// Appends the key's writes to `batch`: the base, then the operands in
    /// order (later entries of a batch are newer).
    pub fn write_to(&self, tree_key: &[u8], batch: &mut Batch) {
        let (ks, user_key) = split(tree_key);
        match &self.base {
            Base::Snapshot => {}
            Base::Put(v) => batch.push(Kind::Put, ks, user_key, Some(v)),
            Base::Delete => batch.push(Kind::Delete, ks, user_key, None),
        }
        for operand in &self.operands {
            batch.push(Kind::Merge, ks, user_key, Some(operand));
        }
    }
}

/// The keyspace id and user key of a tree key.
pub(crate) fn split(tree_key: &[u8]) -> (KeyspaceId, &[u8]) {
    let ks = tree_key
        .get(..key::KEYSPACE_ID_LEN)
        .and_then(|b| <[u8; 4]>::try_from(b).ok())
        .map_or(0, KeyspaceId::from_be_bytes);
    (ks, tree_key.get(key::KEYSPACE_ID_LEN..).unwrap_or_default())
}
