//! Merge operators: fold blind updates (`Db::merge`) onto the value below them.

mod builtin;
mod failure;

pub use builtin::{Add, Append};
pub use failure::describe_key;
pub(crate) use failure::merge_error;

/// Folds merge operands. Implementations must be deterministic: the same
/// inputs give the same output whenever and wherever they are folded (on a
/// read, in a compaction).
pub trait MergeOperator: Send + Sync + 'static {
    /// A stable name, for messages and `stats`.
    fn name(&self) -> &str;

    /// Checks an operand when it is written; an `Err` message refuses the write.
    fn validate_operand(&self, _operand: &[u8]) -> Result<(), String> {
        Ok(())
    }

    /// Folds `operands` (oldest first) onto `base` (`None` when the key had no
    /// value). `Err` when the inputs cannot be folded (for example a base value
    /// that is not a counter); a read then fails and compaction keeps the entries.
    fn full_merge(
        &self,
        key: &[u8],
        base: Option<&[u8]>,
        operands: &[&[u8]],
    ) -> Result<Vec<u8>, String>;

    /// Combines consecutive operands (oldest first) into one, if the operator
    /// allows it. `None` keeps them apart.
    fn partial_merge(&self, _key: &[u8], _operands: &[&[u8]]) -> Option<Vec<u8>> {
        None
    }
}
