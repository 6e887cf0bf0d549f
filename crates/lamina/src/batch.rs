//! A group of writes applied atomically, and its encoding as a WAL record.
//!
//! Layout: docs/format.md#batch.

use crate::coding::{put_len_prefixed, put_varint, Decoder};
use crate::error::{Error, Result};
use crate::key::{KeyspaceId, Kind, SeqNo, MAX_KEY_LEN, MAX_VALUE_LEN};

/// Bytes before the first operation: first seqno u64 and count u32.
const HEADER_LEN: usize = 12;

/// Writes applied together: after `Db::write` returns, either all of them are
/// visible or (after a crash before they were durable) none.
///
/// A batch may touch several keyspaces. Building one never fails; keys and
/// values are checked when it is written.
#[derive(Clone, Default)]
pub struct Batch {
    rep: Vec<u8>,
    count: u32,
    /// Bytes of the callers' keys and values: a value in a blob file counts
    /// its length, not its pointer's (what `stats()` reports as written).
    user_bytes: u64,
    /// Where the operation of a batch of one lies in `rep`, as `push` wrote
    /// it, so that a single put or delete is checked and inserted without
    /// being decoded again; `None` otherwise (and in batches decoded from
    /// a WAL record).
    only: Option<OnlyOp>,
    /// What the operations are, kept as they are added.
    shape: Shape,
}

/// What the operations of a batch are, in a few numbers kept as they are
/// added: checks that every operation must pass are then answered for the
/// whole batch at once, without decoding it (a batch of a million puts was
/// decoded three times per commit, a fifth of its instructions).
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
struct Shape {
    /// The kinds present, bit `1 << kind`.
    kinds: u8,
    /// The keyspace of every operation while they share one (`None` while
    /// there is none); see `mixed`.
    keyspace: Option<KeyspaceId>,
    /// Whether two operations are in different keyspaces.
    mixed: bool,
    /// The longest key.
    longest_key: usize,
    /// The longest value or merge operand, of any kind.
    longest_value: usize,
    /// The longest value of a Put.
    longest_put: usize,
}

impl Shape {
    fn add(&mut self, kind: Kind, ks: KeyspaceId, key_len: usize, value_len: usize) {
        self.kinds |= 1 << (kind as u8);
        match self.keyspace {
            None => self.keyspace = Some(ks),
            Some(k) if k != ks => self.mixed = true,
            Some(_) => {}
        }
        self.longest_key = self.longest_key.max(key_len);
        self.longest_value = self.longest_value.max(value_len);
        if kind == Kind::Put {
            self.longest_put = self.longest_put.max(value_len);
        }
    }

    fn has(&self, kind: Kind) -> bool {
        self.kinds & (1 << (kind as u8)) != 0
    }
}

/// The operation of a batch of one: its kind, keyspace, and the byte
/// ranges of its key and value in the batch's encoding.
#[derive(Clone, Copy)]
struct OnlyOp {
    kind: Kind,
    keyspace: KeyspaceId,
    key: (usize, usize),
    value: (usize, usize),
}

impl std::fmt::Debug for Batch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Batch")
            .field("ops", &self.count)
            .field("bytes", &self.rep.len())
            .finish()
    }
}

/// One decoded operation of a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Op<'a> {
    /// What the operation does.
    pub kind: Kind,
    /// The keyspace it applies to.
    pub keyspace: KeyspaceId,
    /// The user key.
    pub key: &'a [u8],
    /// The value or merge operand (empty for Delete).
    pub value: &'a [u8],
}

impl Batch {
    /// An empty batch.
    pub fn new() -> Batch {
        Batch {
            rep: vec![0; HEADER_LEN],
            count: 0,
            user_bytes: 0,
            only: None,
            shape: Shape::default(),
        }
    }

    pub(crate) fn push(&mut self, kind: Kind, ks: KeyspaceId, key: &[u8], value: Option<&[u8]>) {
        if self.rep.len() < HEADER_LEN {
            self.rep.resize(HEADER_LEN, 0);
        }
        // kind, keyspace and two lengths take at most 1 + 5 + 10 + 10 bytes.
        self.rep
            .reserve(26 + key.len() + value.map_or(0, <[u8]>::len));
        self.rep.push(kind as u8);
        put_varint(&mut self.rep, u64::from(ks));
        put_len_prefixed(&mut self.rep, key);
        let key_end = self.rep.len();
        if let Some(v) = value {
            put_len_prefixed(&mut self.rep, v);
        }
        let value_len = value.map_or(0, <[u8]>::len);
        self.user_bytes += user_bytes(kind, key, value.unwrap_or(&[]));
        self.shape.add(kind, ks, key.len(), value_len);
        self.only = (self.count == 0).then_some(OnlyOp {
            kind,
            keyspace: ks,
            key: (key_end - key.len(), key_end),
            value: (self.rep.len() - value_len, self.rep.len()),
        });
        self.count += 1;
    }

    /// The operation of a batch of one built by `push`, read in place
    /// (`only` is set by the first `push` and cleared by the second).
    pub(crate) fn only_op(&self) -> Option<Op<'_>> {
        let only = self.only?;
        Some(Op {
            kind: only.kind,
            keyspace: only.keyspace,
            key: self.rep.get(only.key.0..only.key.1)?,
            value: self.rep.get(only.value.0..only.value.1)?,
        })
    }

    /// Sets `key` to `value` in the default keyspace.
    pub fn put(&mut self, key: &[u8], value: &[u8]) {
        self.push(Kind::Put, 0, key, Some(value));
    }

    /// Deletes `key` from the default keyspace.
    pub fn delete(&mut self, key: &[u8]) {
        self.push(Kind::Delete, 0, key, None);
    }

    /// Adds a merge operand for `key` in the default keyspace.
    pub fn merge(&mut self, key: &[u8], operand: &[u8]) {
        self.push(Kind::Merge, 0, key, Some(operand));
    }

    /// Adds `op` as it is.
    pub(crate) fn push_op(&mut self, op: &Op<'_>) {
        let value = (op.kind != Kind::Delete).then_some(op.value);
        self.push(op.kind, op.keyspace, op.key, value);
    }

    /// Sets `key` in keyspace `ks` to the value `pointer` names in a blob
    /// file written at commit (a kind-3 operation, docs/format.md#batch).
    pub(crate) fn put_blob(&mut self, ks: KeyspaceId, key: &[u8], pointer: &[u8]) {
        self.push(Kind::Blob, ks, key, Some(pointer));
    }

    /// Sets `key` to `value` in the keyspace with id `ks`.
    pub(crate) fn push_put(&mut self, ks: KeyspaceId, key: &[u8], value: &[u8]) {
        self.push(Kind::Put, ks, key, Some(value));
    }

    /// Number of operations.
    pub fn len(&self) -> usize {
        self.count as usize
    }

    /// True when the batch holds no operation.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Removes every operation.
    pub fn clear(&mut self) {
        self.rep.clear();
        self.rep.resize(HEADER_LEN, 0);
        self.count = 0;
        self.user_bytes = 0;
        self.only = None;
        self.shape = Shape::default();
    }

    /// Bytes of the callers' keys and values in the batch (a value in a blob
    /// file counted at its length).
    pub(crate) fn user_bytes(&self) -> u64 {
        self.user_bytes
    }

    /// Encoded size in bytes.
    pub fn encoded_len(&self) -> usize {
        self.rep.len().max(HEADER_LEN)
    }

    /// Whether a Put's value is `threshold` bytes or longer (a value for a
    /// blob file), without decoding the batch.
    pub(crate) fn has_put_of(&self, threshold: usize) -> bool {
        self.shape.longest_put >= threshold
    }

    /// Checks every key and value against the limits, every merge operand
    /// with `check_operand`, and every keyspace with `check_keyspace`, in one
    /// pass over the batch; or, for a batch of puts and deletes within the
    /// limits in one keyspace, by checking that keyspace once.
    pub(crate) fn validate(
        &self,
        check_operand: &dyn Fn(&[u8]) -> std::result::Result<(), String>,
        check_keyspace: &dyn Fn(KeyspaceId) -> Result<()>,
    ) -> Result<()> {
        let check = |op: Op<'_>| {
            if op.kind == Kind::Blob {
                return Err(Error::InvalidArgument(
                    "a batch built by a caller never holds a blob pointer".to_string(),
                ));
            }
            check_keyspace(op.keyspace)?;
            check_limits(op.key, op.value)?;
            if op.kind == Kind::Merge {
                check_operand(op.value).map_err(Error::InvalidArgument)?;
            }
            Ok(())
        };
        if let Some(op) = self.only_op() {
            return check(op);
        }
        let s = &self.shape;
        if !s.has(Kind::Blob)
            && !s.has(Kind::Merge)
            && !s.mixed
            && s.longest_key <= MAX_KEY_LEN
            && s.longest_value <= MAX_VALUE_LEN
        {
            // Each operation would pass its check exactly as the first one.
            return s.keyspace.map_or(Ok(()), check_keyspace);
        }
        for op in self.ops() {
            check(op.map_err(Error::InvalidArgument)?)?;
        }
        Ok(())
    }

    /// Stamps the first seqno into the header and returns the encoded record.
    pub(crate) fn encode_with_seqno(&mut self, first: SeqNo) -> &[u8] {
        if self.rep.len() < HEADER_LEN {
            self.rep.resize(HEADER_LEN, 0);
        }
        let mut header = [0u8; HEADER_LEN];
        header[..8].copy_from_slice(&first.to_le_bytes());
        header[8..].copy_from_slice(&self.count.to_le_bytes());
        if let Some(h) = self.rep.get_mut(..HEADER_LEN) {
            h.copy_from_slice(&header);
        }
        &self.rep
    }

    /// Iterates over the operations.
    pub fn ops(&self) -> Ops<'_> {
        Ops {
            d: Decoder::new(self.rep.get(HEADER_LEN..).unwrap_or(&[])),
            left: self.count,
            base: HEADER_LEN,
            stopped: false,
        }
    }
}

/// `InvalidArgument` unless `key` and `value` are within the limits.
pub(crate) fn check_limits(key: &[u8], value: &[u8]) -> Result<()> {
    if key.len() > MAX_KEY_LEN {
        return Err(Error::InvalidArgument(format!(
            "key is {} bytes; the limit is {MAX_KEY_LEN}",
            key.len()
        )));
    }
    if value.len() > MAX_VALUE_LEN {
        return Err(Error::InvalidArgument(format!(
            "value is {} bytes; the limit is {MAX_VALUE_LEN}",
            value.len()
        )));
    }
    Ok(())
}

/// Iterator over the operations of an encoded batch.
pub struct Ops<'a> {
    d: Decoder<'a>,
    left: u32,
    base: usize,
    /// An error was returned; nothing more is.
    stopped: bool,
}

impl<'a> Iterator for Ops<'a> {
    type Item = Result<Op<'a>, String>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.stopped {
            return None;
        }
        if self.left == 0 {
            return if self.d.is_empty() {
                None
            } else {
                self.stopped = true;
                Some(Err(format!(
                    "{} bytes after the last operation",
                    self.d.remaining().len()
                )))
            };
        }
        self.left -= 1;
        let at = self.base + self.d.position();
        let op = (|| {
            let kind = Kind::from_u8(self.d.u8()?)?;
            let keyspace = self.d.varint32()?;
            let key = self.d.len_prefixed()?;
            let value = if kind == Kind::Delete {
                &[][..]
            } else {
                self.d.len_prefixed()?
            };
            Some(Op {
                kind,
                keyspace,
                key,
                value,
            })
        })();
        match op {
            Some(op) => Some(Ok(op)),
            None => {
                self.stopped = true;
                Some(Err(format!(
                    "malformed operation at byte {at} of the batch"
                )))
            }
        }
    }
}

/// Bytes of a caller's key and value in one operation: for a value in a
/// blob file, its length as the pointer gives it (0 if malformed).
fn user_bytes(kind: Kind, key: &[u8], value: &[u8]) -> u64 {
    let value_len = match kind {
        Kind::Blob => crate::blob::BlobPointer::decode(value).map_or(0, |p| p.len as usize),
        _ => value.len(),
    };
    (key.len() + value_len) as u64
}

/// A batch decoded from a WAL record.
pub(crate) struct DecodedBatch {
    pub first_seqno: SeqNo,
    pub batch: Batch,
}

/// Decodes a WAL record into its first seqno and operations; `Err` names
/// what is wrong. A kind-3 operation (docs/format.md#batch) must hold a
/// well-formed blob pointer.
pub(crate) fn decode_record(record: &[u8]) -> Result<DecodedBatch, String> {
    let mut d = Decoder::new(record);
    let first_seqno = d.u64().ok_or("record shorter than a batch header")?;
    let count = d.u32().ok_or("record shorter than a batch header")?;
    let mut batch = Batch {
        rep: record.to_vec(),
        count,
        user_bytes: 0,
        only: None,
        shape: Shape::default(),
    };
    let mut bytes = 0;
    let mut shape = Shape::default();
    for op in batch.ops() {
        let op = op?;
        bytes += user_bytes(op.kind, op.key, op.value);
        shape.add(op.kind, op.keyspace, op.key.len(), op.value.len());
        if op.kind == Kind::Blob {
            crate::blob::BlobPointer::decode(op.value)?;
        }
    }
    batch.user_bytes = bytes;
    batch.shape = shape;
    Ok(DecodedBatch { first_seqno, batch })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn encode_decode_round_trip() {
        let mut b = Batch::new();
        b.put(b"a", b"1");
        b.delete(b"b");
        b.merge(b"c", &7u64.to_le_bytes());
        let rec = b.encode_with_seqno(100).to_vec();
        let d = decode_record(&rec).unwrap();
        assert_eq!(d.first_seqno, 100);
        let ops: Vec<_> = d.batch.ops().map(|o| o.unwrap()).collect();
        assert_eq!(ops.len(), 3);
        assert_eq!(
            ops[0],
            Op {
                kind: Kind::Put,
                keyspace: 0,
                key: b"a",
                value: b"1"
            }
        );
        assert_eq!(
            ops[1],
            Op {
                kind: Kind::Delete,
                keyspace: 0,
                key: b"b",
                value: b""
            }
        );
        assert_eq!(ops[2].kind, Kind::Merge);
    }

    #[test]
    fn damaged_records_are_refused() {
        let mut b = Batch::new();
        b.put(b"key", b"value");
        let rec = b.encode_with_seqno(1).to_vec();
        for cut in 0..rec.len() {
            assert!(decode_record(&rec[..cut]).is_err(), "cut at {cut}");
        }
        let mut extra = rec.clone();
        extra.push(0);
        assert!(decode_record(&extra).is_err());
        let mut bad_kind = rec;
        bad_kind[12] = 9;
        assert!(decode_record(&bad_kind).is_err());
    }

    #[test]
    fn a_blob_pointer_must_be_well_formed() {
        // Kind 3 decoded from a WAL record goes into the memtable, where a
        // read follows whatever its value points at.
        let mut b = Batch::new();
        b.put(b"key", b"value");
        let mut rec = b.encode_with_seqno(1).to_vec();
        rec[12] = Kind::Blob as u8;
        assert!(decode_record(&rec).is_err(), "\"value\" is no pointer");
        let pointer = crate::blob::BlobPointer {
            file: 9,
            offset: 37,
            len: 100_000,
            crc: 7,
        };
        let mut b = Batch::new();
        b.put_blob(0, b"key", &pointer.encode());
        let rec = b.encode_with_seqno(1).to_vec();
        let d = decode_record(&rec).unwrap();
        let op = d.batch.ops().next().unwrap().unwrap();
        assert_eq!(op.kind, Kind::Blob);
        assert_eq!(crate::blob::BlobPointer::decode(op.value).unwrap(), pointer);
        // A caller's batch never carries one into a commit.
        let err = b.validate(&|_| Ok(()), &|_| Ok(())).unwrap_err();
        assert!(err.to_string().contains("blob pointer"), "{err}");
    }

    #[test]
    fn validate_enforces_limits() {
        let ok = |_: &[u8]| Ok(());
        let mut b = Batch::new();
        b.put(b"", b"v");
        assert!(
            b.validate(&ok, &|_| Ok(())).is_ok(),
            "the empty key is a key"
        );
        let mut b = Batch::new();
        b.put(&vec![1u8; MAX_KEY_LEN + 1], b"v");
        assert!(b.validate(&ok, &|_| Ok(())).is_err());
        let mut b = Batch::new();
        b.put(&vec![1u8; MAX_KEY_LEN], b"v");
        assert!(b.validate(&ok, &|_| Ok(())).is_ok());
    }

    /// Before the fix: a record whose header declared u32::MAX operations
    /// decoded as a valid batch holding none, because that count doubled as
    /// the iterator's "stopped after an error" mark; replay would have taken
    /// four billion seqnos from a record with no operation in it.
    #[test]
    fn a_count_of_u32_max_is_not_a_valid_empty_batch() {
        let mut rec = 7u64.to_le_bytes().to_vec();
        rec.extend_from_slice(&u32::MAX.to_le_bytes());
        let e = decode_record(&rec).err().expect("refused");
        assert!(e.contains("malformed operation"), "{e}");
    }
}

/// Properties of the WAL record decoder: arbitrary bytes never panic it, and
/// the encoding is canonical (a record that decodes is exactly the bytes its
/// operations encode to: varints are decoded leniently, so an overlong one
/// would break this and is looked for).
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod decode_properties {
    use super::*;
    use proptest::prelude::*;

    fn op() -> impl Strategy<Value = (u8, u32, Vec<u8>, Vec<u8>)> {
        (
            0u8..3,
            prop_oneof![Just(0u32), any::<u32>()],
            prop::collection::vec(any::<u8>(), 0..20),
            prop::collection::vec(any::<u8>(), 0..40),
        )
    }

    fn batch_of(ops: &[(u8, u32, Vec<u8>, Vec<u8>)]) -> Batch {
        let mut b = Batch::new();
        for (kind, ks, k, v) in ops {
            match Kind::from_u8(*kind).unwrap() {
                Kind::Delete => b.push(Kind::Delete, *ks, k, None),
                kind => b.push(kind, *ks, k, Some(v)),
            }
        }
        b
    }

    /// The operations of `d`, encoded again as a record.
    fn re_encode(d: &DecodedBatch) -> Vec<u8> {
        let mut b = Batch::new();
        for op in d.batch.ops() {
            let op = op.unwrap();
            let value = (op.kind != Kind::Delete).then_some(op.value);
            b.push(op.kind, op.keyspace, op.key, value);
        }
        b.encode_with_seqno(d.first_seqno).to_vec()
    }

    fn record_like_bytes() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            prop::collection::vec(any::<u8>(), 0..64),
            (
                any::<u64>(),
                prop_oneof![0u32..4, Just(u32::MAX), any::<u32>()],
                prop::collection::vec(any::<u8>(), 0..64)
            )
                .prop_map(|(seq, count, body)| {
                    let mut r = seq.to_le_bytes().to_vec();
                    r.extend_from_slice(&count.to_le_bytes());
                    r.extend(body);
                    r
                }),
            (
                prop::collection::vec(op(), 0..6),
                any::<prop::sample::Index>(),
                any::<u8>()
            )
                .prop_map(|(ops, at, x)| {
                    let mut r = batch_of(&ops).encode_with_seqno(1).to_vec();
                    let i = at.index(r.len());
                    r[i] ^= x;
                    r
                }),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

        #[test]
        fn records_round_trip(ops in prop::collection::vec(op(), 0..8), seqno in any::<u64>()) {
            let rec = batch_of(&ops).encode_with_seqno(seqno).to_vec();
            let d = decode_record(&rec).unwrap();
            prop_assert_eq!(d.first_seqno, seqno);
            prop_assert_eq!(d.batch.len(), ops.len());
            prop_assert_eq!(re_encode(&d), rec);
        }

        /// The operation a batch of one keeps in place is the one its
        /// encoding decodes to; batches of any other size keep none, after
        /// `clear` too.
        #[test]
        fn the_only_op_kept_in_place_is_the_decoded_one(
            ops in prop::collection::vec(op(), 0..4),
            more in op(),
        ) {
            let mut b = batch_of(&ops);
            let decoded: Vec<Op<'_>> = b.ops().map(|op| op.unwrap()).collect();
            prop_assert_eq!(b.only_op(), (decoded.len() == 1).then(|| decoded[0]));
            b.clear();
            prop_assert_eq!(b.only_op(), None);
            let mut b = batch_of(std::slice::from_ref(&more));
            b.encode_with_seqno(9);
            let decoded = b.ops().next().unwrap().unwrap();
            prop_assert_eq!(b.only_op(), Some(decoded));
        }

        #[test]
        fn decode_never_panics_and_is_canonical(rec in record_like_bytes()) {
            if let Ok(d) = decode_record(&rec) {
                prop_assert_eq!(re_encode(&d), rec);
            }
        }

        /// What a batch keeps of its operations as they are added answers
        /// as decoding them would: `validate` (a refused keyspace, key,
        /// value or operand anywhere, a blob pointer) and whether a Put's
        /// value reaches a threshold; for the batch built and for the one
        /// its record decodes to.
        #[test]
        fn the_shape_kept_answers_as_every_operation_would(
            ops in prop::collection::vec(
                (0u8..4, 0u32..3, 0usize..4, 0usize..40, any::<bool>()),
                0..6,
            ),
        ) {
            let mut b = Batch::new();
            for &(kind, ks, key_len, value_len, oversize) in &ops {
                let key = vec![b'k'; if oversize && kind == 0 { MAX_KEY_LEN + 1 } else { key_len }];
                let value = vec![b'v'; value_len];
                match Kind::from_u8(kind).unwrap() {
                    Kind::Delete => b.push(Kind::Delete, ks, &key, None),
                    Kind::Blob if oversize => {
                        let pointer = crate::blob::BlobPointer {
                            file: 9,
                            offset: 37,
                            len: 100_000,
                            crc: 7,
                        };
                        b.put_blob(ks, &key, &pointer.encode());
                    }
                    Kind::Blob => b.push(Kind::Put, ks, &key, Some(&value)),
                    kind => b.push(kind, ks, &key, Some(&value)),
                }
            }
            // Keyspace 2 is refused, as is a merge operand of 7 bytes.
            let operand = |v: &[u8]| if v.len() == 7 { Err("seven".to_string()) } else { Ok(()) };
            let keyspace = |ks: KeyspaceId| {
                if ks == 2 { Err(Error::KeyspaceDropped("2".into())) } else { Ok(()) }
            };
            let each = |b: &Batch| -> Result<()> {
                for op in b.ops() {
                    let op = op.map_err(Error::InvalidArgument)?;
                    if op.kind == Kind::Blob {
                        return Err(Error::InvalidArgument("blob".into()));
                    }
                    keyspace(op.keyspace)?;
                    check_limits(op.key, op.value)?;
                    if op.kind == Kind::Merge {
                        operand(op.value).map_err(Error::InvalidArgument)?;
                    }
                }
                Ok(())
            };
            let rec = b.clone().encode_with_seqno(1).to_vec();
            let decoded = decode_record(&rec).unwrap().batch;
            for b in [&b, &decoded] {
                let got = b.validate(&operand, &keyspace).map_err(|e| e.to_string());
                let want = each(b).map_err(|e| e.to_string());
                prop_assert_eq!(got.is_ok(), want.is_ok(), "{:?} / {:?}", got, want);
                let longest_put = b
                    .ops()
                    .map(|op| op.unwrap())
                    .filter(|op| op.kind == Kind::Put)
                    .map(|op| op.value.len())
                    .max();
                for threshold in [1, 10, 20, 39, 40] {
                    prop_assert_eq!(
                        b.has_put_of(threshold),
                        longest_put.is_some_and(|l| l >= threshold)
                    );
                }
            }
        }
    }
}
