//! What caps how many processes and threads iolens may start, for the line that says why
//! a worker could not be started: the soft `RLIMIT_NPROC` (`/proc/self/limits`), the
//! `pids.max` of its pids cgroup (v1 or v2) and `kernel.threads-max`.

use super::{parse_cgroup_mounts, parse_proc_cgroup, CgroupMount};
use crate::model::CgroupVersion;
use std::path::Path;

/// The caps in force on the live system, e.g. "RLIMIT_NPROC 60, pids.max 100 (57 in use)
/// in /sys/fs/cgroup/pids/x, kernel.threads-max 192731"; the unlimited ones left out.
pub(crate) fn describe_limits() -> String {
    let read = |path: &str| std::fs::read_to_string(path).unwrap_or_default();
    let pids =
        pids_dir(&read("/proc/self/cgroup"), &read("/proc/self/mountinfo")).and_then(|dir| {
            let file = |name: &str| std::fs::read_to_string(Path::new(&dir).join(name));
            let max = file("pids.max").ok()?.trim().to_string();
            let current = file("pids.current").unwrap_or_default();
            (max != "max").then(|| format!("pids.max {max} ({} in use) in {dir}", current.trim()))
        });
    let threads_max = read("/proc/sys/kernel/threads-max");
    let caps: Vec<String> = nproc_soft_limit(&read("/proc/self/limits"))
        .map(|n| format!("RLIMIT_NPROC {n}"))
        .into_iter()
        .chain(pids)
        .chain(
            Some(threads_max.trim())
                .filter(|t| !t.is_empty())
                .map(|t| format!("kernel.threads-max {t}")),
        )
        .collect();
    match caps.is_empty() {
        true => "no limit found".to_string(),
        false => caps.join(", "),
    }
}

/// The soft "Max processes" of `/proc/PID/limits` text; None when unlimited or absent.
fn nproc_soft_limit(limits: &str) -> Option<u64> {
    let line = limits.lines().find(|l| l.starts_with("Max processes"))?;
    line["Max processes".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The directory of this process's pids cgroup: the v1 `pids` hierarchy, else the unified one.
fn pids_dir(proc_cgroup: &str, mountinfo: &str) -> Option<String> {
    let members = parse_proc_cgroup(proc_cgroup);
    let mounts = parse_cgroup_mounts(mountinfo);
    let in_mount = |path: &str, fits: &dyn Fn(&CgroupMount) -> bool| {
        mounts
            .iter()
            .filter(|m| fits(m))
            .find_map(|m| m.dir_of(Path::new("/"), path))
    };
    let v1 = members
        .iter()
        .find(|m| m.controllers.contains(&"pids"))
        .and_then(|m| in_mount(m.path, &|mount| mount.has("pids")));
    let dir = v1.or_else(|| {
        let unified = members.iter().find(|m| m.id == "0")?;
        in_mount(unified.path, &|mount| mount.version == CgroupVersion::V2)
    })?;
    Some(dir.dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_soft_nproc_limit_is_read_and_unlimited_is_none() {
        let limits = "Limit                     Soft Limit           Hard Limit           Units     \n\
                      Max processes             60                   96365                processes \n";
        assert_eq!(nproc_soft_limit(limits), Some(60));
        let unlimited =
            "Max processes             unlimited            unlimited            processes \n";
        assert_eq!(nproc_soft_limit(unlimited), None);
    }

    #[test]
    fn the_pids_group_is_the_v1_hierarchys_else_the_unified_one() {
        let mountinfo = "31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n\
                         40 31 0:38 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n\
                         41 31 0:39 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n";
        assert_eq!(
            pids_dir("8:pids:/test\n0::/other\n", mountinfo).as_deref(),
            Some("/sys/fs/cgroup/pids/test")
        );
        assert_eq!(
            pids_dir("0::/other\n", mountinfo).as_deref(),
            Some("/sys/fs/cgroup/unified/other")
        );
    }
}
