//! Little-endian fixed-width integers and LEB128 varints, the two integer
//! encodings of `docs/format.md#integers`, and the masked CRC32C of
//! `docs/format.md#checksums`.

use crate::crc_fold;
use std::mem::MaybeUninit;

/// Appends `v` as an unsigned LEB128 varint.
pub fn put_varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push((v as u8) | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

/// Appends `bytes` preceded by its length as a varint.
pub fn put_len_prefixed(buf: &mut Vec<u8>, bytes: &[u8]) {
    put_varint(buf, bytes.len() as u64);
    buf.extend_from_slice(bytes);
}

/// A cursor over bytes being decoded. Every read returns `None` instead of
/// panicking when the input is short or malformed.
#[derive(Debug, Clone)]
pub struct Decoder<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Decoder<'a> {
    /// Starts decoding at the beginning of `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Decoder { buf, pos: 0 }
    }

    /// Bytes consumed so far.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// True when every byte has been consumed.
    pub fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// Bytes not yet consumed.
    pub fn remaining(&self) -> &'a [u8] {
        self.buf.get(self.pos..).unwrap_or(&[])
    }

    /// Reads a varint of at most 64 bits, written in the fewest bytes (a
    /// varint of more than one byte whose last byte is 0 is refused: every
    /// value has one encoding, docs/format.md#integers).
    #[inline]
    pub fn varint(&mut self) -> Option<u64> {
        // One byte, below 128: most keyspace ids and key lengths.
        let b = *self.buf.get(self.pos)?;
        if b < 0x80 {
            self.pos += 1;
            return Some(u64::from(b));
        }
        self.varint_long()
    }

    /// [`Decoder::varint`] of two bytes or more.
    fn varint_long(&mut self) -> Option<u64> {
        let mut result: u64 = 0;
        let mut shift = 0;
        while shift < 64 {
            let b = *self.buf.get(self.pos)?;
            self.pos += 1;
            if shift == 63 && b > 1 {
                return None;
            }
            result |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return (b != 0 || shift == 0).then_some(result);
            }
            shift += 7;
        }
        None
    }

    /// Reads a varint that must fit in 32 bits.
    pub fn varint32(&mut self) -> Option<u32> {
        self.varint().and_then(|v| u32::try_from(v).ok())
    }

    /// Reads `n` raw bytes.
    pub fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let out = self.buf.get(self.pos..end)?;
        self.pos = end;
        Some(out)
    }

    /// Reads a varint length followed by that many bytes.
    pub fn len_prefixed(&mut self) -> Option<&'a [u8]> {
        let n = usize::try_from(self.varint()?).ok()?;
        self.bytes(n)
    }

    /// Reads one byte.
    pub fn u8(&mut self) -> Option<u8> {
        let b = *self.buf.get(self.pos)?;
        self.pos += 1;
        Some(b)
    }

    /// Reads a little-endian u32.
    pub fn u32(&mut self) -> Option<u32> {
        let b = self.bytes(4)?;
        Some(u32::from_le_bytes(b.try_into().ok()?))
    }

    /// Reads a little-endian u64.
    pub fn u64(&mut self) -> Option<u64> {
        let b = self.bytes(8)?;
        Some(u64::from_le_bytes(b.try_into().ok()?))
    }
}

/// Reads a little-endian u32 at `pos` of `buf`, if it is in range.
pub fn get_u32(buf: &[u8], pos: usize) -> Option<u32> {
    let b = buf.get(pos..pos.checked_add(4)?)?;
    Some(u32::from_le_bytes(b.try_into().ok()?))
}

/// Reads a little-endian u64 at `pos` of `buf`, if it is in range.
pub fn get_u64(buf: &[u8], pos: usize) -> Option<u64> {
    let b = buf.get(pos..pos.checked_add(8)?)?;
    Some(u64::from_le_bytes(b.try_into().ok()?))
}

/// The CRC32C of `data`, masked as `docs/format.md#checksums` describes so
/// that a checksum stored beside the bytes it covers is not itself a valid
/// CRC. Computed by folding (`crc_fold`) where the CPU can for long data,
/// about as fast as the `crc32` instruction on bytes in the CPU's cache and
/// faster from memory; with a copy made in the same pass by
/// [`masked_crc_copy`].
pub fn masked_crc(data: &[u8]) -> u32 {
    mask(crc_append(0, data))
}

/// [`masked_crc`] of `src`, copied into `dst` in the same pass.
/// REQUIRES: `dst.len() == src.len()`.
pub fn masked_crc_copy_into(src: &[u8], dst: &mut [u8]) -> u32 {
    mask(crc_fold::crc32c_append_copy(0, src, dst))
}

/// [`masked_crc_copy_into`] a buffer not yet initialised; returns the
/// checksum and the buffer, initialised.
pub fn masked_crc_copy<'d>(src: &[u8], dst: &'d mut [MaybeUninit<u8>]) -> (u32, &'d [u8]) {
    let (crc, copy) = crc_fold::crc32c_append_copy_uninit(0, src, dst);
    (mask(crc), copy)
}

/// The masked CRC32C of the concatenation `a ‖ b`.
pub fn masked_crc2(a: &[u8], b: &[u8]) -> u32 {
    masked_crc_from(crc_append(0, a), b)
}

/// The masked CRC32C of `x ‖ data`, from `crc`, the CRC32C of `x`.
pub fn masked_crc_from(crc: u32, data: &[u8]) -> u32 {
    mask(crc_append(crc, data))
}

/// Masked CRC32C of `a ‖ b ‖ c`.
pub fn masked_crc3(a: &[u8], b: &[u8], c: &[u8]) -> u32 {
    mask(crc_append(crc_append(crc_append(0, a), b), c))
}

/// The CRC32C of `x ‖ data` from `crc`, the CRC32C of `x`: a long `data`
/// by folding where the CPU can, a short one by
/// the `crc32` instruction eight bytes at a time (`crc_fold`).
fn crc_append(crc: u32, data: &[u8]) -> u32 {
    crc_fold::crc32c_append(crc, data)
}

fn mask(crc: u32) -> u32 {
    crc.rotate_right(15).wrapping_add(0xa282_ead8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc_of_parts_is_the_crc_of_the_whole() {
        let data: Vec<u8> = (0..40_000u32).map(|i| (i * 7 + i / 251) as u8).collect();
        for len in [0, 1, 4095, 4096, 4097, 32 << 10, 40_000] {
            let (a, rest) = data.split_at(3);
            let (b, c) = rest.split_at(5);
            let c = &c[..len.min(c.len())];
            let whole = [a, b, c].concat();
            assert_eq!(masked_crc3(a, b, c), masked_crc(&whole), "len {len}");
            assert_eq!(masked_crc2(a, c), masked_crc(&[a, c].concat()), "len {len}");
            let mut copy = vec![std::mem::MaybeUninit::uninit(); whole.len()];
            let (crc, copy) = masked_crc_copy(&whole, &mut copy);
            assert_eq!(
                (crc, copy),
                (masked_crc(&whole), whole.as_slice()),
                "len {len}"
            );
            let mut copy = vec![0; whole.len()];
            assert_eq!(masked_crc_copy_into(&whole, &mut copy), masked_crc(&whole));
            assert_eq!(copy, whole, "len {len}");
        }
    }

    #[test]
    fn varint_round_trip() {
        for v in [
            0u64,
            1,
            127,
            128,
            300,
            16_383,
            16_384,
            u32::MAX as u64,
            u64::MAX,
        ] {
            let mut buf = Vec::new();
            put_varint(&mut buf, v);
            let mut d = Decoder::new(&buf);
            assert_eq!(d.varint(), Some(v));
            assert!(d.is_empty());
        }
    }

    #[test]
    fn truncated_and_overlong_varints_are_refused() {
        assert_eq!(Decoder::new(&[0x80]).varint(), None);
        assert_eq!(Decoder::new(&[0xff; 11]).varint(), None);
        // Longer than the fewest bytes: 0 and 1 in two bytes, 2^7 in three.
        assert_eq!(Decoder::new(&[0x80, 0x00]).varint(), None);
        assert_eq!(Decoder::new(&[0x81, 0x80, 0x80, 0x80, 0x00]).varint(), None);
        assert_eq!(Decoder::new(&[0x80, 0x81, 0x00]).varint(), None);
        assert_eq!(Decoder::new(&[0x00]).varint(), Some(0));
        assert_eq!(Decoder::new(&[0x80, 0x01]).varint(), Some(128));
        assert_eq!(
            Decoder::new(&[0xff, 0xff, 0xff, 0xff, 0x0f]).varint32(),
            Some(u32::MAX)
        );
        assert_eq!(
            Decoder::new(&[0xff, 0xff, 0xff, 0xff, 0x1f]).varint32(),
            None
        );
    }

    #[test]
    fn masked_crc_differs_from_plain() {
        let data = b"lamina";
        assert_ne!(masked_crc(data), crc32c::crc32c(data));
        assert_eq!(masked_crc2(b"lam", b"ina"), masked_crc(data));
    }

    #[test]
    fn the_crc_of_a_large_value_is_the_crc32c_crate_s() {
        let data: Vec<u8> = (0..300_007u32).map(|i| (i * 31 % 251) as u8).collect();
        assert_eq!(masked_crc(&data), mask(crc32c::crc32c(&data)));
        assert_ne!(masked_crc(&data[1..]), masked_crc(&data));
    }

    proptest::proptest! {
        #[test]
        fn the_crc_is_the_crc32c_crate_s(data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..5000)) {
            proptest::prop_assert_eq!(masked_crc(&data), mask(crc32c::crc32c(&data)));
        }
    }
}
