//! Process and thread facts: CPU time, context switches, faults, page size, thread id.

use std::io;
use std::mem::MaybeUninit;

/// Resource usage of a thread or process, as counted by the kernel.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Rusage {
    /// CPU time in user mode.
    pub user_ns: u64,
    /// CPU time in the kernel.
    pub system_ns: u64,
    /// Context switches while waiting (I/O, locks).
    pub voluntary_ctxsw: u64,
    /// Context switches by preemption.
    pub involuntary_ctxsw: u64,
    /// Page faults served without I/O.
    pub minor_faults: u64,
    /// Page faults that read from a device.
    pub major_faults: u64,
}

impl Rusage {
    /// What was used between `earlier` and `self` (counters only grow).
    pub fn since(&self, earlier: &Rusage) -> Rusage {
        Rusage {
            user_ns: self.user_ns.saturating_sub(earlier.user_ns),
            system_ns: self.system_ns.saturating_sub(earlier.system_ns),
            voluntary_ctxsw: self.voluntary_ctxsw.saturating_sub(earlier.voluntary_ctxsw),
            involuntary_ctxsw: self
                .involuntary_ctxsw
                .saturating_sub(earlier.involuntary_ctxsw),
            minor_faults: self.minor_faults.saturating_sub(earlier.minor_faults),
            major_faults: self.major_faults.saturating_sub(earlier.major_faults),
        }
    }

    /// The usage of two threads together.
    pub fn plus(&self, other: &Rusage) -> Rusage {
        Rusage {
            user_ns: self.user_ns + other.user_ns,
            system_ns: self.system_ns + other.system_ns,
            voluntary_ctxsw: self.voluntary_ctxsw + other.voluntary_ctxsw,
            involuntary_ctxsw: self.involuntary_ctxsw + other.involuntary_ctxsw,
            minor_faults: self.minor_faults + other.minor_faults,
            major_faults: self.major_faults + other.major_faults,
        }
    }
}

fn timeval_ns(tv: libc::timeval) -> u64 {
    tv.tv_sec as u64 * 1_000_000_000 + tv.tv_usec as u64 * 1_000
}

fn rusage(who: libc::c_int) -> io::Result<Rusage> {
    let mut ru = MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage fills the struct rusage `ru` points to.
    if unsafe { libc::getrusage(who, ru.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: zero-initialised and filled by a successful getrusage; all fields are integers.
    let ru = unsafe { ru.assume_init() };
    Ok(Rusage {
        user_ns: timeval_ns(ru.ru_utime),
        system_ns: timeval_ns(ru.ru_stime),
        voluntary_ctxsw: ru.ru_nvcsw as u64,
        involuntary_ctxsw: ru.ru_nivcsw as u64,
        minor_faults: ru.ru_minflt as u64,
        major_faults: ru.ru_majflt as u64,
    })
}

/// Usage of the calling thread (RUSAGE_THREAD).
pub fn thread_rusage() -> io::Result<Rusage> {
    rusage(libc::RUSAGE_THREAD)
}

/// Usage of the whole process, all threads (RUSAGE_SELF).
pub fn process_rusage() -> io::Result<Rusage> {
    rusage(libc::RUSAGE_SELF)
}

/// The size of a memory page in bytes.
pub fn page_size() -> usize {
    // SAFETY: sysconf has no memory arguments.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    // POSIX requires the page size to be available; 4 KiB is the only sane fallback.
    usize::try_from(size).unwrap_or(4096)
}

/// Clock ticks per second (USER_HZ), the unit of `/proc/stat` CPU times.
pub fn clock_ticks_per_sec() -> u64 {
    // SAFETY: sysconf has no memory arguments.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    // USER_HZ is 100 on every Linux architecture iolens builds for.
    u64::try_from(hz).ok().filter(|&h| h > 0).unwrap_or(100)
}

/// Send SIGKILL to process `pid` (a worker process that is stuck).
pub fn kill_process(pid: u32) -> io::Result<()> {
    // SAFETY: kill has no memory arguments; a wrong pid fails with ESRCH or EPERM.
    let ret = unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
    if ret == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Kernel thread id of the calling thread (the id in `/proc/<pid>/task/`).
pub fn gettid() -> u32 {
    // SAFETY: gettid has no arguments and cannot fail.
    unsafe { libc::gettid() as u32 }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn burn_cpu() -> u64 {
        (0..20_000_000u64).fold(0, |acc, x| {
            acc.wrapping_mul(31).wrapping_add(std::hint::black_box(x))
        })
    }

    #[test]
    fn thread_cpu_time_grows_with_work() {
        let before = thread_rusage().unwrap();
        std::hint::black_box(burn_cpu());
        let after = thread_rusage().unwrap();
        assert!(after.user_ns + after.system_ns > before.user_ns + before.system_ns);
    }

    #[test]
    fn process_usage_covers_this_thread() {
        let thread = thread_rusage().unwrap();
        let process = process_rusage().unwrap();
        assert!(process.user_ns >= thread.user_ns);
        assert!(process.minor_faults >= thread.minor_faults);
    }

    #[test]
    fn page_size_is_a_power_of_two() {
        assert!(page_size() >= 4096 && page_size().is_power_of_two());
    }

    #[test]
    fn clock_ticks_are_positive() {
        assert!(clock_ticks_per_sec() > 0);
    }

    #[test]
    fn threads_have_distinct_ids() {
        let main = gettid();
        let other = std::thread::spawn(gettid).join().unwrap();
        assert_ne!(main, other);
        assert_ne!(main, 0);
    }
}
