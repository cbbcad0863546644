//! `ChildCgroup`: a child control group made for one test, under the test
//! process's own group (so every limit above the test still applies), in
//! each v1 hierarchy of the controllers asked for, or in the v2 unified
//! hierarchy where they are enabled there. Programs started with
//! `command` run inside it; on drop, whatever is still in it moves to the
//! parent and the directories are removed, also when the test failed.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// One controller's directory of the child group.
struct GroupDir {
    controller: String,
    /// The group as `/proc/PID/cgroup` names it.
    path: String,
    dir: PathBuf,
}

pub(crate) struct ChildCgroup {
    version: &'static str,
    dirs: Vec<GroupDir>,
}

/// (hierarchy id, controllers, path) of each line of `/proc/self/cgroup`.
fn own_groups() -> Vec<(String, Vec<String>, String)> {
    std::fs::read_to_string("/proc/self/cgroup")
        .unwrap_or_default()
        .lines()
        .filter_map(|line| {
            let mut parts = line.splitn(3, ':');
            let (id, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
            let controllers = controllers
                .split(',')
                .filter(|c| !c.is_empty())
                .map(str::to_string)
                .collect();
            Some((id.to_string(), controllers, path.to_string()))
        })
        .collect()
}

/// (mount point, root, super options) of each cgroup (`v1`) or cgroup2 (`v2`) mount.
fn cgroup_mounts(v2: bool) -> Vec<(PathBuf, String, String)> {
    let wanted = if v2 { "cgroup2" } else { "cgroup" };
    std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap_or_default()
        .lines()
        .filter_map(|line| {
            let (before, after) = line.split_once(" - ")?;
            let mut after = after.split(' ');
            if after.next()? != wanted {
                return None;
            }
            let options = after.nth(1)?.to_string();
            let mut before = before.split(' ');
            let root = before.nth(3)?.to_string();
            let mount_point = before.next()?;
            Some((PathBuf::from(mount_point), root, options))
        })
        .collect()
}

/// The directory of group `path` in a hierarchy mounted at `mount_point` with `root`.
fn dir_of(mount_point: &Path, root: &str, path: &str) -> Option<PathBuf> {
    let inside = if root == "/" {
        path
    } else {
        path.strip_prefix(root)?
    };
    Some(mount_point.join(inside.trim_start_matches('/')))
}

/// The v1 controller name of `controller` ("io" is "blkio" there).
fn v1_name(controller: &str) -> &str {
    match controller {
        "io" => "blkio",
        other => other,
    }
}

fn unique_name(name: &str) -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    format!(
        "iolens-test-{name}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

impl ChildCgroup {
    /// A new child group with `controllers` ("memory", "io" (v1: blkio),
    /// "cpu", "cpuset"); Err with the reason to print when the test must
    /// skip (not root, a controller not mounted or not enabled).
    pub(crate) fn new(controllers: &[&str], name: &str) -> Result<ChildCgroup, String> {
        if !crate::support::is_root() {
            return Err("not root: cannot create a cgroup".into());
        }
        let name = unique_name(name);
        let v1 = Self::new_v1(controllers, &name);
        match v1 {
            Ok(group) => Ok(group),
            Err(v1_reason) => Self::new_v2(controllers, &name)
                .map_err(|v2_reason| format!("{v1_reason}; {v2_reason}")),
        }
    }

    fn new_v1(controllers: &[&str], name: &str) -> Result<ChildCgroup, String> {
        let own = own_groups();
        let mounts = cgroup_mounts(false);
        let mut group = ChildCgroup {
            version: "v1",
            dirs: Vec::new(),
        };
        for controller in controllers {
            let v1 = v1_name(controller);
            let has = |list: &str| list.split(',').any(|c| c == v1);
            let (_, _, own_path) = own
                .iter()
                .find(|(_, list, _)| list.iter().any(|c| c == v1))
                .ok_or_else(|| format!("no cgroup v1 hierarchy has the {v1} controller"))?;
            let (mount_point, root, _) = mounts
                .iter()
                .find(|(_, _, options)| has(options))
                .ok_or_else(|| format!("the cgroup v1 {v1} hierarchy is not mounted here"))?;
            let parent = dir_of(mount_point, root, own_path)
                .ok_or_else(|| format!("the own {v1} group {own_path} is outside its mount"))?;
            let dir = parent.join(name);
            std::fs::create_dir(&dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            let path = format!("{}/{name}", own_path.trim_end_matches('/'));
            group.dirs.push(GroupDir {
                controller: v1.to_string(),
                path,
                dir,
            });
        }
        Ok(group)
    }

    fn new_v2(controllers: &[&str], name: &str) -> Result<ChildCgroup, String> {
        let own = own_groups();
        let (_, _, own_path) = own
            .iter()
            .find(|(id, _, _)| id == "0")
            .ok_or("the process is in no cgroup v2 group")?;
        let (mount_point, root, _) = cgroup_mounts(true)
            .into_iter()
            .next()
            .ok_or("no cgroup2 hierarchy is mounted")?;
        let parent = dir_of(&mount_point, &root, own_path)
            .ok_or_else(|| format!("the own v2 group {own_path} is outside its mount"))?;
        let available = std::fs::read_to_string(parent.join("cgroup.controllers"))
            .map_err(|e| format!("cannot read the v2 controllers: {e}"))?;
        if let Some(missing) = controllers
            .iter()
            .find(|c| !available.split_whitespace().any(|a| a == **c))
        {
            return Err(format!(
                "the cgroup v2 group {own_path} has no {missing} controller"
            ));
        }
        let enable: Vec<String> = controllers.iter().map(|c| format!("+{c}")).collect();
        std::fs::write(parent.join("cgroup.subtree_control"), enable.join(" "))
            .map_err(|e| format!("cannot enable {controllers:?} below {own_path}: {e}"))?;
        let dir = parent.join(name);
        std::fs::create_dir(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        Ok(ChildCgroup {
            version: "v2",
            dirs: vec![GroupDir {
                controller: String::new(),
                path: format!("{}/{name}", own_path.trim_end_matches('/')),
                dir,
            }],
        })
    }

    /// "v1" or "v2".
    pub(crate) fn version(&self) -> &'static str {
        self.version
    }

    /// The group as `/proc/PID/cgroup` names it for `controller` (any under v2).
    pub(crate) fn path(&self, controller: &str) -> &str {
        &self.group(controller).path
    }

    fn group(&self, controller: &str) -> &GroupDir {
        let v1 = v1_name(controller);
        self.dirs
            .iter()
            .find(|d| self.version == "v2" || d.controller == v1)
            .unwrap_or_else(|| panic!("expected a {controller} group, the group has none"))
    }

    /// Write `value` to the group's `file` ("memory.limit_in_bytes",
    /// "blkio.throttle.write_bps_device", "io.max", "cpu.max", …; the
    /// controller is the name's first word).
    pub(crate) fn set(&self, file: &str, value: &str) {
        let controller = file.split('.').next().unwrap_or(file);
        let path = self.group(controller).dir.join(file);
        std::fs::write(&path, value)
            .unwrap_or_else(|e| panic!("expected to write {value:?} to {}: {e}", path.display()));
    }

    /// The group's `file`, trimmed ("memory.usage_in_bytes", "memory.current", …).
    pub(crate) fn get(&self, file: &str) -> String {
        let controller = file.split('.').next().unwrap_or(file);
        let path = self.group(controller).dir.join(file);
        std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("expected to read {}: {e}", path.display()))
            .trim()
            .to_string()
    }

    /// `program` (isolated as support::command's iolens is) started inside the group.
    pub(crate) fn command(&self, program: impl AsRef<OsStr>) -> Command {
        let moves: Vec<String> = self
            .dirs
            .iter()
            .map(|d| format!("echo $$ > '{}/cgroup.procs'", d.dir.display()))
            .collect();
        let script = format!("{} && exec \"$0\" \"$@\"", moves.join(" && "));
        let mut command = crate::support::isolated("sh");
        command
            .env(
                "IOLENS_DB",
                Path::new(env!("CARGO_TARGET_TMPDIR")).join("it-history.db"),
            )
            .arg("-c")
            .arg(script)
            .arg(program);
        command
    }
}

impl Drop for ChildCgroup {
    fn drop(&mut self) {
        for group in &self.dirs {
            let parent_procs = group.dir.parent().map(|p| p.join("cgroup.procs"));
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                let procs =
                    std::fs::read_to_string(group.dir.join("cgroup.procs")).unwrap_or_default();
                for pid in procs.split_whitespace() {
                    if let Some(parent_procs) = &parent_procs {
                        let _ = std::fs::write(parent_procs, pid);
                    }
                }
                if std::fs::remove_dir(&group.dir).is_ok() || !group.dir.exists() {
                    break;
                }
                if Instant::now() > deadline {
                    eprintln!("could not remove the test cgroup {}", group.dir.display());
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
}

#[test]
fn a_child_cgroup_holds_the_programs_it_starts_and_goes_away() {
    let group = match ChildCgroup::new(&["memory"], "support") {
        Ok(group) => group,
        Err(reason) => {
            eprintln!("skipped: {reason}");
            return;
        }
    };
    let limit = if group.version() == "v1" {
        ("memory.limit_in_bytes", "67108864")
    } else {
        ("memory.max", "67108864")
    };
    group.set(limit.0, limit.1);
    let out = group
        .command("cat")
        .arg("/proc/self/cgroup")
        .output()
        .expect("run cat");
    let seen = String::from_utf8_lossy(&out.stdout).into_owned();
    let path = group.path("memory").to_string();
    assert!(
        seen.lines().any(|l| l.ends_with(&format!(":{path}"))),
        "expected cat in {path}, its /proc/self/cgroup says:\n{seen}"
    );
    let dir = group.group("memory").dir.clone();
    drop(group);
    assert!(
        !dir.exists(),
        "expected {} removed on drop, it is still there",
        dir.display()
    );
}
