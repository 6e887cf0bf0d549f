//! A transaction's ordered reads: the snapshot's entries in a range merged
//! with the transaction's own writes there, in key order, both ways. Its
//! deletes hide keys; its merge operands fold onto the snapshot's value.

use super::pending::Pending;
use crate::error::Result;
use crate::key;
use crate::merge::MergeOperator;
use crate::read::Iter;
use std::cmp::Ordering;
use std::collections::VecDeque;
use std::sync::Arc;

type Item = Result<(Vec<u8>, Vec<u8>)>;

/// Entries of a range as a transaction sees them: `(key, value)` pairs in
/// key order (`.rev()` for descending). Like [`Iter`], an error other than
/// [`crate::Error::Merge`] ends it.
pub struct TxnIter {
    base: Iter,
    /// The transaction's writes in the range, by tree key, ascending.
    pending: VecDeque<(Vec<u8>, Pending)>,
    /// The base's next entry at each end, taken but not yet yielded.
    front: Option<Item>,
    back: Option<Item>,
    op: Arc<dyn MergeOperator>,
}

impl TxnIter {
    pub(crate) fn new(
        base: Iter,
        pending: VecDeque<(Vec<u8>, Pending)>,
        op: Arc<dyn MergeOperator>,
    ) -> TxnIter {
        TxnIter {
            base,
            pending,
            front: None,
            back: None,
            op,
        }
    }

    /// The base's next entry from the front (`forward`) or back, peeked: an
    /// end whose own side is spent takes what the other end peeked.
    fn peek_base(&mut self, forward: bool) -> Option<&Item> {
        let (slot, other) = if forward {
            (&mut self.front, &mut self.back)
        } else {
            (&mut self.back, &mut self.front)
        };
        if slot.is_none() {
            let next = if forward {
                self.base.next()
            } else {
                self.base.next_back()
            };
            *slot = next.or_else(|| other.take());
        }
        slot.as_ref()
    }

    fn take_base(&mut self, forward: bool) -> Option<Item> {
        if forward {
            self.front.take()
        } else {
            self.back.take()
        }
    }

    fn take_pending(&mut self, forward: bool) -> Option<(Vec<u8>, Pending)> {
        if forward {
            self.pending.pop_front()
        } else {
            self.pending.pop_back()
        }
    }

    /// The next entry from the front or the back.
    fn step(&mut self, forward: bool) -> Option<Item> {
        loop {
            let pending_key = if forward {
                self.pending.front()
            } else {
                self.pending.back()
            }
            .map(|(tk, _)| tk.get(key::KEYSPACE_ID_LEN..).unwrap_or_default().to_vec());
            let order = match (self.peek_base(forward), pending_key.as_deref()) {
                (None, None) => return None,
                (Some(Err(_)), _) | (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (Some(Ok((k, _))), Some(p)) if forward => k.as_slice().cmp(p),
                (Some(Ok((k, _))), Some(p)) => p.cmp(k.as_slice()),
            };
            let snapshot = match order {
                Ordering::Less => return self.take_base(forward),
                Ordering::Greater => None,
                Ordering::Equal => match self.take_base(forward) {
                    Some(Ok((_, v))) => Some(v),
                    _ => None,
                },
            };
            let (tk, p) = self.take_pending(forward)?;
            match p.value(&tk, snapshot.as_deref(), self.op.as_ref()) {
                Ok(Some(v)) => {
                    let user_key = tk.get(key::KEYSPACE_ID_LEN..).unwrap_or_default();
                    return Some(Ok((user_key.to_vec(), v)));
                }
                // Deleted by the transaction: hidden.
                Ok(None) => continue,
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

impl Iterator for TxnIter {
    type Item = Item;

    fn next(&mut self) -> Option<Item> {
        self.step(true)
    }
}

impl DoubleEndedIterator for TxnIter {
    fn next_back(&mut self) -> Option<Item> {
        self.step(false)
    }
}

impl std::fmt::Debug for TxnIter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TxnIter")
            .field("own_writes_left", &self.pending.len())
            .finish_non_exhaustive()
    }
}
