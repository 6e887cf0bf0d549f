//! The memory budget: how one number (`Options::memory_budget`) is shared
//! between the block cache, the row cache and the memtables, and what it is
//! by default. A pure function of the options; tested as data.
//!
//! The budget `B` is split so that everything lamina holds adds up to about
//! `B`:
//!
//! - each memtable gets `B / 4` (at most 64 MiB); with the two that may wait
//!   for flush, memtables hold at most `3B / 4`;
//! - the cache gets `2B / 3`, the row cache an eighth of that on top
//!   (`B / 12`), and the blob values read more than once another eighth
//!   (`B / 12`, [`HOT_VALUES_SHARE`]); the last sixth is left for what is
//!   not counted: the allocator's free lists and fragmentation, iterators'
//!   and compactions' buffers;
//! - memtables and the index and filter blocks of open tables are *charged*
//!   to the cache (as RocksDB's WriteBufferManager charges memtables to its
//!   block cache): the block cache holds `cache − charged`, never less than
//!   an eighth of `cache`.
//!
//! An option set to something other than its default wins over what the
//! budget derives; a cache size set that way is not charged.
//!
//! The options take their defaults from here, so this module reads them
//! through [`BudgetOptions`] rather than naming their type.

/// The blob values read more than once are kept in memory up to the cache
/// size over this (`blob::HotValues`).
pub(crate) const HOT_VALUES_SHARE: usize = 8;
/// The default memtable size; a memtable of this size is derived from the budget.
pub(crate) const DEFAULT_MEMTABLE_SIZE: usize = 64 << 20;
/// The default cache size; a cache of this size is derived from the budget.
pub(crate) const DEFAULT_CACHE_SIZE: usize = 256 << 20;
/// Smallest and largest default budget, in bytes.
const DEFAULT_BUDGET_RANGE: (u64, u64) = (64 << 20, 1 << 30);
/// The default budget is this fraction (1/n) of the machine's memory.
const DEFAULT_BUDGET_SHARE: u64 = 8;
/// Smallest memtable derived from a budget.
const MIN_MEMTABLE: usize = 64 << 10;

/// The options the budget reads and derives (implemented by `Options`).
pub(crate) trait BudgetOptions {
    /// The budget, `memory_budget`.
    fn memory_budget(&self) -> usize;
    /// The `cache_size` asked for.
    fn cache_size(&self) -> usize;
    /// The `memtable_size` asked for.
    fn memtable_size(&self) -> usize;
    /// Sets `cache_size` and `memtable_size`.
    fn set_sizes(&mut self, cache_size: usize, memtable_size: usize);
}

/// Sizes derived from a budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shares {
    /// Bytes of the block cache before charges (the row cache gets an eighth
    /// of it on top).
    pub cache_size: usize,
    /// Bytes of one memtable.
    pub memtable_size: usize,
    /// Whether memtables and open tables are charged to the block cache.
    pub charged: bool,
}

/// The sizes `opts` asks for: each left at its default is derived from
/// `opts.memory_budget`.
pub(crate) fn shares(opts: &impl BudgetOptions) -> Shares {
    let b = opts.memory_budget();
    let derived_cache = opts.cache_size() == DEFAULT_CACHE_SIZE;
    Shares {
        cache_size: if derived_cache {
            b / 3 * 2
        } else {
            opts.cache_size()
        },
        memtable_size: if opts.memtable_size() == DEFAULT_MEMTABLE_SIZE {
            (b / 4).clamp(MIN_MEMTABLE, DEFAULT_MEMTABLE_SIZE)
        } else {
            opts.memtable_size()
        },
        charged: derived_cache,
    }
}

/// `opts` with the sizes of [`shares`] filled in; also whether charges apply.
pub(crate) fn resolve<O: BudgetOptions>(mut opts: O) -> (O, bool) {
    let s = shares(&opts);
    opts.set_sizes(s.cache_size, s.memtable_size);
    (opts, s.charged)
}

/// The default budget: an eighth of the memory the process may use — the
/// machine's, or its control group's limit where that is lower (a
/// container, or a command run under a memory cap) — at least 64 MiB and
/// at most 1 GiB (64 MiB when neither can be read).
///
/// Found once per process (reading the control group's files took a dozen
/// system calls at every `Options::default()`, so at every open from
/// Python); a limit changed while the process runs is not seen.
pub fn default_memory_budget() -> usize {
    static BUDGET: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *BUDGET.get_or_init(|| {
        let ram = match (machine_memory(), cgroup_memory_limit()) {
            (Some(m), Some(c)) => m.min(c),
            (m, c) => m.or(c).unwrap_or(0),
        };
        let (lo, hi) = DEFAULT_BUDGET_RANGE;
        usize::try_from((ram / DEFAULT_BUDGET_SHARE).clamp(lo, hi)).unwrap_or(lo as usize)
    })
}

/// Whether the process may use less memory than the machine has: its
/// control group's limit is lower (a container, or a command run under a
/// memory cap). Found once per process, as [`default_memory_budget`].
pub(crate) fn memory_capped() -> bool {
    static CAPPED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *CAPPED.get_or_init(|| match (machine_memory(), cgroup_memory_limit()) {
        (Some(m), Some(c)) => c < m,
        (None, Some(_)) => true,
        (_, None) => false,
    })
}

/// The memory limit of this process's control group, if it has one: the
/// lowest limit of its group and the groups above it (cgroup v2's
/// `memory.max`, or v1's `memory.limit_in_bytes`).
fn cgroup_memory_limit() -> Option<u64> {
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    limit_of_groups(&own, |path| std::fs::read_to_string(path).ok())
}

/// The lowest memory limit along the group named in `proc_cgroup` (the text
/// of `/proc/self/cgroup`) and its ancestors, each limit file read through
/// `read`. "max" and v1's near-2^63 "no limit" count as none.
fn limit_of_groups(proc_cgroup: &str, read: impl Fn(&str) -> Option<String>) -> Option<u64> {
    // v2: "0::/path"; v1: "N:memory:/path" (or a list naming memory).
    let (root, file, group) = proc_cgroup.lines().find_map(|line| {
        let mut parts = line.splitn(3, ':');
        let (id, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        if controllers.split(',').any(|c| c == "memory") {
            Some(("/sys/fs/cgroup/memory", "memory.limit_in_bytes", path))
        } else if id == "0" && controllers.is_empty() {
            Some(("/sys/fs/cgroup", "memory.max", path))
        } else {
            None
        }
    })?;
    let mut lowest: Option<u64> = None;
    let mut dir = group.trim_end_matches('/');
    loop {
        let limit = read(&format!("{root}{dir}/{file}"))
            .and_then(|text| text.trim().parse::<u64>().ok())
            .filter(|&l| l < 1 << 62);
        if let Some(l) = limit {
            lowest = Some(lowest.map_or(l, |x| x.min(l)));
        }
        match dir.rfind('/') {
            Some(at) => dir = dir.get(..at).unwrap_or(""),
            None => break,
        }
    }
    lowest
}

/// Hands memory the allocator holds free back to the operating system.
///
/// glibc's allocator raises its thresholds as large blocks are freed, after
/// which freed memory stays in the process: under a 128 MiB budget that was
/// a third of the budget again in resident memory, freed but kept
/// (docs/design.md#memory). Called after each flush and compaction, when a
/// memtable and a compaction's buffers have just been freed; elsewhere a
/// no-op.
pub(crate) fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: malloc_trim only returns free pages of the allocator's own
        // heaps to the kernel; it has no preconditions and touches no
        // memory the program uses.
        unsafe {
            libc::malloc_trim(0);
        }
    }
}

/// Bytes of physical memory, if the operating system tells.
fn machine_memory() -> Option<u64> {
    #[cfg(unix)]
    {
        // SAFETY: sysconf reads a system constant; it has no preconditions.
        let (pages, page) = unsafe {
            (
                libc::sysconf(libc::_SC_PHYS_PAGES),
                libc::sysconf(libc::_SC_PAGESIZE),
            )
        };
        let pages = u64::try_from(pages).ok()?;
        let page = u64::try_from(page).ok()?;
        pages.checked_mul(page)
    }
    #[cfg(not(unix))]
    {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::Options;

    const MIB: usize = 1 << 20;

    fn with(budget: usize, cache: usize, memtable: usize) -> Options {
        Options {
            memory_budget: budget,
            cache_size: cache,
            memtable_size: memtable,
            ..Options::default()
        }
    }

    #[test]
    fn table_of_budgets_and_shares() {
        let d = (DEFAULT_CACHE_SIZE, DEFAULT_MEMTABLE_SIZE);
        // (budget, cache option, memtable option) -> (cache, memtable, charged).
        let cases = [
            ((128 * MIB, d.0, d.1), (89_478_484, 32 * MIB, true)),
            ((1024 * MIB, d.0, d.1), (715_827_882, 64 * MIB, true)),
            ((MIB, d.0, d.1), (699_050, 256 << 10, true)),
            ((256 << 10, d.0, d.1), (174_762, 64 << 10, true)),
            // An explicit option wins and is not charged.
            ((128 * MIB, 8 * MIB, d.1), (8 * MIB, 32 * MIB, false)),
            ((128 * MIB, d.0, MIB), (89_478_484, MIB, true)),
        ];
        for ((budget, cache, mem), (want_cache, want_mem, charged)) in cases {
            let s = shares(&with(budget, cache, mem));
            assert_eq!(
                (s.cache_size, s.memtable_size, s.charged),
                (want_cache, want_mem, charged),
                "budget {budget}"
            );
        }
    }

    #[test]
    fn shares_fit_in_the_budget() {
        for budget in [1 << 20, 3 << 20, 100 << 20, 256 << 20, 1 << 32] {
            let s = shares(&with(budget, DEFAULT_CACHE_SIZE, DEFAULT_MEMTABLE_SIZE));
            // The cache (row cache included) is three quarters of the budget;
            // the active memtable and one being flushed are charged to it.
            assert!(
                s.cache_size + s.cache_size / 8 <= budget / 4 * 3,
                "{budget}"
            );
            assert!(2 * s.memtable_size <= s.cache_size, "{budget}");
        }
    }

    #[test]
    fn a_control_groups_limit_is_the_lowest_along_its_path() {
        let files = |limits: &'static [(&'static str, &'static str)]| {
            move |path: &str| {
                limits
                    .iter()
                    .find(|(p, _)| *p == path)
                    .map(|(_, v)| v.to_string())
            }
        };
        let v2 = "0::/user/job\n";
        let read = files(&[
            ("/sys/fs/cgroup/user/job/memory.max", "max\n"),
            ("/sys/fs/cgroup/user/memory.max", "536870912\n"),
        ]);
        assert_eq!(limit_of_groups(v2, read), Some(512 << 20));
        let v1 = "4:memory:/api/run\n0::/\n";
        let read = files(&[
            (
                "/sys/fs/cgroup/memory/api/run/memory.limit_in_bytes",
                "268435456",
            ),
            (
                "/sys/fs/cgroup/memory/api/memory.limit_in_bytes",
                "9223372036854771712",
            ),
        ]);
        assert_eq!(limit_of_groups(v1, read), Some(256 << 20));
        let none = files(&[("/sys/fs/cgroup/memory.max", "max")]);
        assert_eq!(limit_of_groups("0::/\n", none), None);
        assert_eq!(limit_of_groups("", files(&[])), None);
    }

    #[test]
    fn default_budget_is_within_its_range() {
        let b = default_memory_budget() as u64;
        assert!(
            (DEFAULT_BUDGET_RANGE.0..=DEFAULT_BUDGET_RANGE.1).contains(&b),
            "{b}"
        );
        assert!(machine_memory().is_some_and(|m| m > 0));
    }
}
