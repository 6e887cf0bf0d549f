//! Moving the empty keys of databases written by older versions of this
//! module to where the engine keeps them now.
//!
//! The engine once refused zero-length keys, so this module kept the value of
//! each keyspace's empty key `b""` in a keyspace of its own, [`OLD_KEYSPACE`],
//! under the key `"=" + keyspace name` (`"="` for the default keyspace). The
//! engine now takes `b""` as an ordinary key. [`migrate`] runs when a database
//! is opened for writing: it moves every such value to `b""` of its keyspace
//! and deletes the old slots in one atomic, synced batch, then drops the old
//! keyspace. A crash between the two steps leaves an empty old keyspace, which
//! the next open drops; a crash before the batch leaves everything as it was.

use lamina::{Batch, Db, Durability, Error, Result};

/// The keyspace older versions kept empty keys in. Refused as a keyspace name
/// (`Db.keyspace`), so that no later data is mistaken for it.
pub const OLD_KEYSPACE: &str = "lamina.python.empty-key";

/// The keyspace name an old slot key stands for, or `None` when the key is
/// not one the old layout wrote.
fn keyspace_of(slot: &[u8]) -> Option<&str> {
    std::str::from_utf8(slot.strip_prefix(b"=")?).ok()
}

/// True when `db` still keeps empty keys the old way (and so needs a
/// writable open to [`migrate`]).
pub fn pending(db: &Db) -> Result<bool> {
    match db.open_keyspace(OLD_KEYSPACE) {
        Ok(old) => Ok(old.iter().next().transpose()?.is_some()),
        Err(Error::NoSuchKeyspace(_)) => Ok(false),
        Err(e) => Err(e),
    }
}

/// Moves the old layout's empty keys into their keyspaces (see the module
/// docs). Does nothing on a database without the old keyspace. A slot of a
/// keyspace dropped since is deleted with the rest; a key the old layout
/// never wrote is left where it is, and so is the old keyspace then.
pub fn migrate(db: &Db) -> Result<()> {
    let old = match db.open_keyspace(OLD_KEYSPACE) {
        Ok(old) => old,
        Err(Error::NoSuchKeyspace(_)) => return Ok(()),
        Err(e) => return Err(e),
    };
    let mut batch = Batch::new();
    let mut foreign = false;
    for item in old.iter() {
        let (slot, value) = item?;
        let Some(name) = keyspace_of(&slot) else {
            foreign = true;
            continue;
        };
        let target = if name.is_empty() {
            Some(db.default_keyspace())
        } else {
            match db.open_keyspace(name) {
                Ok(ks) => Some(ks),
                Err(Error::NoSuchKeyspace(_)) => None,
                Err(e) => return Err(e),
            }
        };
        if let Some(ks) = target {
            batch.put_in(&ks, b"", &value);
        }
        batch.delete_in(&old, &slot);
    }
    if !batch.is_empty() {
        db.write_with(batch, Durability::Sync)?;
    }
    if foreign {
        return Ok(());
    }
    db.drop_keyspace(OLD_KEYSPACE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use lamina::Options;

    /// Writes a database the way the old module laid empty keys out: the
    /// default keyspace's `b""` and keyspace "users"'s `b""` in the old
    /// keyspace, plus the slot of a keyspace dropped without its slot.
    fn old_layout(dir: &std::path::Path) -> Db {
        let db = Db::open(dir.join("db"), Options::default()).unwrap();
        let users = db.keyspace("users").unwrap();
        let old = db.keyspace(OLD_KEYSPACE).unwrap();
        db.put(b"a", b"1").unwrap();
        users.put(b"ann", b"2").unwrap();
        old.put(b"=", b"default empty").unwrap();
        old.put(b"=users", b"users empty").unwrap();
        old.put(b"=gone", b"stale").unwrap();
        db
    }

    #[test]
    fn old_empty_keys_move_to_their_keyspaces_and_the_old_keyspace_goes() {
        let dir = tempfile::tempdir().unwrap();
        let db = old_layout(dir.path());
        assert!(pending(&db).unwrap());
        migrate(&db).unwrap();
        assert!(!pending(&db).unwrap());
        assert_eq!(db.get(b"").unwrap(), Some(b"default empty".to_vec()));
        let users = db.open_keyspace("users").unwrap();
        assert_eq!(users.get(b"").unwrap(), Some(b"users empty".to_vec()));
        assert_eq!(db.get(b"a").unwrap(), Some(b"1".to_vec()));
        assert_eq!(users.get(b"ann").unwrap(), Some(b"2".to_vec()));
        assert_eq!(db.keyspaces(), vec!["users".to_string()]);
        assert!(db.open_keyspace("gone").is_err());
        // The empty key comes first in key order.
        let keys: Vec<Vec<u8>> = db.iter().map(|e| e.unwrap().0).collect();
        assert_eq!(keys, vec![b"".to_vec(), b"a".to_vec()]);
        db.close().unwrap();

        // Reopened: the move is on disk, and a second run has nothing to do.
        let db = Db::open(dir.path().join("db"), Options::default()).unwrap();
        migrate(&db).unwrap();
        assert_eq!(db.get(b"").unwrap(), Some(b"default empty".to_vec()));
        assert_eq!(db.keyspaces(), vec!["users".to_string()]);
    }

    #[test]
    fn an_old_keyspace_left_empty_by_a_crash_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path().join("db"), Options::default()).unwrap();
        db.put(b"", b"moved before the crash").unwrap();
        db.keyspace(OLD_KEYSPACE).unwrap();
        assert!(!pending(&db).unwrap());
        migrate(&db).unwrap();
        assert!(db.keyspaces().is_empty());
        assert_eq!(
            db.get(b"").unwrap(),
            Some(b"moved before the crash".to_vec())
        );
    }

    #[test]
    fn keys_the_old_layout_never_wrote_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let db = old_layout(dir.path());
        let old = db.open_keyspace(OLD_KEYSPACE).unwrap();
        old.put(b"not a slot", b"keep me").unwrap();
        migrate(&db).unwrap();
        assert_eq!(db.get(b"").unwrap(), Some(b"default empty".to_vec()));
        assert_eq!(old.get(b"not a slot").unwrap(), Some(b"keep me".to_vec()));
        assert_eq!(old.get(b"=").unwrap(), None);
    }
}
