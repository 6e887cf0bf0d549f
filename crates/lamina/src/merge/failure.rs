//! A merge that cannot be folded is a problem of one key: its error names the
//! key and keyspace, and a write that is certain to fail is refused at the
//! call when that is cheap to see.

use crate::error::Error;
use crate::key::{self, KeyspaceId};

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
