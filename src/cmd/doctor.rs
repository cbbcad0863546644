//! `iolens doctor TARGET`: before a benchmark, inspect a file, directory or
//! block device, show its I/O stack down to what stores the bytes, and say
//! what would distort a measurement of it, each with its fix. Reads only;
//! always exits 0 once the target exists.

use super::common::CmdError;
use super::EXIT_OK;
use crate::diagnose::bytes_text;
use crate::fileset::{device_in_use, has_holes, read_signature};
use crate::model::{CgroupRecord, Environment, Layer, TargetStack};
use crate::observe::cpufreq::{ClockControl, FreqProbe, SYS_CPU};
use crate::observe::environment;
use crate::observe::pagecache::CacheProbe;
use crate::report::text::cgroup;
use crate::report::text::stack::stack_text;
use std::fmt::Write;
use std::fs::File;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;
use std::sync::Arc;

/// What the target itself showed.
#[derive(Debug, Default)]
struct TargetFacts {
    kind: &'static str,
    size: u64,
    /// Bytes allocated on disk (regular files).
    allocated: Option<u64>,
    sparse: bool,
    cached_pages: Option<u64>,
    page_size: u64,
    /// How the device is in use (mounted in any namespace, swap, held), in words.
    in_use: Option<String>,
    signature: Option<String>,
}

/// One line of the verdict.
#[derive(Debug, PartialEq)]
struct Check {
    /// True when it would distort a benchmark.
    problem: bool,
    text: String,
    fix: Option<String>,
}

fn ok(text: String) -> Check {
    Check {
        problem: false,
        text,
        fix: None,
    }
}

fn problem(text: String, fix: &str) -> Check {
    Check {
        problem: true,
        text,
        fix: Some(fix.to_string()),
    }
}

pub(super) fn doctor_command(target: &Path) -> Result<i32, CmdError> {
    let facts = inspect(target).map_err(|e| {
        CmdError::usage(format!("{}: {e}", target.display())).said_by("iolens doctor")
    })?;
    let env = environment::capture([(target, facts.kind == "block device")]);
    let clock = ClockControl::decide(
        &FreqProbe::discover(Path::new(SYS_CPU)),
        &env.cpufreq_governors,
    );
    let checks = checks(&facts, &env, &clock);
    print!("{}", render(target, &facts, &env.stacks, &checks));
    Ok(EXIT_OK)
}

fn inspect(path: &Path) -> std::io::Result<TargetFacts> {
    let meta = std::fs::metadata(path)?;
    let mut facts = TargetFacts {
        page_size: iolens_sys::page_size() as u64,
        ..Default::default()
    };
    if meta.is_dir() {
        facts.kind = "directory";
        return Ok(facts);
    }
    let file = Arc::new(File::open(path)?);
    if meta.file_type().is_block_device() {
        facts.kind = "block device";
        facts.size = iolens_sys::fd::blk_size_bytes(&*file)?;
        facts.in_use = device_in_use(path);
        facts.signature = read_signature(path)?;
    } else {
        facts.kind = "file";
        facts.size = meta.len();
        facts.allocated = Some(meta.blocks() * 512);
        facts.sparse = has_holes(&meta, meta.len());
    }
    let (mut probe, _) = CacheProbe::new(file, facts.size);
    facts.cached_pages = probe.sample().map(|p| p.cached);
    Ok(facts)
}

fn checks(facts: &TargetFacts, env: &Environment, clock: &ClockControl) -> Vec<Check> {
    let mut out = Vec::new();
    match facts.cached_pages {
        Some(0) => out.push(ok("page cache: no pages of the target are cached".into())),
        Some(pages) => out.push(problem(
            format!("page cache: {pages} pages ({}) of the target are cached; buffered reads of them never reach the device, direct writes over them pay an invalidation", bytes_text(pages * facts.page_size)),
            "keep invalidate=1 (iolens' default drops them before each job), or drop them now: echo 1 > /proc/sys/vm/drop_caches",
        )),
        None if facts.kind != "directory" => out.push(ok("page cache: cannot be counted here (no cachestat or mincore)".into())),
        None => {}
    }
    if let Some(use_) = &facts.in_use {
        out.push(problem(
            format!("in use: {use_}; its user's own I/O mixes with the benchmark's, and writing the device destroys what it holds"),
            "benchmark a file on its filesystem instead, or stop what uses the device first",
        ));
    }
    if let Some(what) = &facts.signature {
        out.push(problem(
            format!("holds {what}: a write benchmark would destroy it (iolens refuses without --allow-device-write)"),
            "use an empty device, or a read-only job",
        ));
    }
    if facts.sparse {
        out.push(problem(
            format!(
                "sparse file: {} of {} allocated; reads of holes return zeros without touching the device",
                bytes_text(facts.allocated.unwrap_or(0)),
                bytes_text(facts.size)
            ),
            "write the file fully first (or delete it: iolens lays out new files with data)",
        ));
    } else if facts.kind == "file" {
        out.push(ok("no holes: every byte of the file is allocated".into()));
    }
    for stack in &env.stacks {
        out.extend(stack_checks(stack));
    }
    for device in &env.devices {
        let scheduler = device.scheduler.as_deref().unwrap_or("unknown");
        out.push(ok(format!(
            "device {}: scheduler {scheduler}, {}, write cache {}",
            device.name,
            match device.rotational {
                Some(true) => "rotational",
                Some(false) => "non-rotational",
                None => "rotational unknown",
            },
            device.write_cache.as_deref().unwrap_or("unknown")
        )));
        if device.write_cache.as_deref() == Some("write back") {
            out.push(problem(
                format!(
                    "device {}: a volatile write cache acknowledges writes before they are durable",
                    device.name
                ),
                "add fsync/end_fsync=1 (or sync=1) to write jobs to measure durable writes",
            ));
        }
        if device.stable_writes == Some(true) {
            out.push(problem(
                format!("device {}: stable_writes=1: buffered writes to pages under writeback wait for it", device.name),
                "expect writeback stalls with buffered writes; use direct=1 to measure the device",
            ));
        }
    }
    match clock {
        ClockControl::FollowsLoad(_) => out.push(problem(
            clock.describe(),
            "cpupower frequency-set -g performance",
        )),
        ClockControl::NotExposed | ClockControl::Performance => out.push(ok(clock.describe())),
    }
    if env.udev_running && facts.kind == "block device" {
        out.push(problem(
            "udevd runs: after a writer closes the device, blkid reads it through the page cache".into(),
            "iolens keeps targets open for the whole run; avoid tools that reopen the device during a run",
        ));
    } else {
        out.push(ok(format!(
            "udev: {}",
            if env.udev_running {
                "running (harmless for files)"
            } else {
                "not running"
            }
        )));
    }
    let dirty: Vec<String> = env
        .vm_dirty
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    out.push(ok(format!("dirty limits: {}", dirty.join(" "))));
    if let Some(record) = &env.cgroup {
        out.push(cgroup_check(record));
    }
    if env.damon_running {
        out.push(problem(
            "DAMON proactive reclaim is on: page cache is evicted without memory pressure".into(),
            "measure the device with direct=1; warm-cache results will drift",
        ));
    }
    if let Some(kib) = env.page_reporting_kib {
        out.push(problem(
            format!("free page reporting is active: {}: fresh page cache costs extra CPU to touch", page_reporting_total(kib)),
            "compare buffered runs only with buffered runs under the same memory state; direct=1 avoids it",
        ));
    }
    out
}

/// Free page reporting's counter as what it is: a running total since boot (a page
/// the guest uses again and frees is reported again), which can exceed the RAM;
/// the kernel shows no count of the pages the host holds now.
fn page_reporting_total(kib: u64) -> String {
    format!(
        "{} reported to the host since boot in all (a running total, not what the host holds now)",
        bytes_text(kib * 1024)
    )
}

/// What the target's stack does to a benchmark: data kept in RAM, loop
/// devices that cache their backing file.
fn stack_checks(stack: &TargetStack) -> Vec<Check> {
    const MEASURES_RAM: &str = "a benchmark here measures RAM";
    const DISK_BACKED: &str = "benchmark a file on a disk-backed filesystem or the device itself";
    let mut out = Vec::new();
    for layer in &stack.layers {
        match &layer.layer {
            Layer::Memory {
                fs_type,
                mount_point,
            } if layer.depth == 0 => out.push(problem(
                format!("{fs_type} at {mount_point}, no device: {MEASURES_RAM}"),
                DISK_BACKED,
            )),
            // Below a loop device: the loop's backing file is in RAM.
            Layer::Memory {
                fs_type,
                mount_point,
            } => out.push(problem(
                format!("the data ends in {fs_type} at {mount_point}, no device: {MEASURES_RAM}"),
                DISK_BACKED,
            )),
            Layer::Zram { name, .. } => out.push(problem(
                format!("{name} is a compressed RAM disk: {MEASURES_RAM} and the compressor"),
                DISK_BACKED,
            )),
            Layer::Loop {
                name,
                direct_io: false,
                backing_file,
            } => out.push(problem(
                format!("{name} reads and writes its backing file {backing_file} through the page cache (no direct I/O): even direct=1 jobs on it meet that cache rather than the device"),
                &format!("losetup --direct-io=on /dev/{name}"),
            )),
            _ => {}
        }
    }
    out
}

/// The cgroup limits a run started here meets (on the target's devices for io).
fn cgroup_check(record: &CgroupRecord) -> Check {
    match cgroup::limits_line(record) {
        Some(line) => problem(
            format!("{line}: a benchmark inside a limit measures the limit, not the storage"),
            "run outside the group (or lift its limits) to measure the storage; keep them only to measure what the container gets",
        ),
        None => ok(format!(
            "cgroup {}: no memory, io or CPU limit applies",
            record.place.main().map_or("/", |g| g.path.as_str())
        )),
    }
}

fn render(target: &Path, facts: &TargetFacts, stacks: &[TargetStack], checks: &[Check]) -> String {
    let mut out = String::new();
    let size = if facts.kind == "directory" {
        String::new()
    } else {
        format!(", {}", bytes_text(facts.size))
    };
    let _ = writeln!(
        out,
        "iolens doctor: {} ({}{size})",
        target.display(),
        facts.kind
    );
    for stack in stacks {
        let _ = writeln!(out, "  Stack:");
        for line in stack_text(stack).lines() {
            let _ = writeln!(out, "    {line}");
        }
    }
    for c in checks {
        let _ = writeln!(
            out,
            "  {} {}",
            if c.problem { "FIX " } else { "ok  " },
            c.text
        );
        if let Some(fix) = &c.fix {
            let _ = writeln!(out, "       fix: {fix}");
        }
    }
    let problems = checks.iter().filter(|c| c.problem).count();
    let _ = match problems {
        0 => writeln!(
            out,
            "Nothing found that would distort a benchmark of this target."
        ),
        n => writeln!(
            out,
            "{n} thing(s) above would distort a benchmark of this target."
        ),
    };
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problems(checks: &[Check]) -> Vec<&str> {
        checks
            .iter()
            .filter(|c| c.problem)
            .map(|c| c.text.as_str())
            .collect()
    }

    #[test]
    fn a_cgroup_limit_is_a_problem_an_unlimited_group_is_not() {
        let mut record = CgroupRecord {
            place: crate::model::CgroupPlace {
                memory: Some(crate::model::CgroupDir {
                    path: "/pod".into(),
                    ..Default::default()
                }),
                ..Default::default()
            },
            ..Default::default()
        };
        let unlimited = cgroup_check(&record);
        assert!(
            !unlimited.problem
                && unlimited.text == "cgroup /pod: no memory, io or CPU limit applies",
            "expected an ok line, got {unlimited:?}"
        );
        record.limits.memory_max_bytes = Some(128 << 20);
        let limited = cgroup_check(&record);
        assert!(
            limited.problem
                && limited.text.starts_with("cgroup /pod (v2): memory limit 128.0 MiB: a benchmark inside a limit measures the limit"),
            "expected the limit as a problem, got {limited:?}"
        );
    }

    #[test]
    fn a_clean_file_on_a_quiet_machine_has_no_problems() {
        let facts = TargetFacts {
            kind: "file",
            size: 1 << 30,
            allocated: Some(1 << 30),
            cached_pages: Some(0),
            page_size: 4096,
            ..Default::default()
        };
        let checks = checks(&facts, &Environment::default(), &ClockControl::Performance);
        assert!(problems(&checks).is_empty(), "{checks:?}");
        assert!(render(Path::new("/t"), &facts, &[], &checks)
            .ends_with("Nothing found that would distort a benchmark of this target.\n"));
    }

    #[test]
    fn cached_sparse_and_reclaimed_each_get_a_fix() {
        let facts = TargetFacts {
            kind: "file",
            size: 64 << 20,
            allocated: Some(4 << 20),
            sparse: true,
            cached_pages: Some(256),
            page_size: 4096,
            ..Default::default()
        };
        let env = Environment {
            damon_running: true,
            ..Default::default()
        };
        let clock = ClockControl::FollowsLoad(vec!["powersave".into()]);
        let checks = checks(&facts, &env, &clock);
        let found = problems(&checks);
        assert_eq!(found.len(), 4, "{found:?}");
        assert!(found[0].contains("256 pages (1.0 MiB)"));
        assert!(found[1].contains("4.0 MiB of 64.0 MiB allocated"));
        assert!(checks.iter().filter(|c| c.problem).all(|c| c.fix.is_some()));
    }

    #[test]
    fn free_page_reporting_is_worded_as_a_total_since_boot() {
        let env = Environment {
            page_reporting_kib: Some(28 << 20),
            ..Default::default()
        };
        let checks = checks(&TargetFacts::default(), &env, &ClockControl::Performance);
        assert_eq!(
            problems(&checks),
            ["free page reporting is active: 28.0 GiB reported to the host since boot in all \
              (a running total, not what the host holds now): fresh page cache costs extra CPU to touch"],
            "expected the counter said as a total since boot, not as memory the host holds"
        );
    }

    fn loop_device(direct_io: bool) -> Layer {
        Layer::Loop {
            name: "loop3".into(),
            direct_io,
            backing_file: "/data/img".into(),
        }
    }

    fn tmpfs() -> Layer {
        Layer::Memory {
            fs_type: "tmpfs".into(),
            mount_point: "/dev/shm".into(),
        }
    }

    #[test]
    fn a_target_in_ram_is_a_problem() {
        let checks = stack_checks(&TargetStack::of("/t", vec![(0, tmpfs())]));
        assert_eq!(
            checks,
            [problem(
                "tmpfs at /dev/shm, no device: a benchmark here measures RAM".into(),
                "benchmark a file on a disk-backed filesystem or the device itself"
            )]
        );
    }

    #[test]
    fn a_buffered_loop_is_a_problem_with_its_losetup_fix() {
        let ext4 = Layer::filesystem("ext4", "/", "/dev/vda", &[]);
        let buffered = stack_checks(&TargetStack::of(
            "/t",
            vec![(0, loop_device(false)), (1, ext4.clone())],
        ));
        assert_eq!(buffered.len(), 1, "{buffered:?}");
        assert!(buffered[0].text.starts_with(
            "loop3 reads and writes its backing file /data/img through the page cache"
        ));
        assert_eq!(
            buffered[0].fix.as_deref(),
            Some("losetup --direct-io=on /dev/loop3")
        );
        assert!(stack_checks(&TargetStack::of(
            "/t",
            vec![(0, loop_device(true)), (1, ext4)]
        ))
        .is_empty());
        // A loop over a file in RAM, direct or not, measures RAM.
        let in_ram = stack_checks(&TargetStack::of(
            "/t",
            vec![(0, loop_device(true)), (1, tmpfs())],
        ));
        assert_eq!(
            problems(&in_ram),
            ["the data ends in tmpfs at /dev/shm, no device: a benchmark here measures RAM"]
        );
        let zram = Layer::Zram {
            name: "zram0".into(),
            algorithm: None,
        };
        assert_eq!(
            problems(&stack_checks(&TargetStack::of(
                "/dev/zram0",
                vec![(0, zram)]
            ))),
            ["zram0 is a compressed RAM disk: a benchmark here measures RAM and the compressor"]
        );
    }

    #[test]
    fn the_stack_is_printed_before_the_checks() {
        let facts = TargetFacts {
            kind: "file",
            size: 4096,
            ..Default::default()
        };
        let stacks = [TargetStack::of("/t", vec![(0, tmpfs())])];
        let env = Environment {
            stacks: stacks.to_vec(),
            ..Default::default()
        };
        let checks = checks(&facts, &env, &ClockControl::Performance);
        let text = render(Path::new("/t"), &facts, &stacks, &checks);
        assert!(
            text.starts_with(
                "iolens doctor: /t (file, 4 KiB)\n  Stack:\n    /t\n      tmpfs at /dev/shm: no device, the data lives in RAM\n  "
            ),
            "{text}"
        );
        assert!(text.contains("FIX  tmpfs at /dev/shm, no device"), "{text}");
    }

    #[test]
    fn a_mounted_device_with_a_filesystem_is_named() {
        let facts = TargetFacts {
            kind: "block device",
            in_use: Some("the device is mounted on /mnt".into()),
            signature: Some("a filesystem (ext4), found by blkid".into()),
            cached_pages: Some(0),
            ..Default::default()
        };
        let found = problems(&checks(
            &facts,
            &Environment {
                udev_running: true,
                ..Default::default()
            },
            &ClockControl::NotExposed,
        ))
        .len();
        assert_eq!(found, 3);
    }
}
