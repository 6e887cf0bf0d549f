//! Stored blocks: compression and the 5-byte block trailer.
//!
//! Layout: docs/format.md#block-trailer.

use super::MAX_BLOCK_LEN;
use crate::coding::{get_u32, masked_crc2};
use crate::error::{Error, Result};
use crate::Compression;
use std::cell::RefCell;
use std::path::Path;

/// Bytes of the trailer after every stored block.
pub const BLOCK_TRAILER_LEN: usize = 5;

/// zstd level used for every block.
const ZSTD_LEVEL: i32 = 3;

/// Largest ratio of decompressed to compressed bytes LZ4 can reach (each
/// length-extension byte adds at most 255 bytes of output), plus slack.
const LZ4_MAX_RATIO: usize = 256;

/// Largest ratio zstd can reach: a 4-byte RLE block yields at most 128 KiB.
const ZSTD_MAX_RATIO: usize = 32 << 10;

/// Data blocks in a row that compression did not shrink enough after which
/// only one data block in [`PROBE_EVERY`] is compressed (see
/// [`BlockCompressor::append_data`]).
const GIVE_UP_AFTER: u32 = 8;

/// While giving up, one data block in this many is still compressed, to
/// notice data that compresses again.
const PROBE_EVERY: u32 = 16;

/// Turns uncompressed blocks into stored blocks with trailers; keeps a zstd
/// context between blocks, and what compressing the table's data blocks
/// has gained so far.
#[derive(Default)]
pub struct BlockCompressor {
    zstd: Option<zstd::bulk::Compressor<'static>>,
    /// Data blocks in a row stored as they are because compressing them
    /// did not shrink them enough.
    incompressible: u32,
    /// Data blocks stored as they are, without trying, since the last try.
    untried: u32,
}

impl std::fmt::Debug for BlockCompressor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockCompressor").finish_non_exhaustive()
    }
}

impl BlockCompressor {
    /// [`BlockCompressor::append`] for a data block, which is not even
    /// compressed once the table's last [`GIVE_UP_AFTER`] data blocks in a
    /// row did not compress, but for one block in [`PROBE_EVERY`]: values
    /// of random bytes (the dbm benchmark's), or already compressed, cost an
    /// LZ4 pass over every block for nothing (a `close` after 10^6 such
    /// puts, which waits for a flush, took a third longer with LZ4: the
    /// `+close` rows of `bench/dbm_bench.py -d lamina`). A tried block that
    /// compresses ends the run.
    pub fn append_data(
        &mut self,
        raw: &[u8],
        compression: Compression,
        out: &mut Vec<u8>,
    ) -> usize {
        if compression == Compression::None {
            return self.append(raw, compression, out);
        }
        if self.incompressible >= GIVE_UP_AFTER && self.untried + 1 < PROBE_EVERY {
            self.untried += 1;
            return self.append(raw, Compression::None, out);
        }
        self.untried = 0;
        let (size, kind) = self.store(raw, compression, out);
        self.incompressible = if kind == Compression::None {
            self.incompressible.saturating_add(1)
        } else {
            0
        };
        size
    }

    /// Appends `raw` to `out` as a stored block followed by its trailer, and
    /// returns the stored size (trailer excluded). The block is stored
    /// compressed with `compression` only if that makes it smaller than
    /// `raw.len() - raw.len() / 8`; otherwise as is.
    pub fn append(&mut self, raw: &[u8], compression: Compression, out: &mut Vec<u8>) -> usize {
        self.store(raw, compression, out).0
    }

    /// [`BlockCompressor::append`], also returning the compression the
    /// block was stored with.
    fn store(
        &mut self,
        raw: &[u8],
        compression: Compression,
        out: &mut Vec<u8>,
    ) -> (usize, Compression) {
        let start = out.len();
        let limit = raw.len() - raw.len() / 8;
        let stored = match compression {
            Compression::None => None,
            Compression::Lz4 => compress_lz4(raw, out),
            Compression::Zstd => self.compress_zstd(raw, out),
        };
        let kind = match stored {
            Some(n) if n < limit => compression,
            _ => {
                out.truncate(start);
                out.extend_from_slice(raw);
                Compression::None
            }
        };
        let size = out.len() - start;
        let kind_byte = kind as u8;
        let crc = masked_crc2(out.get(start..).unwrap_or(&[]), &[kind_byte]);
        out.push(kind_byte);
        out.extend_from_slice(&crc.to_le_bytes());
        (size, kind)
    }

    /// Appends a zstd frame of `raw` to `out`; its size, or `None` on failure
    /// (the caller then stores the block uncompressed).
    fn compress_zstd(&mut self, raw: &[u8], out: &mut Vec<u8>) -> Option<usize> {
        if self.zstd.is_none() {
            self.zstd = zstd::bulk::Compressor::new(ZSTD_LEVEL).ok();
        }
        let cctx = self.zstd.as_mut()?;
        let start = out.len();
        out.resize(start + zstd::zstd_safe::compress_bound(raw.len()), 0);
        let n = cctx.compress_to_buffer(raw, out.get_mut(start..)?).ok()?;
        out.truncate(start + n);
        Some(n)
    }
}

/// Appends `u32 LE uncompressed length ‖ LZ4 block` to `out`; its size.
fn compress_lz4(raw: &[u8], out: &mut Vec<u8>) -> Option<usize> {
    let start = out.len();
    out.extend_from_slice(&u32::try_from(raw.len()).ok()?.to_le_bytes());
    out.resize(
        start + 4 + lz4_flex::block::get_maximum_output_size(raw.len()),
        0,
    );
    let n = lz4_flex::block::compress_into(raw, out.get_mut(start + 4..)?).ok()?;
    out.truncate(start + 4 + n);
    Some(4 + n)
}

thread_local! {
    static ZSTD_DCTX: RefCell<Option<zstd::bulk::Decompressor<'static>>> = const { RefCell::new(None) };
}

/// Checks the trailer of `buf` (a stored block followed by its trailer, read
/// from `offset` of `file`) and returns the uncompressed block.
///
/// Corruption if the checksum does not match, the compression byte is
/// unknown, or the compressed bytes do not decompress to exactly the length
/// they declare (which is bounded before anything is allocated).
pub fn decode_block(mut buf: Vec<u8>, file: &Path, offset: u64) -> Result<Vec<u8>> {
    let (kind, size) = check_stored(&buf, file, offset)?;
    let corrupt = |reason: String| Error::corruption(file, offset, reason);
    let stored = buf.get(..size).unwrap_or(&[]);
    match kind {
        0 => {
            buf.truncate(size);
            Ok(buf)
        }
        1 => decompress_lz4(stored).map_err(corrupt),
        2 => decompress_zstd(stored).map_err(corrupt),
        k => Err(corrupt(format!("unknown block compression type {k}"))),
    }
}

/// Checks the checksum of `buf`, a stored block with its trailer (read
/// from `offset` of `file`), and returns its compression byte and the
/// length of its stored bytes: a block of kind 0 is its first `size` bytes
/// as they are. Corruption if the checksum does not match.
pub fn check_stored(buf: &[u8], file: &Path, offset: u64) -> Result<(u8, usize)> {
    let corrupt = |reason: String| Error::corruption(file, offset, reason);
    let Some(size) = buf.len().checked_sub(BLOCK_TRAILER_LEN) else {
        return Err(corrupt(format!(
            "block of {} bytes has no trailer",
            buf.len()
        )));
    };
    let kind = buf.get(size).copied().unwrap_or(0);
    let stored_crc = get_u32(buf, size + 1).unwrap_or(0);
    let stored = buf.get(..size).unwrap_or(&[]);
    let actual_crc = masked_crc2(stored, &[kind]);
    if stored_crc != actual_crc {
        return Err(corrupt(format!(
            "block checksum mismatch: stored {stored_crc:#010x}, computed {actual_crc:#010x}"
        )));
    }
    Ok((kind, size))
}

fn check_declared(declared: usize, stored: usize, max_ratio: usize) -> Result<(), String> {
    let bound = stored
        .saturating_mul(max_ratio)
        .saturating_add(1 << 17)
        .min(MAX_BLOCK_LEN);
    if declared > bound {
        return Err(format!(
            "compressed block of {stored} bytes declares {declared} bytes uncompressed, over the bound of {bound}"
        ));
    }
    Ok(())
}

fn decompress_lz4(stored: &[u8]) -> Result<Vec<u8>, String> {
    let declared = get_u32(stored, 0).ok_or("LZ4 block lacks its length prefix")? as usize;
    let body = stored.get(4..).unwrap_or(&[]);
    check_declared(declared, body.len(), LZ4_MAX_RATIO)?;
    // Into a buffer of the declared length's capacity, not zeroed first (a
    // compaction decompresses every block of its inputs); the decoder
    // checks every write against it.
    let raw = lz4_flex::block::decompress(body, declared)
        .map_err(|e| format!("LZ4 block does not decompress: {e}"))?;
    let n = raw.len();
    if n != declared {
        return Err(format!(
            "LZ4 block decompresses to {n} bytes, not the {declared} it declares"
        ));
    }
    Ok(raw)
}

fn decompress_zstd(stored: &[u8]) -> Result<Vec<u8>, String> {
    let declared = match zstd::zstd_safe::get_frame_content_size(stored) {
        Ok(Some(n)) => usize::try_from(n).unwrap_or(usize::MAX),
        Ok(None) => return Err("zstd frame does not declare its content size".into()),
        Err(_) => return Err("zstd frame header is malformed".into()),
    };
    check_declared(declared, stored.len(), ZSTD_MAX_RATIO)?;
    let raw = ZSTD_DCTX.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            *slot = Some(zstd::bulk::Decompressor::new().map_err(|e| e.to_string())?);
        }
        match slot.as_mut() {
            Some(d) => d.decompress(stored, declared).map_err(|e| e.to_string()),
            None => Err("no zstd context".to_string()),
        }
    });
    let raw = raw.map_err(|e| format!("zstd frame does not decompress: {e}"))?;
    if raw.len() != declared {
        let n = raw.len();
        return Err(format!(
            "zstd frame decompresses to {n} bytes, not the {declared} it declares"
        ));
    }
    Ok(raw)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::*;

    fn compressible() -> Vec<u8> {
        (0..4000u32).flat_map(|i| (i % 97).to_le_bytes()).collect()
    }

    #[test]
    fn round_trip_every_compression() {
        let f = Path::new("t.sst");
        let mut c = BlockCompressor::default();
        for raw in [compressible(), b"short incompressible".to_vec()] {
            for comp in [Compression::None, Compression::Lz4, Compression::Zstd] {
                let mut out = vec![9, 9];
                let size = c.append(&raw, comp, &mut out);
                assert_eq!(out.len(), 2 + size + BLOCK_TRAILER_LEN);
                let expect = if raw.len() > 100 {
                    comp
                } else {
                    Compression::None
                };
                assert_eq!(out[2 + size], expect as u8, "{comp:?}");
                assert_eq!(decode_block(out[2..].to_vec(), f, 0).unwrap(), raw);
            }
        }
    }

    /// Random bytes: no compression shrinks them.
    fn incompressible(seed: u64) -> Vec<u8> {
        use rand::{RngCore, SeedableRng};
        let mut v = vec![0u8; 4096];
        rand::rngs::StdRng::seed_from_u64(seed).fill_bytes(&mut v);
        v
    }

    /// Appends `raw` as a data block; the compression it was stored with,
    /// after checking that it reads back.
    fn data_block(c: &mut BlockCompressor, raw: &[u8], comp: Compression) -> u8 {
        let mut out = Vec::new();
        let size = c.append_data(raw, comp, &mut out);
        assert_eq!(
            decode_block(out.clone(), Path::new("t.sst"), 0).unwrap(),
            raw
        );
        out[size]
    }

    #[test]
    fn data_blocks_that_do_not_compress_stop_being_compressed_but_for_probes() {
        for comp in [Compression::Lz4, Compression::Zstd] {
            let mut c = BlockCompressor::default();
            for i in 0..GIVE_UP_AFTER {
                data_block(&mut c, &incompressible(u64::from(i)), comp);
            }
            assert_eq!(c.incompressible, GIVE_UP_AFTER);
            // Compressible blocks now are stored as they are until a probe...
            for _ in 1..PROBE_EVERY {
                assert_eq!(data_block(&mut c, &compressible(), comp), 0, "{comp:?}");
            }
            // ...which compresses one, and every block after it again.
            assert_eq!(data_block(&mut c, &compressible(), comp), comp as u8);
            assert_eq!(c.incompressible, 0);
            assert_eq!(data_block(&mut c, &compressible(), comp), comp as u8);
            // Other blocks are always tried.
            let mut c = BlockCompressor::default();
            for i in 0..2 * GIVE_UP_AFTER {
                data_block(&mut c, &incompressible(u64::from(i)), comp);
            }
            let mut out = Vec::new();
            let size = c.append(&compressible(), comp, &mut out);
            assert_eq!(out[size], comp as u8);
        }
        // With no compression asked for, nothing is counted.
        let mut c = BlockCompressor::default();
        for i in 0..2 * GIVE_UP_AFTER {
            assert_eq!(
                data_block(&mut c, &incompressible(u64::from(i)), Compression::None),
                0
            );
        }
        assert_eq!(c.incompressible, 0);
    }

    #[test]
    fn lz4_prefix_is_u32_le_length_and_zstd_frames_carry_content_size() {
        let raw = compressible();
        let mut out = Vec::new();
        let size = BlockCompressor::default().append(&raw, Compression::Lz4, &mut out);
        assert_eq!(get_u32(&out, 0), Some(raw.len() as u32));
        assert_eq!(
            lz4_flex::block::decompress_size_prepended(&out[..size]).unwrap(),
            raw
        );
        let mut out = Vec::new();
        let size = BlockCompressor::default().append(&raw, Compression::Zstd, &mut out);
        let declared = zstd::zstd_safe::get_frame_content_size(&out[..size]).unwrap();
        assert_eq!(declared, Some(raw.len() as u64));
    }

    fn with_trailer(stored: &[u8], kind: u8) -> Vec<u8> {
        let mut v = stored.to_vec();
        v.push(kind);
        v.extend_from_slice(&masked_crc2(stored, &[kind]).to_le_bytes());
        v
    }

    /// An LZ4 block whose length prefix says less or more than its bytes
    /// decompress to is corruption (checksum intact: the writer lied), never
    /// bytes past the buffer nor a short block.
    #[test]
    fn an_lz4_length_prefix_that_lies_is_corruption() {
        let raw = compressible();
        let body = lz4_flex::block::compress(&raw);
        for declared in [
            0,
            1,
            raw.len() / 2,
            raw.len() - 1,
            raw.len() + 1,
            raw.len() * 2,
        ] {
            let mut stored = (declared as u32).to_le_bytes().to_vec();
            stored.extend_from_slice(&body);
            let e = decode_block(with_trailer(&stored, 1), Path::new("t.sst"), 0).unwrap_err();
            assert!(e.is_corruption(), "declared {declared}: {e}");
        }
        let mut stored = (raw.len() as u32).to_le_bytes().to_vec();
        stored.extend_from_slice(&body);
        assert_eq!(
            decode_block(with_trailer(&stored, 1), Path::new("t.sst"), 0).unwrap(),
            raw
        );
    }

    #[test]
    fn damage_is_corruption() {
        let f = Path::new("t.sst");
        let mut out = Vec::new();
        BlockCompressor::default().append(&compressible(), Compression::Lz4, &mut out);
        out[7] ^= 1;
        let e = decode_block(out, f, 42).unwrap_err();
        assert!(e.to_string().contains("checksum mismatch"), "{e}");
        assert!(decode_block(vec![1, 2], f, 0).unwrap_err().is_corruption());
        let e = decode_block(with_trailer(b"abc", 7), f, 0).unwrap_err();
        assert!(e.to_string().contains("compression type 7"), "{e}");
        // A correct checksum over an absurd declared length: refused before allocating.
        let e = decode_block(with_trailer(&[0xff, 0xff, 0xff, 0x7f, 0x10], 1), f, 0).unwrap_err();
        assert!(e.to_string().contains("declares"), "{e}");
        let e = decode_block(with_trailer(&[4, 0, 0, 0, 0x10, b'a'], 1), f, 0).unwrap_err();
        assert!(e.is_corruption(), "{e}");
        let e = decode_block(with_trailer(b"not a zstd frame", 2), f, 0).unwrap_err();
        assert!(e.is_corruption(), "{e}");
    }
}

/// Properties of the block trailer decoder: arbitrary bytes never panic it;
/// an uncompressed block is canonical (decoding then storing it gives the same
/// bytes); compressed ones are not (the compressor's output may change with
/// its version), so their content round-trips instead.
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod decode_properties {
    use super::*;
    use proptest::prelude::*;

    fn with_trailer(stored: &[u8], kind: u8) -> Vec<u8> {
        let mut v = stored.to_vec();
        v.push(kind);
        v.extend_from_slice(&masked_crc2(stored, &[kind]).to_le_bytes());
        v
    }

    fn compression() -> impl Strategy<Value = Compression> {
        prop_oneof![
            Just(Compression::None),
            Just(Compression::Lz4),
            Just(Compression::Zstd)
        ]
    }

    /// Raw bytes from random to very repetitive.
    fn raw() -> impl Strategy<Value = Vec<u8>> {
        (prop::collection::vec(any::<u8>(), 1..64), 1usize..100)
            .prop_map(|(unit, times)| unit.repeat(times))
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

        #[test]
        fn stored_blocks_round_trip(raw in raw(), comp in compression()) {
            let mut out = Vec::new();
            BlockCompressor::default().append(&raw, comp, &mut out);
            prop_assert_eq!(decode_block(out, Path::new("t.sst"), 0).unwrap(), raw);
        }

        /// Arbitrary stored bytes under a good checksum, for every kind byte.
        #[test]
        fn decode_never_panics(stored in prop::collection::vec(any::<u8>(), 0..200), kind in 0u8..4) {
            let block = with_trailer(&stored, kind);
            if let Ok(raw) = decode_block(block.clone(), Path::new("t.sst"), 0) {
                let comp = match kind {
                    0 => Compression::None,
                    1 => Compression::Lz4,
                    _ => Compression::Zstd,
                };
                if comp == Compression::None {
                    let mut out = Vec::new();
                    BlockCompressor::default().append(&raw, comp, &mut out);
                    prop_assert_eq!(out, block);
                }
                let mut out = Vec::new();
                BlockCompressor::default().append(&raw, comp, &mut out);
                prop_assert_eq!(decode_block(out, Path::new("t.sst"), 0).unwrap(), raw);
            }
        }

        #[test]
        fn damaged_compressed_blocks_never_panic(
            raw in raw(),
            comp in compression(),
            at in any::<prop::sample::Index>(),
            x in 1u8..,
        ) {
            let mut out = Vec::new();
            let size = BlockCompressor::default().append(&raw, comp, &mut out);
            let kind = out[size];
            let mut stored = out[..size].to_vec();
            if !stored.is_empty() {
                let i = at.index(stored.len());
                stored[i] ^= x;
            }
            let _ = decode_block(with_trailer(&stored, kind), Path::new("t.sst"), 0);
        }
    }
}
