//! Scheduling of the calling thread: CPU affinity, nice value and I/O priority. Each call
//! affects only the calling thread (Linux keeps all three per thread), so a worker thread
//! can set its own without touching the others.

use std::io;
use std::mem::MaybeUninit;

/// Pins the calling thread to `cpus` (CPU numbers).
pub fn set_thread_affinity(cpus: &[usize]) -> io::Result<()> {
    // SAFETY: an all-zero cpu_set_t is a valid empty set.
    let mut set: libc::cpu_set_t = unsafe { MaybeUninit::zeroed().assume_init() };
    let capacity = 8 * std::mem::size_of::<libc::cpu_set_t>();
    for &cpu in cpus {
        if cpu >= capacity {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        // SAFETY: `cpu` is below the set's capacity, checked above.
        unsafe { libc::CPU_SET(cpu, &mut set) };
    }
    // SAFETY: `set` is a valid cpu_set_t of the size passed; pid 0 is the calling thread.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The CPUs the calling thread may run on.
pub fn thread_affinity() -> io::Result<Vec<usize>> {
    // SAFETY: an all-zero cpu_set_t is a valid empty set.
    let mut set: libc::cpu_set_t = unsafe { MaybeUninit::zeroed().assume_init() };
    // SAFETY: the kernel writes at most size_of_val(&set) bytes into `set`.
    let rc = unsafe { libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    let capacity = 8 * std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: every index is below the set's capacity.
    Ok((0..capacity)
        .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
        .collect())
}

/// Sets the nice value of the calling thread (-20..=19; lowering it needs privilege).
pub fn set_thread_nice(nice: i32) -> io::Result<()> {
    // SAFETY: plain syscall on integers; who = 0 is the calling thread on Linux.
    let rc = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, nice) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The nice value of the calling thread.
pub fn thread_nice() -> io::Result<i32> {
    // getpriority may legitimately return -1, so errors are told apart through errno.
    // SAFETY: writing errno of the calling thread.
    unsafe { *libc::__errno_location() = 0 };
    // SAFETY: plain syscall on integers.
    let nice = unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
    let error = io::Error::last_os_error();
    match error.raw_os_error() {
        Some(0) | None => Ok(nice),
        Some(_) => Err(error),
    }
}

const IOPRIO_WHO_PROCESS: libc::c_long = 1;
const IOPRIO_CLASS_SHIFT: u32 = 13;

/// Sets the I/O priority of the calling thread: `class` 1 realtime, 2 best effort, 3 idle;
/// `level` 0 (highest) to 7.
pub fn set_thread_ioprio(class: u32, level: u32) -> io::Result<()> {
    let prio = libc::c_long::from((class << IOPRIO_CLASS_SHIFT) | level);
    // SAFETY: ioprio_set takes only integers; who = 0 is the calling thread.
    let rc = unsafe { libc::syscall(libc::SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, prio) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The I/O priority of the calling thread as (class, level).
pub fn thread_ioprio() -> io::Result<(u32, u32)> {
    // SAFETY: ioprio_get takes only integers.
    let rc = unsafe { libc::syscall(libc::SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    let prio = rc as u32;
    Ok((
        prio >> IOPRIO_CLASS_SHIFT,
        prio & ((1 << IOPRIO_CLASS_SHIFT) - 1),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn affinity_set_in_a_thread_reads_back_and_stays_in_that_thread() {
        let before = thread_affinity().unwrap();
        let first = before[0];
        std::thread::spawn(move || {
            set_thread_affinity(&[first]).unwrap();
            assert_eq!(thread_affinity().unwrap(), vec![first]);
        })
        .join()
        .unwrap();
        assert_eq!(thread_affinity().unwrap(), before);
        assert!(set_thread_affinity(&[1 << 20]).is_err());
    }

    #[test]
    fn nice_and_ioprio_set_in_a_thread_read_back() {
        std::thread::spawn(|| {
            let nice = thread_nice().unwrap();
            set_thread_nice((nice + 1).min(19)).unwrap();
            assert_eq!(thread_nice().unwrap(), (nice + 1).min(19));
            set_thread_ioprio(2, 6).unwrap();
            assert_eq!(thread_ioprio().unwrap(), (2, 6));
        })
        .join()
        .unwrap();
    }
}
