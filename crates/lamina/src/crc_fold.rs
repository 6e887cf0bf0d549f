//! The CRC32C of long byte strings by folding: carry-less multiplication
//! (VPCLMULQDQ) 512 bits at a time where the CPU has AVX-512, 256 where it
//! has AVX2, and optionally a copy of the bytes made
//! in the same pass, so that a blob value read from memory is read once to
//! be both verified and copied.
//!
//! The value is the CRC32C (Castagnoli, reflected, as `crc32c` computes it
//! and docs/format.md#checksums specifies) whichever way it is computed;
//! where the CPU lacks AVX2, VPCLMULQDQ or SSE 4.2 the `crc32` instruction
//! of the `crc32c` crate computes it and the copy is a `memcpy`.
//!
//! Why it is not the `crc32c` crate alone: with the crate's CRC and a
//! separate copy, 100 KB values read at random ran 0.89x as fast
//! (`examples/dbbench --num 5000 --value_size 100000 --benchmarks
//! fillrandom,readrandom --reads 400000`, the two builds alternated six
//! times: 120 K against 107 K reads/s at the median). The property tests
//! below hold it to the crate on random bytes of every length and alignment.
//!
//! How folding works. Read a 128-bit piece of the message, little-endian,
//! as a polynomial `A` whose first bit is the highest power; followed by
//! `D` more bits of message it contributes `A·x^D` to the remainder. Split
//! `A` into its first 64 bits `H` (the low quadword) and last 64 bits `L`:
//! `A·x^D = H·x^(D+64) + L·x^D`, and modulo the polynomial `P` that is
//! `H·k1 + L·k2` with `k1 = x^(D+32) mod P` and `k2 = x^(D−32) mod P`, the
//! 32 powers being those a reflected carry-less product of a quadword and
//! a 33-bit constant adds. That sum is at most 96 bits: it is XORed into
//! the piece `D` bits further on, and the message keeps its remainder.
//! Four 256-bit registers fold 128 bytes at a time by `D` = 1024 (four
//! 512-bit ones 256 bytes by `D` = 2048, then into one another by 512 and
//! the halves of the last by 256); they are folded into one another, then into one 128-bit piece, which the `crc32`
//! instruction reduces to the 32-bit register (`crc32(0, H)` then
//! `crc32(·, L)` is `(H·x^96 + L·x^32) mod P`, the piece's remainder). The
//! register a CRC goes on from is XORed into the first 32 bits.

use std::mem::MaybeUninit;

/// Below this many bytes the `crc32` instruction is as fast and folding's
/// set-up is not paid back.
const FOLD_MIN: usize = 256;

/// The CRC32C of `x ‖ data`, from `crc`, the CRC32C of `x` (0 for none).
pub fn crc32c_append(crc: u32, data: &[u8]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    if data.len() >= FOLD_MIN && x86::has_fold() {
        // SAFETY: no destination to write.
        #[allow(unsafe_code)]
        return unsafe { x86::fold(crc, data, None) };
    }
    #[cfg(target_arch = "x86_64")]
    if let Some(c) = x86::short(crc, data) {
        return c;
    }
    crc32c::crc32c_append(crc, data)
}

/// [`crc32c_append`] of `src`, copying `src` into `dst` in the same pass.
/// REQUIRES: `dst.len() == src.len()`.
pub fn crc32c_append_copy(crc: u32, src: &[u8], dst: &mut [u8]) -> u32 {
    assert_eq!(src.len(), dst.len(), "a copy into a buffer of another size");
    // SAFETY: `dst` is as long as `src`, and a `&mut` apart from it.
    #[allow(unsafe_code)]
    unsafe {
        append_copy(crc, src, dst.as_mut_ptr())
    }
}

/// [`crc32c_append_copy`] into a buffer not yet initialised: the CRC, and
/// the buffer, initialised.
pub fn crc32c_append_copy_uninit<'d>(
    crc: u32,
    src: &[u8],
    dst: &'d mut [MaybeUninit<u8>],
) -> (u32, &'d [u8]) {
    assert_eq!(src.len(), dst.len(), "a copy into a buffer of another size");
    // SAFETY: `dst` is as long as `src`, and a `&mut` apart from it; once
    // `append_copy` has written every one of its bytes, they are initialised.
    #[allow(unsafe_code)]
    unsafe {
        let crc = append_copy(crc, src, dst.as_mut_ptr().cast());
        (
            crc,
            std::slice::from_raw_parts(dst.as_ptr().cast::<u8>(), dst.len()),
        )
    }
}

/// The CRC32C of `src` from `crc`, `src` copied to `dst`.
///
/// # Safety
/// `dst` must be writable for `src.len()` bytes and not overlap `src`.
#[allow(unsafe_code)]
unsafe fn append_copy(crc: u32, src: &[u8], dst: *mut u8) -> u32 {
    #[cfg(target_arch = "x86_64")]
    if src.len() >= FOLD_MIN && x86::has_fold() {
        // SAFETY: as this function requires.
        return unsafe { x86::fold(crc, src, Some(dst)) };
    }
    // SAFETY: as this function requires.
    unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst, src.len()) };
    crc32c::crc32c_append(crc, src)
}

/// The reflected Castagnoli polynomial, without its `x^32` term.
#[cfg(any(target_arch = "x86_64", test))]
const POLY: u32 = 0x82f6_3b78;

/// `x^n mod P`, bit-reflected in 32 bits and shifted left by one: the
/// 33-bit constant a reflected carry-less product takes.
#[cfg(any(target_arch = "x86_64", test))]
const fn x_pow_mod(n: u32) -> u64 {
    // x^0 is the top bit of a reflected word; multiplying by x shifts right,
    // and x^32 is what the polynomial reduces it to.
    let mut r: u32 = 1 << 31;
    let mut i = 0;
    while i < n {
        r = if r & 1 == 1 { (r >> 1) ^ POLY } else { r >> 1 };
        i += 1;
    }
    (r as u64) << 1
}

/// The two constants that fold a 128-bit piece `bits` bits forward:
/// `(x^(bits+32) mod P, x^(bits−32) mod P)`.
#[cfg(any(target_arch = "x86_64", test))]
const fn fold_constants(bits: u32) -> (u64, u64) {
    (x_pow_mod(bits + 32), x_pow_mod(bits - 32))
}

// The intrinsics need `unsafe`: they are `target_feature` functions, and
// they load and store through raw pointers.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod x86 {
    use super::fold_constants;
    use crate::prefetch::prefetch;
    use std::arch::x86_64::*;
    use std::sync::OnceLock;

    /// Whether this CPU has the `crc32` instruction (SSE 4.2).
    fn has_crc32() -> bool {
        static HAS: OnceLock<bool> = OnceLock::new();
        *HAS.get_or_init(|| is_x86_feature_detected!("sse4.2"))
    }

    /// The CRC32C of `data` from `crc` by the `crc32` instruction, eight
    /// bytes at a time from the first (unaligned loads cost nothing here),
    /// then four, two and one: the record-sized strings a commit checksums
    /// take one dependent instruction per eight bytes, where aligning first
    /// (as the `crc32c` crate does) adds up to fourteen of a byte each.
    /// `None` where the CPU lacks the instruction.
    pub fn short(crc: u32, data: &[u8]) -> Option<u32> {
        if !has_crc32() {
            return None;
        }
        // SAFETY: `has_crc32` found SSE 4.2, which the function is
        // compiled for; it reads only through the slice.
        Some(unsafe { short_unchecked(crc, data) })
    }

    #[target_feature(enable = "sse4.2")]
    fn short_unchecked(crc: u32, data: &[u8]) -> u32 {
        let mut c = u64::from(!crc);
        let mut words = data.chunks_exact(8);
        for w in &mut words {
            c = _mm_crc32_u64(c, u64::from_le_bytes(w.try_into().unwrap_or([0; 8])));
        }
        let mut c = c as u32;
        let mut rest = words.remainder();
        if let Some((w, r)) = rest.split_first_chunk::<4>() {
            c = _mm_crc32_u32(c, u32::from_le_bytes(*w));
            rest = r;
        }
        if let Some((w, r)) = rest.split_first_chunk::<2>() {
            c = _mm_crc32_u16(c, u16::from_le_bytes(*w));
            rest = r;
        }
        if let Some(&b) = rest.first() {
            c = _mm_crc32_u8(c, b);
        }
        !c
    }

    /// Whether this CPU has what [`fold`] runs on.
    pub fn has_fold() -> bool {
        static HAS: OnceLock<bool> = OnceLock::new();
        *HAS.get_or_init(|| {
            is_x86_feature_detected!("avx2")
                && is_x86_feature_detected!("vpclmulqdq")
                && is_x86_feature_detected!("pclmulqdq")
                && is_x86_feature_detected!("sse4.2")
        })
    }

    /// The CRC32C of `src` from `crc`, copying `src` into `dst` if given.
    ///
    /// # Safety
    /// `dst`, if given, must be writable for `src.len()` bytes and not
    /// overlap `src`.
    pub unsafe fn fold(crc: u32, src: &[u8], dst: Option<*mut u8>) -> u32 {
        assert!(has_fold() && src.len() >= 256);
        // SAFETY: `has_fold` (and `has_fold512`) found the features the
        // functions are compiled for (SSE 4.2 for `short_unchecked` among
        // them); together they read `src.len()` bytes from `src` and write
        // as many to `dst` (the first `head` copied, the rest folded from
        // `dst + head`), as this function requires of its caller.
        unsafe {
            if has_fold512() {
                // The bytes up to `dst`'s next 64-byte boundary first (by
                // the `crc32` instruction, copied as they are), so that
                // every 64-byte store of the loop fills one cache line
                // instead of straddling two.
                let head = dst.map_or(0, |d| d.align_offset(64));
                if let Some(d) = dst.filter(|_| (1..64).contains(&head) && src.len() >= head + 256)
                {
                    let (first, rest) = src.split_at(head);
                    std::ptr::copy_nonoverlapping(first.as_ptr(), d, head);
                    let crc = short_unchecked(crc, first);
                    return fold512_unchecked(crc, rest.as_ptr(), rest.len(), Some(d.add(head)));
                }
                fold512_unchecked(crc, src.as_ptr(), src.len(), dst)
            } else {
                fold_unchecked(crc, src.as_ptr(), src.len(), dst)
            }
        }
    }

    /// Whether this CPU also folds 512 bits at a time (AVX-512 with
    /// VPCLMULQDQ): twice the bytes a carry-less multiplication covers.
    pub fn has_fold512() -> bool {
        static HAS: OnceLock<bool> = OnceLock::new();
        *HAS.get_or_init(|| {
            is_x86_feature_detected!("avx512f")
                && is_x86_feature_detected!("avx512vl")
                && is_x86_feature_detected!("vpclmulqdq")
        })
    }

    /// Two constants in each 128-bit lane: `k1` low, `k2` high.
    #[target_feature(enable = "avx2")]
    fn lanes((k1, k2): (u64, u64)) -> __m256i {
        _mm256_set_epi64x(k2 as i64, k1 as i64, k2 as i64, k1 as i64)
    }

    /// `x` folded forward by the distance whose constants `k` holds, in
    /// each lane.
    #[target_feature(enable = "avx2,vpclmulqdq")]
    fn fold256(x: __m256i, k: __m256i) -> __m256i {
        _mm256_xor_si256(
            _mm256_clmulepi64_epi128::<0x00>(x, k),
            _mm256_clmulepi64_epi128::<0x11>(x, k),
        )
    }

    #[target_feature(enable = "pclmulqdq,sse2")]
    fn fold128(x: __m128i, k: __m128i) -> __m128i {
        _mm_xor_si128(
            _mm_clmulepi64_si128::<0x00>(x, k),
            _mm_clmulepi64_si128::<0x11>(x, k),
        )
    }

    /// Two constants in each 128-bit lane of a 512-bit register.
    #[target_feature(enable = "avx512f")]
    fn lanes512((k1, k2): (u64, u64)) -> __m512i {
        let (k1, k2) = (k1 as i64, k2 as i64);
        _mm512_set_epi64(k2, k1, k2, k1, k2, k1, k2, k1)
    }

    /// `x` folded forward by the distance whose constants `k` holds, in
    /// each lane, XORed with `y`: one three-way XOR.
    #[target_feature(enable = "avx512f,vpclmulqdq")]
    fn fold512_xor(x: __m512i, k: __m512i, y: __m512i) -> __m512i {
        let low = _mm512_clmulepi64_epi128::<0x00>(x, k);
        let high = _mm512_clmulepi64_epi128::<0x11>(x, k);
        _mm512_ternarylogic_epi64::<0x96>(low, high, y)
    }

    /// [`fold_unchecked`] four 512-bit registers (256 bytes) at a time.
    /// REQUIRES: the CPU features enabled; `len >= 256`; `src` readable and
    /// `dst`, if given, writable for `len` bytes, the two not overlapping.
    #[target_feature(enable = "avx512f,avx512vl,vpclmulqdq,avx2,pclmulqdq,sse4.2")]
    pub(super) unsafe fn fold512_unchecked(
        crc: u32,
        src: *const u8,
        len: usize,
        dst: Option<*mut u8>,
    ) -> u32 {
        // SAFETY (every load and store below): each reads or writes inside
        // `src[..len]` or `dst[..len]`: a 64-byte access at `at` only when
        // `at + 64 <= len`, a 32-byte one when `at + 32 <= len`.
        let load = |at: usize| unsafe { _mm512_loadu_si512(src.add(at).cast()) };
        let store = |at: usize, v: __m512i| {
            if let Some(d) = dst {
                unsafe { _mm512_storeu_si512(d.add(at).cast(), v) }
            }
        };
        let mut x = [load(0), load(64), load(128), load(192)];
        for (i, v) in x.iter().enumerate() {
            store(64 * i, *v);
        }
        x[0] = _mm512_xor_si512(x[0], _mm512_zextsi128_si512(_mm_cvtsi32_si128(!crc as i32)));
        let by_2048 = lanes512(const { fold_constants(2048) });
        let mut at = 256;
        while at + 256 <= len {
            // As in `fold_unchecked`, across 4 KiB pages, but 6 KiB ahead:
            // this loop takes a line in less time, so its fetches must run
            // further ahead: 6 KiB ran checksum-and-copy from memory 1.4x as
            // fast as 2 KiB (`cargo bench -p lamina --bench checksum` on a
            // CPU with AVX-512).
            for line in 0..4 {
                prefetch(src.wrapping_add(at + 6144 + 64 * line));
            }
            for (i, acc) in x.iter_mut().enumerate() {
                let y = load(at + 64 * i);
                store(at + 64 * i, y);
                *acc = fold512_xor(*acc, by_2048, y);
            }
            at += 256;
        }
        let by_512 = lanes512(const { fold_constants(512) });
        let mut one = x[0];
        for next in &x[1..] {
            one = fold512_xor(one, by_512, *next);
        }
        // The low 256 bits folded onto the high 256, then 32 bytes a step.
        let by_256 = lanes(const { fold_constants(256) });
        let mut half = _mm256_xor_si256(
            fold256(_mm512_castsi512_si256(one), by_256),
            _mm512_extracti64x4_epi64::<1>(one),
        );
        while at + 32 <= len {
            let y = unsafe { _mm256_loadu_si256(src.add(at).cast()) };
            if let Some(d) = dst {
                unsafe { _mm256_storeu_si256(d.add(at).cast(), y) };
            }
            half = _mm256_xor_si256(fold256(half, by_256), y);
            at += 32;
        }
        // SAFETY: as `finish` requires: `at <= len`, the same buffers.
        unsafe { finish(half, src, at, len, dst) }
    }

    /// REQUIRES: the CPU features enabled; `len >= 128`; `src` readable and
    /// `dst`, if given, writable for `len` bytes, the two not overlapping.
    #[target_feature(enable = "avx2,vpclmulqdq,pclmulqdq,sse4.2")]
    pub(super) unsafe fn fold_unchecked(
        crc: u32,
        src: *const u8,
        len: usize,
        dst: Option<*mut u8>,
    ) -> u32 {
        // SAFETY (every load and store below): each reads or writes inside
        // `src[..len]` or `dst[..len]`: a 32-byte access at `at` only when
        // `at + 32 <= len`, a 16-byte one when `at + 16 <= len`.
        let load = |at: usize| unsafe { _mm256_loadu_si256(src.add(at).cast()) };
        let store = |at: usize, v: __m256i| {
            if let Some(d) = dst {
                unsafe { _mm256_storeu_si256(d.add(at).cast(), v) }
            }
        };
        let mut x = [load(0), load(32), load(64), load(96)];
        for (i, v) in x.iter().enumerate() {
            store(32 * i, *v);
        }
        // The register the CRC goes on from, into the first 32 bits.
        x[0] = _mm256_xor_si256(x[0], _mm256_zextsi128_si256(_mm_cvtsi32_si128(!crc as i32)));
        let by_1024 = lanes(const { fold_constants(1024) });
        let mut at = 128;
        while at + 128 <= len {
            // Two lines 2 KiB ahead: a mapped file's bytes lie in 4 KiB
            // pages, where the CPU's own prefetcher stops. A prefetch never
            // faults, inside `src` or past it.
            prefetch(src.wrapping_add(at + 2048));
            prefetch(src.wrapping_add(at + 2048 + 64));
            for (i, acc) in x.iter_mut().enumerate() {
                let y = load(at + 32 * i);
                store(at + 32 * i, y);
                *acc = _mm256_xor_si256(fold256(*acc, by_1024), y);
            }
            at += 128;
        }
        let by_256 = lanes(const { fold_constants(256) });
        let mut one = x[0];
        for next in &x[1..] {
            one = _mm256_xor_si256(fold256(one, by_256), *next);
        }
        // SAFETY: as `finish` requires: `at <= len`, the same buffers.
        unsafe { finish(one, src, at, len, dst) }
    }

    /// The end of a fold: the 256-bit remainder `one` of `src[..at]`
    /// folded to 128 bits, the rest of `src` folded 16 bytes at a time and
    /// the last few bytes by the `crc32` instruction; each copied to `dst`
    /// if given. REQUIRES: the CPU features enabled; `at <= len`; `src`
    /// readable and `dst`, if given, writable for `len` bytes, the two not
    /// overlapping.
    #[target_feature(enable = "avx2,vpclmulqdq,pclmulqdq,sse4.2")]
    unsafe fn finish(
        one: __m256i,
        src: *const u8,
        mut at: usize,
        len: usize,
        dst: Option<*mut u8>,
    ) -> u32 {
        let (k1, k2) = const { fold_constants(128) };
        let by_128 = _mm_set_epi64x(k2 as i64, k1 as i64);
        let mut piece = _mm_xor_si128(
            fold128(_mm256_castsi256_si128(one), by_128),
            _mm256_extracti128_si256::<1>(one),
        );
        while at + 16 <= len {
            let y = unsafe { _mm_loadu_si128(src.add(at).cast()) };
            if let Some(d) = dst {
                unsafe { _mm_storeu_si128(d.add(at).cast(), y) };
            }
            piece = _mm_xor_si128(fold128(piece, by_128), y);
            at += 16;
        }
        let low = _mm_cvtsi128_si64(piece) as u64;
        let high = _mm_extract_epi64::<1>(piece) as u64;
        let register = _mm_crc32_u64(_mm_crc32_u64(0, low), high) as u32;
        // SAFETY: `at <= len`; the rest of `src` and of `dst`.
        let rest = unsafe { std::slice::from_raw_parts(src.add(at), len - at) };
        if let Some(d) = dst {
            unsafe { std::ptr::copy_nonoverlapping(rest.as_ptr(), d.add(at), rest.len()) };
        }
        crc32c::crc32c_append(!register, rest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{rngs::StdRng, RngCore, SeedableRng};

    fn bytes(n: usize, seed: u64) -> Vec<u8> {
        let mut v = vec![0u8; n];
        StdRng::seed_from_u64(seed).fill_bytes(&mut v);
        v
    }

    #[test]
    fn constants_are_powers_of_x_modulo_the_polynomial() {
        // x^32 mod P is the polynomial itself; x^31 is the lowest bit.
        assert_eq!(x_pow_mod(32), u64::from(POLY) << 1);
        assert_eq!(x_pow_mod(31), 2);
        assert_eq!(x_pow_mod(0), 1 << 32);
    }

    #[test]
    fn short_strings_give_the_crc32c_at_every_length_and_offset() {
        let data = bytes(300, 7);
        for from in 0..9 {
            for len in 0..=FOLD_MIN.min(data.len() - from) {
                let piece = &data[from..from + len];
                for start in [0u32, 0x1234_5678, u32::MAX] {
                    assert_eq!(
                        crc32c_append(start, piece),
                        crc32c::crc32c_append(start, piece),
                        "{len} bytes from {from}, from crc {start:#x}"
                    );
                }
            }
        }
    }

    #[test]
    fn folding_gives_the_crc32c_at_every_length_and_offset() {
        let data = bytes(5000, 7);
        for len in (0..700).chain([1023, 1024, 1025, 4095, 4096, 4097, 4999]) {
            for start in [0, 1, 5, 31] {
                let Some(piece) = data.get(start..start + len) else {
                    continue;
                };
                let want = crc32c::crc32c(piece);
                assert_eq!(crc32c_append(0, piece), want, "len {len} start {start}");
                let mut out = vec![0xAA; len];
                assert_eq!(crc32c_append_copy(0, piece, &mut out), want, "len {len}");
                assert_eq!(out, piece, "copy of len {len} start {start}");
                let mut out = vec![MaybeUninit::uninit(); len];
                let (crc, copy) = crc32c_append_copy_uninit(0, piece, &mut out);
                assert_eq!((crc, copy), (want, piece), "len {len} start {start}");
            }
        }
    }

    /// A fold of one width, called without its feature check.
    #[cfg(target_arch = "x86_64")]
    #[allow(unsafe_code)]
    type FoldFn = unsafe fn(u32, *const u8, usize, Option<*mut u8>) -> u32;

    /// Each width of fold this CPU has, called directly: `crc32c_append`
    /// takes only the widest.
    #[cfg(target_arch = "x86_64")]
    #[test]
    #[allow(unsafe_code)]
    fn every_fold_width_gives_the_crc32c_and_the_copy() {
        let data = bytes(5000, 9);
        for len in (256..700).chain([1023, 1024, 1025, 2047, 2048, 2049, 4095, 4999]) {
            for start in [0, 3] {
                let Some(piece) = data.get(start..start + len) else {
                    continue;
                };
                let want = crc32c::crc32c_append(0x1234_5678, piece);
                let widths: [(bool, FoldFn); 2] = [
                    (x86::has_fold(), x86::fold_unchecked),
                    (
                        x86::has_fold() && x86::has_fold512(),
                        x86::fold512_unchecked,
                    ),
                ];
                for (i, (has, f)) in widths.into_iter().enumerate() {
                    if !has {
                        continue;
                    }
                    let mut out = vec![0u8; len];
                    // SAFETY: the CPU has the width's features; `out` is
                    // as long as `piece`, apart from it.
                    let crc =
                        unsafe { f(0x1234_5678, piece.as_ptr(), len, Some(out.as_mut_ptr())) };
                    assert_eq!(crc, want, "width {i} len {len} start {start}");
                    assert_eq!(out, piece, "width {i} copy of len {len}");
                }
            }
        }
    }

    /// A copy lands right wherever its destination starts in a cache
    /// line (the widest fold first fills the destination up to a 64-byte
    /// boundary), and writes nothing around it.
    #[test]
    fn a_copy_is_right_at_every_destination_alignment() {
        let data = bytes(6000, 13);
        let mut buf = vec![0x5Au8; 6000 + 256];
        // The first byte of `buf` that starts a cache line.
        let line = buf.as_ptr().align_offset(64);
        for shift in 0..64 {
            for len in [
                255,
                256,
                257,
                256 + 63,
                256 + 64,
                319,
                320,
                321,
                1000,
                4099,
                5999,
            ] {
                let piece = &data[..len];
                buf.fill(0x5A);
                let at = line + shift;
                let crc = crc32c_append_copy(7, piece, &mut buf[at..at + len]);
                assert_eq!(
                    crc,
                    crc32c::crc32c_append(7, piece),
                    "shift {shift} len {len}"
                );
                assert_eq!(&buf[at..at + len], piece, "shift {shift} len {len}");
                assert!(buf[..at].iter().chain(&buf[at + len..]).all(|&b| b == 0x5A));
            }
        }
    }

    #[test]
    fn folding_goes_on_from_a_crc() {
        let data = bytes(100_000, 11);
        for cut in [0, 1, 300, 4096, 99_000, 100_000] {
            let (a, b) = data.split_at(cut);
            let whole = crc32c::crc32c(&data);
            assert_eq!(crc32c_append(crc32c::crc32c(a), b), whole, "cut {cut}");
            let mut out = vec![0; b.len()];
            assert_eq!(crc32c_append_copy(crc32c::crc32c(a), b, &mut out), whole);
        }
    }

    #[test]
    fn a_flipped_bit_changes_the_crc() {
        let mut data = bytes(10_000, 3);
        let clean = crc32c_append(0, &data);
        for at in [0, 17, 4000, 9999] {
            data[at] ^= 0x10;
            assert_ne!(crc32c_append(0, &data), clean, "bit flipped at {at}");
            data[at] ^= 0x10;
        }
    }

    proptest::proptest! {
        /// Against the maintained crate, on random bytes of every length up
        /// to a few blocks, from and into every alignment within a cache
        /// line: the CRC alone, with a copy, and with a copy into a buffer
        /// not yet initialised.
        #[test]
        fn folding_and_copying_are_crc32c_at_every_alignment(
            data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..5000),
            crc in proptest::prelude::any::<u32>(),
            src_at in 0usize..64,
            dst_at in 0usize..64,
        ) {
            let len = data.len();
            let want = crc32c::crc32c_append(crc, &data);
            let mut src_buf = vec![0u8; len + 64];
            src_buf[src_at..src_at + len].copy_from_slice(&data);
            let src = &src_buf[src_at..src_at + len];
            proptest::prop_assert_eq!(crc32c_append(crc, src), want);
            let mut dst_buf = vec![0xa5u8; len + 64];
            let got = crc32c_append_copy(crc, src, &mut dst_buf[dst_at..dst_at + len]);
            proptest::prop_assert_eq!(got, want);
            proptest::prop_assert_eq!(&dst_buf[dst_at..dst_at + len], &data[..]);
            let mut uninit = vec![std::mem::MaybeUninit::<u8>::uninit(); len + 64];
            let (got, copy) = crc32c_append_copy_uninit(crc, src, &mut uninit[dst_at..dst_at + len]);
            proptest::prop_assert_eq!(got, want);
            proptest::prop_assert_eq!(copy, &data[..]);
        }

        #[test]
        fn folding_is_crc32c(data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..3000), crc in proptest::prelude::any::<u32>()) {
            proptest::prop_assert_eq!(crc32c_append(crc, &data), crc32c::crc32c_append(crc, &data));
        }
    }
}
