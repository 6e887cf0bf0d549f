//! The CPUs the process may use, against the CPUs the machine has online.

/// Whether the process may use every CPU the machine has online, and more
/// than one: no CPU quota (a container's `cpu.max`, which the time a thread
/// spends yielding would use up, and then the kernel throttles the whole
/// process) and no affinity mask narrower than the machine. Rust's
/// `available_parallelism` counts the quota and the mask; libc's
/// `sysconf(_SC_NPROCESSORS_ONLN)` the CPUs online.
pub(crate) fn all_online_usable() -> bool {
    let usable = std::thread::available_parallelism().map_or(1, |n| n.get());
    online().is_some_and(|online| usable > 1 && usable >= online)
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
    #[test]
    fn the_machine_has_cpus_online_and_the_process_some_of_them() {
        let online = super::online().expect("sysconf answers on unix");
        let usable = std::thread::available_parallelism().unwrap().get();
        assert!(usable >= 1 && online >= 1);
        assert_eq!(super::all_online_usable(), usable > 1 && usable >= online);
    }
}
