//! Control groups, v1 and v2: where a process is (`/proc/PID/cgroup` and the
//! cgroup mounts of `/proc/self/mountinfo`, here), the limits that apply to
//! it (limits.rs) and what its group uses while the run goes on (sample.rs).
//! Every reader takes the filesystem root as a parameter, so the fixture
//! trees under tests/fixtures/cgroup/ go through the same code as the live
//! system.

pub(crate) mod limits;
pub(crate) mod pids;
pub(crate) mod sample;

use super::{meminfo, read_into};
use crate::model::{
    CgroupDir, CgroupIoSeries, CgroupLimits, CgroupPlace, CgroupRecord, CgroupSample,
    CgroupVersion, Environment, MemorySample, WorkerCgroup, WorkerObservation,
};
use sample::CgroupProbe;
use std::path::Path;

/// One line of `/proc/PID/cgroup`: `id:controllers:path` (v2: `0::path`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Membership<'a> {
    pub id: &'a str,
    /// v1: the hierarchy's controllers ("cpu,cpuacct", "name=systemd"); v2: empty.
    pub controllers: Vec<&'a str>,
    pub path: &'a str,
}

/// The lines of `/proc/PID/cgroup`; malformed lines are skipped.
pub(crate) fn parse_proc_cgroup(text: &str) -> Vec<Membership<'_>> {
    text.lines()
        .filter_map(|line| {
            let mut parts = line.splitn(3, ':');
            let (id, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
            let controllers = controllers.split(',').filter(|c| !c.is_empty()).collect();
            Some(Membership {
                id,
                controllers,
                path,
            })
        })
        .collect()
}

/// A cgroup filesystem mount from `/proc/self/mountinfo`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CgroupMount<'a> {
    pub version: CgroupVersion,
    pub mount_point: &'a str,
    /// The group mounted there ("/" unless a container mounts its own group
    /// without a cgroup namespace).
    pub root: &'a str,
    /// v1: the mount's super options (its controllers among them).
    pub options: &'a str,
}

impl CgroupMount<'_> {
    /// A v1 hierarchy with `controller` ("memory", "blkio", "cpu", "cpuset").
    fn has(&self, controller: &str) -> bool {
        self.version == CgroupVersion::V1 && self.options.split(',').any(|o| o == controller)
    }

    /// The directory of group `path` (as `/proc/PID/cgroup` names it) under
    /// this mount, with `root` the filesystem root; None when the group is
    /// outside what is mounted here.
    fn dir_of(&self, root: &Path, path: &str) -> Option<CgroupDir> {
        let inside = if self.root == "/" {
            path
        } else {
            let rest = path.strip_prefix(self.root)?;
            if !rest.is_empty() && !rest.starts_with('/') {
                return None;
            }
            rest
        };
        let mount_point = root.join(self.mount_point.trim_start_matches('/'));
        let inside = inside.trim_start_matches('/');
        let dir = if inside.is_empty() {
            mount_point.clone()
        } else {
            mount_point.join(inside)
        };
        Some(CgroupDir {
            version: self.version,
            path: path.to_string(),
            dir: dir.to_string_lossy().into_owned(),
            mount_point: mount_point.to_string_lossy().into_owned(),
        })
    }
}

/// The cgroup and cgroup2 mounts listed in mountinfo `text`.
pub(crate) fn parse_cgroup_mounts(text: &str) -> Vec<CgroupMount<'_>> {
    text.lines()
        .filter_map(|line| {
            let (before, after) = line.split_once(" - ")?;
            let mut after = after.split(' ');
            let version = match after.next()? {
                "cgroup" => CgroupVersion::V1,
                "cgroup2" => CgroupVersion::V2,
                _ => return None,
            };
            let options = after.nth(1).unwrap_or("");
            let mut before = before.split(' ');
            let root = before.nth(3)?;
            let mount_point = before.next()?;
            Some(CgroupMount {
                version,
                mount_point,
                root,
                options,
            })
        })
        .collect()
}

/// The v1 name of each controller iolens reads, in `CgroupPlace` order; v2 calls blkio "io".
const CONTROLLERS: [(&str, &str); 4] = [
    ("memory", "memory"),
    ("blkio", "io"),
    ("cpu", "cpu"),
    ("cpuset", "cpuset"),
];

/// The place of a process from its `/proc/PID/cgroup` text and mountinfo
/// text, with `root` the filesystem root. A controller is taken from its v1
/// hierarchy when one is mounted, else from the unified group when the
/// group lists it in `cgroup.controllers`.
pub(crate) fn place_of(proc_cgroup: &str, mountinfo: &str, root: &Path) -> CgroupPlace {
    let members = parse_proc_cgroup(proc_cgroup);
    let mounts = parse_cgroup_mounts(mountinfo);
    let unified = members.iter().find(|m| m.id == "0").and_then(|m| {
        mounts
            .iter()
            .filter(|mount| mount.version == CgroupVersion::V2)
            .find_map(|mount| mount.dir_of(root, m.path))
    });
    let unified_controllers = unified
        .as_ref()
        .and_then(|u| std::fs::read_to_string(Path::new(&u.dir).join("cgroup.controllers")).ok())
        .unwrap_or_default();
    let mut found = CONTROLLERS.iter().map(|&(v1, v2)| {
        let in_v1 = members
            .iter()
            .filter(|m| m.controllers.contains(&v1))
            .find_map(|m| {
                mounts
                    .iter()
                    .filter(|mount| mount.has(v1))
                    .find_map(|mount| mount.dir_of(root, m.path))
            });
        in_v1.or_else(|| {
            unified_controllers
                .split_whitespace()
                .any(|c| c == v2)
                .then(|| unified.clone())
                .flatten()
        })
    });
    CgroupPlace {
        memory: found.next().flatten(),
        io: found.next().flatten(),
        cpu: found.next().flatten(),
        cpuset: found.next().flatten(),
        unified,
    }
}

/// The place of process `pid` ("self" for this one, "PID/task/TID" for a thread) on the live system; None
/// when no cgroup filesystem is mounted or `/proc/PID/cgroup` is unreadable.
pub(crate) fn live_place(pid: &str) -> Option<CgroupPlace> {
    let proc_cgroup = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let place = place_of(&proc_cgroup, &mountinfo, Path::new("/"));
    place.main().is_some().then_some(place)
}

/// The limits of `place` and a probe of its files, with `root` the
/// filesystem root, for targets on `devices` (kernel names); the probe's
/// io series, one per device, beside it.
fn probe(
    place: &CgroupPlace,
    root: &Path,
    devices: &[String],
) -> (CgroupLimits, CgroupProbe, Vec<CgroupIoSeries>) {
    let limits = limits::read(place, root, devices);
    let numbers = limits::device_numbers(root, devices);
    let (probe, io) = CgroupProbe::new(place, &limits, &numbers, root);
    (limits, probe, io)
}

/// The run's cgroup and its limits (see `probe`); the group's own dirty
/// thresholds (v2) from its memory at this moment.
pub(crate) fn record(place: CgroupPlace, root: &Path, devices: &[String]) -> CgroupRecord {
    let (mut limits, mut probe, mut io) = self::probe(&place, root, devices);
    let mut global = MemorySample::default();
    let mut buf = String::new();
    if read_into(root.join("proc/meminfo"), &mut buf) {
        meminfo::parse_into(&buf, &mut global);
    }
    let mut now = CgroupSample::default();
    probe.sample(&global, &mut now, &mut io);
    if now.dirty_threshold_bytes > 0 {
        limits.dirty_threshold_bytes = Some(now.dirty_threshold_bytes);
        limits.dirty_background_threshold_bytes = Some(now.dirty_background_threshold_bytes);
    }
    CgroupRecord {
        place,
        limits,
        workers_elsewhere: Vec::new(),
    }
}

/// The run's cgroup and its limits on the live system, for targets on
/// `devices` (kernel names); None when no cgroup filesystem is mounted.
pub(crate) fn capture(devices: &[String]) -> Option<CgroupRecord> {
    Some(record(live_place("self")?, Path::new("/"), devices))
}

/// The sampler's probe of `place` on the live system and its io series;
/// Err with a note when none of the group's files can be read.
pub(crate) fn live_probe(
    place: &CgroupPlace,
    devices: &[String],
) -> Result<(CgroupProbe, Vec<CgroupIoSeries>), String> {
    let (_, probe, io) = self::probe(place, Path::new("/"), devices);
    if probe.is_empty() {
        let path = place.main().map_or("/", |g| g.path.as_str());
        return Err(format!(
            "cgroup {path}: none of its memory, CPU or io files can be read"
        ));
    }
    Ok((probe, io))
}

/// The group of thread `tid` of process `pid` when it is not `run`'s
/// (compared by the main controller's path); None when it is the same or
/// cannot be read.
pub(crate) fn thread_elsewhere(run: &CgroupPlace, pid: u32, tid: u32) -> Option<String> {
    let place = live_place(&format!("{pid}/task/{tid}"))?;
    let (own, theirs) = (run.main()?, place.main()?);
    (own.path != theirs.path).then(|| theirs.path.clone())
}

/// The workers the sampler saw in another group than the run's, into the
/// environment's cgroup record.
pub(crate) fn record_workers_elsewhere(
    environment: &mut Environment,
    workers: &[WorkerObservation],
) {
    let Some(record) = &mut environment.cgroup else {
        return;
    };
    record.workers_elsewhere = workers
        .iter()
        .filter_map(|w| {
            Some(WorkerCgroup {
                job: w.job.clone(),
                worker: w.worker,
                path: w.cgroup.clone()?,
            })
        })
        .collect();
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn fixture(version: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/cgroup/{version}"))
    }

    fn read(version: &str, file: &str) -> String {
        std::fs::read_to_string(fixture(version).join(file)).expect("read the fixture")
    }

    #[test]
    fn reads_v1_v2_and_hybrid_proc_cgroup_lines() {
        let hybrid = "12:cpu,cpuacct:/bench\n4:memory:/bench\n1:name=systemd:/user.slice\n0::/user.slice/x.scope\n";
        let lines = parse_proc_cgroup(hybrid);
        assert_eq!(lines.len(), 4, "expected 4 lines, got {lines:?}");
        assert_eq!(lines[0].controllers, ["cpu", "cpuacct"]);
        assert_eq!(lines[0].path, "/bench");
        assert_eq!(
            (lines[3].id, lines[3].controllers.len(), lines[3].path),
            ("0", 0, "/user.slice/x.scope"),
            "expected the v2 line, got {:?}",
            lines[3]
        );
        let path_with_colon = parse_proc_cgroup("0::/a:b\n");
        assert_eq!(path_with_colon[0].path, "/a:b");
        assert!(parse_proc_cgroup("garbage\n").is_empty());
    }

    #[test]
    fn reads_cgroup_mounts_and_skips_the_others() {
        let mountinfo = "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n\
             35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n\
             32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw shared:9 - cgroup cgroup rw,cpu,cpuacct\n\
             41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
        let mounts = parse_cgroup_mounts(mountinfo);
        assert_eq!(
            mounts.len(),
            3,
            "expected three cgroup mounts, got {mounts:?}"
        );
        assert!(mounts[0].has("memory") && !mounts[0].has("cpu"));
        assert!(mounts[1].has("cpu") && mounts[1].has("cpuacct"));
        assert_eq!(mounts[1].mount_point, "/sys/fs/cgroup/cpu,cpuacct");
        assert_eq!(mounts[2].version, CgroupVersion::V2);
    }

    #[test]
    fn a_container_mount_of_its_own_group_maps_the_path_below_it() {
        let mountinfo =
            "900 800 0:32 /docker/abc /sys/fs/cgroup/memory ro - cgroup cgroup rw,memory\n";
        let place = place_of("4:memory:/docker/abc/bench\n", mountinfo, Path::new("/"));
        let memory = place.memory.expect("the memory group");
        assert_eq!(memory.dir, "/sys/fs/cgroup/memory/bench");
        assert_eq!(memory.mount_point, "/sys/fs/cgroup/memory");
        assert_eq!(memory.path, "/docker/abc/bench");
        let outside = place_of("4:memory:/docker/abcd\n", mountinfo, Path::new("/"));
        assert_eq!(
            outside.memory, None,
            "expected a group beside the mounted one not found"
        );
    }

    #[test]
    fn finds_the_v1_tree_of_the_fixture() {
        let root = fixture("v1");
        let place = place_of(&read("v1", "proc_cgroup"), &read("v1", "mountinfo"), &root);
        let memory = place.memory.expect("the memory group");
        assert_eq!(
            (memory.version, memory.path.as_str()),
            (CgroupVersion::V1, "/bench/run")
        );
        assert!(
            memory.dir.ends_with("v1/sys/fs/cgroup/memory/bench/run"),
            "expected the bench group's dir, got {}",
            memory.dir
        );
        let io = place.io.expect("the blkio group");
        assert!(io.dir.ends_with("blkio/bench/run"), "got {}", io.dir);
        assert!(place
            .cpu
            .expect("cpu")
            .dir
            .ends_with("cpu,cpuacct/bench/run"));
        assert!(
            place.unified.is_some(),
            "expected the unified group of the hybrid"
        );
    }

    #[test]
    fn finds_the_v2_group_and_its_enabled_controllers() {
        let root = fixture("v2");
        let place = place_of(&read("v2", "proc_cgroup"), &read("v2", "mountinfo"), &root);
        let memory = place.memory.expect("the memory group");
        assert_eq!(
            (memory.version, memory.path.as_str()),
            (CgroupVersion::V2, "/ci/bench")
        );
        assert_eq!(place.io.as_ref(), Some(&memory));
        assert_eq!(place.cpu.as_ref(), Some(&memory));
        assert_eq!(
            place.cpuset, None,
            "expected no cpuset: the group's cgroup.controllers lacks it"
        );
    }

    #[test]
    fn a_thread_of_this_process_is_in_its_group_and_workers_moved_are_recorded() {
        if let Some(run) = live_place("self") {
            let tid = std::fs::read_link("/proc/thread-self")
                .ok()
                .and_then(|p| p.file_name()?.to_str()?.parse().ok())
                .expect("this thread's id");
            let seen = thread_elsewhere(&run, std::process::id(), tid);
            assert_eq!(seen, None, "expected this thread in the run's group");
        }
        let mut environment = Environment {
            cgroup: Some(CgroupRecord::default()),
            ..Default::default()
        };
        let workers = [
            WorkerObservation {
                job: "a".into(),
                worker: 1,
                cgroup: Some("/elsewhere".into()),
                ..Default::default()
            },
            WorkerObservation::default(),
        ];
        record_workers_elsewhere(&mut environment, &workers);
        let elsewhere = &environment.cgroup.unwrap().workers_elsewhere;
        assert_eq!(
            elsewhere,
            &[WorkerCgroup {
                job: "a".into(),
                worker: 1,
                path: "/elsewhere".into()
            }],
            "expected the moved worker only"
        );
    }

    #[test]
    fn a_v2_record_has_the_group_dirty_thresholds_a_v1_record_none() {
        let v2_root = fixture("v2");
        let place = place_of(
            &read("v2", "proc_cgroup"),
            &read("v2", "mountinfo"),
            &v2_root,
        );
        let v2 = record(place, &v2_root, &["loop3".to_string()]);
        // 180 MiB of cache, no room left under memory.high (192 MiB, 190 MiB
        // used: 2 MiB): 182 MiB could be dirty; 20% and 10% of it.
        let could_dirty: u64 = 188743680 + (201326592 - 199229440);
        assert_eq!(
            (
                v2.limits.dirty_threshold_bytes,
                v2.limits.dirty_background_threshold_bytes
            ),
            (Some(could_dirty / 5), Some(could_dirty / 10)),
            "expected the group's thresholds, got {:?}",
            v2.limits
        );
        let v1_root = fixture("v1");
        let place = place_of(
            &read("v1", "proc_cgroup"),
            &read("v1", "mountinfo"),
            &v1_root,
        );
        let v1 = record(place, &v1_root, &["loop3".to_string()]);
        assert_eq!(
            v1.limits.dirty_threshold_bytes, None,
            "v1 has no group dirty limits"
        );
        assert_eq!(v1.limits.memory_max_bytes, Some(128 << 20));
    }
}
