//! What a thread's keys must hold: the acknowledged writes applied in order.

use crate::journal::Op;
use std::collections::BTreeMap;

/// (keyspace: 0 default, 1 `soak`; user key) to value.
pub type Model = BTreeMap<(u8, Vec<u8>), Vec<u8>>;

/// Applies a batch as the database does, with the built-in `add` merge
/// operator (u64 little-endian, wrapping; a missing value counts as 0).
pub fn apply(model: &mut Model, ops: &[Op]) {
    for op in ops {
        match op {
            Op::Put(ks, k, v) => {
                model.insert((*ks, k.clone()), v.clone());
            }
            Op::Delete(ks, k) => {
                model.remove(&(*ks, k.clone()));
            }
            Op::Merge(ks, k, n) => {
                let old = model
                    .get(&(*ks, k.clone()))
                    .and_then(|v| <[u8; 8]>::try_from(v.as_slice()).ok())
                    .map_or(0, u64::from_le_bytes);
                model.insert(
                    (*ks, k.clone()),
                    old.wrapping_add(*n).to_le_bytes().to_vec(),
                );
            }
        }
    }
}

/// Up to `limit` keys on which `want` and `got` differ, described.
pub fn differences(want: &Model, got: &Model, limit: usize) -> Vec<String> {
    let keys: std::collections::BTreeSet<_> = want.keys().chain(got.keys()).collect();
    keys.into_iter()
        .filter(|k| want.get(*k) != got.get(*k))
        .take(limit)
        .map(|k| {
            format!(
                "keyspace {} key {:?}: expected {:?}, found {:?}",
                k.0,
                String::from_utf8_lossy(&k.1),
                want.get(k).map(|v| short(v)),
                got.get(k).map(|v| short(v)),
            )
        })
        .collect()
}

fn short(v: &[u8]) -> String {
    let head: Vec<u8> = v.iter().copied().take(16).collect();
    format!("{} bytes {:02x?}", v.len(), head)
}
