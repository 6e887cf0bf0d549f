//! Builds one block: prefix-compressed entries and a restart array.
//!
//! Layout: docs/format.md#block.

use crate::coding::put_varint;

/// Accumulates entries into the bytes of one (uncompressed) block.
///
/// REQUIRES: keys are added in strictly ascending order (the caller checks;
/// the builder only compresses), and the finished block is shorter than
/// 4 GiB so that restart offsets fit in a `u32` (the table builder bounds
/// block, key and value sizes to guarantee it).
#[derive(Debug)]
pub struct BlockBuilder {
    buf: Vec<u8>,
    restarts: Vec<u32>,
    restart_interval: usize,
    /// Entries added since the last restart point.
    counter: usize,
    last_key: Vec<u8>,
    entries: usize,
}

impl BlockBuilder {
    /// An empty builder placing a restart point every `restart_interval`
    /// entries (0 acts as 1).
    pub fn new(restart_interval: usize) -> BlockBuilder {
        BlockBuilder {
            buf: Vec::new(),
            restarts: vec![0],
            restart_interval: restart_interval.max(1),
            counter: 0,
            last_key: Vec::new(),
            entries: 0,
        }
    }

    /// Appends an entry. REQUIRES: `key` sorts after every key added since
    /// the last `reset`.
    pub fn add(&mut self, key: &[u8], value: &[u8]) {
        let shared = if self.counter < self.restart_interval {
            common_prefix(&self.last_key, key)
        } else {
            self.restarts.push(self.buf.len() as u32);
            self.counter = 0;
            0
        };
        let suffix = key.get(shared..).unwrap_or(&[]);
        put_varint(&mut self.buf, shared as u64);
        put_varint(&mut self.buf, suffix.len() as u64);
        put_varint(&mut self.buf, value.len() as u64);
        self.buf.extend_from_slice(suffix);
        self.buf.extend_from_slice(value);
        self.last_key.truncate(shared);
        self.last_key.extend_from_slice(suffix);
        self.counter += 1;
        self.entries += 1;
    }

    /// Appends the restart array and returns the finished block's bytes,
    /// valid until the next call on the builder.
    pub fn finish(&mut self) -> &[u8] {
        for r in &self.restarts {
            self.buf.extend_from_slice(&r.to_le_bytes());
        }
        self.buf
            .extend_from_slice(&(self.restarts.len() as u32).to_le_bytes());
        &self.buf
    }

    /// Empties the builder for the next block.
    pub fn reset(&mut self) {
        self.buf.clear();
        self.restarts.clear();
        self.restarts.push(0);
        self.counter = 0;
        self.last_key.clear();
        self.entries = 0;
    }

    /// Size the block would have if finished now.
    pub fn estimated_size(&self) -> usize {
        self.buf.len() + 4 * self.restarts.len() + 4
    }

    /// True when no entry was added since the last `reset`.
    pub fn is_empty(&self) -> bool {
        self.entries == 0
    }

    /// Entries added since the last `reset`.
    pub fn len(&self) -> usize {
        self.entries
    }

    /// The last key added (empty if none).
    pub fn last_key(&self) -> &[u8] {
        &self.last_key
    }
}

fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}
