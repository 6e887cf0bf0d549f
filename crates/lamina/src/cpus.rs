//! The CPUs the process may use, against the CPUs the machine has online.

/// Whether the process may use every CPU the machine has online, and more
/// than one: no CPU quota (a container's `cpu.max`, which the time a thread
/// spends yielding would use up, and then the kernel throttles the whole
/// process) and no affinity mask narrower than the machine. Rust's
/// `available_parallelism` counts the quota and the mask; libc's
/// `sysconf(_SC_NPROCESSORS_ONLN)` the CPUs online.
///
/// Asked once per process: both read files of `/proc` and `/sys` (about
/// twenty system calls), which was a fifth of the time of an open that
/// replays one record; a quota changed while the process runs is not seen.
pub(crate) fn all_online_usable() -> bool {
    static ALL: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ALL.get_or_init(|| {
        let usable = std::thread::available_parallelism().map_or(1, |n| n.get());
        online().is_some_and(|online| all_usable(usable, online))
    })
}

/// Whether `usable` CPUs of `online` are every one, and more than one.
fn all_usable(usable: usize, online: usize) -> bool {
    usable > 1 && usable >= online
}

/// CPUs online, if the operating system tells.
fn online() -> Option<usize> {
    #[cfg(unix)]
    {
        // SAFETY: sysconf reads a system constant; it has no preconditions.
        let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
        usize::try_from(n).ok().filter(|&n| n > 0)
    }
    #[cfg(not(unix))]
    {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::all_usable;

    #[test]
    fn a_quota_or_a_mask_below_the_cpus_online_or_a_single_cpu_is_not_all() {
        assert!(all_usable(2, 2));
        assert!(all_usable(64, 64));
        assert!(!all_usable(1, 2), "a quota of one CPU of two");
        assert!(!all_usable(3, 4), "an affinity mask of three of four");
        assert!(!all_usable(1, 1), "one CPU: nothing to yield to");
    }

    #[test]
    fn sysconf_counts_the_cpus_online() {
        let online = super::online().expect("sysconf answers on unix");
        let usable = std::thread::available_parallelism().unwrap().get();
        assert!(online >= usable, "{usable} usable of {online} online");
    }
}
