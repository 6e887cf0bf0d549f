//! Named keyspaces: independent key ranges in one database that share its WAL,
//! so one batch can update several atomically.

use crate::batch::Batch;
use crate::db::Db;
use crate::error::{Error, Result};
use crate::key::{KeyspaceId, Kind};
use crate::manifest::VersionEdit;
use crate::read::Iter;
use crate::read::SeekCursor;
use std::ops::RangeBounds;
use std::sync::Arc;

use crate::key::MAX_KEYSPACE_NAME;

/// A handle to one keyspace. Cheap to clone; it keeps the database open.
/// After the keyspace is dropped every call fails with `NoSuchKeyspace`.
#[derive(Clone)]
pub struct Keyspace {
    db: Db,
    id: KeyspaceId,
    name: Arc<str>,
}

impl std::fmt::Debug for Keyspace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Keyspace")
            .field("name", &self.name)
            .field("id", &self.id)
            .finish()
    }
}

impl Keyspace {
    pub(crate) fn default_of(db: &Db) -> Keyspace {
        Keyspace {
            db: db.clone(),
            id: 0,
            name: Arc::from(""),
        }
    }

    pub(crate) fn open(db: &Db, name: &str, create: bool) -> Result<Keyspace> {
        let inner = db.inner();
        inner.check_open()?;
        if name.is_empty() || name.len() > MAX_KEYSPACE_NAME {
            return Err(Error::InvalidArgument(format!(
                "keyspace names are 1 to {MAX_KEYSPACE_NAME} bytes, not {}",
                name.len()
            )));
        }
        if let Some(&id) = inner.keyspaces.read().get(name) {
            return Ok(Keyspace {
                db: db.clone(),
                id,
                name: Arc::from(name),
            });
        }
        if !create {
            return Err(Error::NoSuchKeyspace(name.to_string()));
        }
        inner.check_writable()?;
        let mut vs = inner.versions.lock();
        if let Some(&id) = inner.keyspaces.read().get(name) {
            return Ok(Keyspace {
                db: db.clone(),
                id,
                name: Arc::from(name),
            });
        }
        let id = vs.allocate_keyspace_id();
        let edit = VersionEdit {
            keyspaces_created: vec![(id, name.to_string())],
            next_keyspace_id: Some(vs.next_keyspace_id()),
            ..Default::default()
        };
        if let Err(e) = vs.log_and_apply(edit) {
            inner.poison(&e);
            return Err(e);
        }
        inner.keyspaces.write().insert(name.to_string(), id);
        Ok(Keyspace {
            db: db.clone(),
            id,
            name: Arc::from(name),
        })
    }

    pub(crate) fn drop_named(db: &Db, name: &str) -> Result<()> {
        let inner = db.inner();
        inner.check_writable()?;
        let mut vs = inner.versions.lock();
        let Some(&id) = inner.keyspaces.read().get(name) else {
            return Err(Error::NoSuchKeyspace(name.to_string()));
        };
        let edit = VersionEdit {
            keyspaces_dropped: vec![id],
            ..Default::default()
        };
        if let Err(e) = vs.log_and_apply(edit) {
            inner.poison(&e);
            return Err(e);
        }
        inner.keyspaces.write().remove(name);
        inner.reads().floors().forget(id);
        Ok(())
    }

    /// The keyspace's name (empty for the default keyspace).
    pub fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn db(&self) -> &Db {
        &self.db
    }

    pub(crate) fn id(&self) -> KeyspaceId {
        self.id
    }

    #[inline]
    pub(crate) fn live(&self) -> Result<()> {
        if self.db.inner().keyspace_live(self.id) {
            Ok(())
        } else {
            Err(Error::KeyspaceDropped(format!("{:?}", &*self.name)))
        }
    }

    /// The value of `key`.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.live()?;
        self.db.inner().get(self.id, key, None)
    }

    /// The values of `keys`, in their order, `None` where a key has none,
    /// from one view (see [`Db::get_many`]).
    pub fn get_many<K: AsRef<[u8]>>(&self, keys: &[K]) -> Result<Vec<Option<Vec<u8>>>> {
        self.live()?;
        self.db.inner().get_many(self.id, keys, None)
    }

    /// The value of `key`, not yet read if it is in a blob file (see
    /// [`crate::Db::get_lazy`]).
    pub fn get_lazy(&self, key: &[u8]) -> Result<Option<crate::LazyValue>> {
        self.live()?;
        self.db.inner().get_value(self.id, key, None)
    }

    /// Calls `f` with the value of `key`, borrowed for the call (see
    /// [`Db::get_with`]); `None` if the key has no value.
    pub fn get_with<R>(&self, key: &[u8], f: impl FnOnce(&[u8]) -> R) -> Result<Option<R>> {
        self.live()?;
        self.db.inner().get_with(self.id, key, None, f)
    }

    /// Whether `key` has a value; stops at its newest entry (see
    /// [`Db::contains_key`]).
    pub fn contains_key(&self, key: &[u8]) -> Result<bool> {
        self.live()?;
        self.db.inner().contains(self.id, key, None)
    }

    /// Sets `key` to `value`.
    pub fn put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        self.db.inner().put_one(self.id, key, value)
    }

    /// Deletes `key`.
    pub fn delete(&self, key: &[u8]) -> Result<()> {
        self.db.inner().delete_one(self.id, key)
    }

    /// Deletes `key` if it has a value; returns whether it had one (see
    /// [`crate::Db::delete_existing`]).
    pub fn delete_existing(&self, key: &[u8]) -> Result<bool> {
        self.live()?;
        self.db.inner().delete_existing_one(self.id, key)
    }

    /// Adds a merge operand for `key`.
    /// As [`crate::Db::merge`] says, an operand that certainly cannot be folded
    /// is refused with [`crate::Error::Merge`] naming the key.
    pub fn merge(&self, key: &[u8], operand: &[u8]) -> Result<()> {
        self.live()?;
        let inner = self.db.inner();
        inner.check_open()?;
        inner.reads.refuse_unfoldable_merge(self.id, key, operand)?;
        let mut b = Batch::new();
        b.merge_in(self, key, operand);
        self.db.write(b)
    }

    /// Every entry, ascending.
    pub fn iter(&self) -> Iter {
        self.range::<&[u8], _>(..)
    }

    /// The entries whose keys lie in `range`.
    pub fn range<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, range: R) -> Iter {
        Iter::new(Arc::clone(&self.db.handle), self.id, &range, None)
    }

    /// The entries whose keys start with `prefix`.
    pub fn prefix(&self, prefix: &[u8]) -> Iter {
        Iter::with_prefix(Arc::clone(&self.db.handle), self.id, prefix, None)
    }

    /// A cursor that seeks and moves both ways, over the keyspace as of now
    /// (it takes a snapshot; see [`SeekCursor`]).
    pub fn cursor(&self) -> SeekCursor {
        SeekCursor::new(self.db.snapshot(), self.clone())
    }
}

/// The writes of a batch into a named keyspace (here, beside the keyspace,
/// so that a batch knows keyspaces only by id).
impl Batch {
    /// Sets `key` to `value` in keyspace `ks`.
    pub fn put_in(&mut self, ks: &Keyspace, key: &[u8], value: &[u8]) {
        self.push_put(ks.id(), key, value);
    }

    /// Deletes `key` from keyspace `ks`.
    pub fn delete_in(&mut self, ks: &Keyspace, key: &[u8]) {
        self.push(Kind::Delete, ks.id(), key, None);
    }

    /// Adds a merge operand for `key` in keyspace `ks`.
    pub fn merge_in(&mut self, ks: &Keyspace, key: &[u8], operand: &[u8]) {
        self.push(Kind::Merge, ks.id(), key, Some(operand));
    }
}
