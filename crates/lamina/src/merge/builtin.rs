//! The built-in merge operators.

use super::MergeOperator;

/// A 64-bit counter: operands and values are `u64` little-endian (8 bytes);
/// folding adds with wrap-around. A missing value counts as 0.
#[derive(Debug, Clone, Copy, Default)]
pub struct Add;

fn counter(bytes: &[u8], what: &str) -> Result<u64, String> {
    let arr: [u8; 8] = bytes.try_into().map_err(|_| {
        let n = bytes.len();
        format!(
            "the {what} is {n} byte{} long, not an 8-byte counter \
             (the add operator counts in 64-bit little-endian integers)",
            if n == 1 { "" } else { "s" }
        )
    })?;
    Ok(u64::from_le_bytes(arr))
}

impl MergeOperator for Add {
    fn name(&self) -> &str {
        "add"
    }

    fn validate_operand(&self, operand: &[u8]) -> Result<(), String> {
        counter(operand, "operand").map(|_| ())
    }

    fn full_merge(
        &self,
        _key: &[u8],
        base: Option<&[u8]>,
        operands: &[&[u8]],
    ) -> Result<Vec<u8>, String> {
        let mut sum = match base {
            Some(b) => counter(b, "stored value")?,
            None => 0,
        };
        for op in operands {
            sum = sum.wrapping_add(counter(op, "operand")?);
        }
        Ok(sum.to_le_bytes().to_vec())
    }

    fn partial_merge(&self, key: &[u8], operands: &[&[u8]]) -> Option<Vec<u8>> {
        self.full_merge(key, None, operands).ok()
    }
}

/// Byte-string concatenation: folding appends each operand to the value.
#[derive(Debug, Clone, Copy, Default)]
pub struct Append;

impl MergeOperator for Append {
    fn name(&self) -> &str {
        "append"
    }

    fn full_merge(
        &self,
        _key: &[u8],
        base: Option<&[u8]>,
        operands: &[&[u8]],
    ) -> Result<Vec<u8>, String> {
        let mut out = base.map(<[u8]>::to_vec).unwrap_or_default();
        for op in operands {
            out.extend_from_slice(op);
        }
        Ok(out)
    }

    fn partial_merge(&self, key: &[u8], operands: &[&[u8]]) -> Option<Vec<u8>> {
        self.full_merge(key, None, operands).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_folds_onto_base_and_rejects_non_counters() {
        let one = 1u64.to_le_bytes();
        let five = 5u64.to_le_bytes();
        let got = Add
            .full_merge(b"k", Some(&five), &[&one, &one])
            .expect("counters");
        assert_eq!(got, 7u64.to_le_bytes());
        assert_eq!(Add.full_merge(b"k", None, &[&one]).expect("counters"), one);
        assert!(Add.full_merge(b"k", Some(b"abc"), &[&one]).is_err());
        assert!(Add.validate_operand(b"1234567").is_err());
        assert_eq!(
            Add.partial_merge(b"k", &[&one, &five]),
            Some(6u64.to_le_bytes().to_vec())
        );
    }

    #[test]
    fn append_concatenates_in_order() {
        let got = Append
            .full_merge(b"k", Some(b"a"), &[b"b", b"c"])
            .expect("append");
        assert_eq!(got, b"abc");
    }
}
