//! A hint to the CPU to fetch a cache line before it is read, so that the
//! miss overlaps other work (the skip list's search, the memtable's hash
//! index, the checksum of a blob value read from a mapping).

/// Asks the CPU to bring the cache line holding `p` into its caches. A
/// hint: it reads no memory the program sees and never faults, whatever
/// the address (null, or past the end of an allocation, included).
#[inline]
pub(crate) fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: as above: the instruction dereferences nothing the program
    // can observe, and ignores addresses it cannot fetch.
    #[allow(unsafe_code)]
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
