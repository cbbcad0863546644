//! What the run's group uses, once per sample: memory (usage, page cache,
//! dirty and writeback pages, limit hits, reclaim, pressure), CPU
//! throttling and the io controller's counters on the targets' devices.
//! `CgroupProbe` opens the files once; each sample re-reads those that
//! exist from their start (pread) into one reused buffer: opening a file is
//! most of what reading a small kernel file costs.

use crate::model::{
    CgroupIoCounters, CgroupIoSeries, CgroupPlace, CgroupSample, CgroupVersion, MemorySample,
};
use crate::observe::pressure;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// v1 `memory.stat` names its hierarchical totals with this prefix.
const V1_TOTAL: &str = "total_";

/// Fill the page-cache and reclaim fields of `sample` from `memory.stat`
/// (v2 `file`/`file_dirty`/`file_writeback`/`pgscan`/`pgsteal`; v1
/// `cache`/`dirty`/`writeback`, their `total_` forms, which count the
/// group's children too, preferred).
pub(crate) fn parse_memory_stat(text: &str, version: CgroupVersion, sample: &mut CgroupSample) {
    for line in text.lines() {
        let Some((key, value)) = line.split_once(' ') else {
            continue;
        };
        let Ok(value) = value.trim().parse::<u64>() else {
            continue;
        };
        let (name, total) = match key.strip_prefix(V1_TOTAL) {
            Some(name) if version == CgroupVersion::V1 => (name, true),
            _ => (key, false),
        };
        let field = match (version, name) {
            (CgroupVersion::V2, "file") | (CgroupVersion::V1, "cache") => &mut sample.file_bytes,
            (CgroupVersion::V2, "file_dirty") | (CgroupVersion::V1, "dirty") => {
                &mut sample.dirty_bytes
            }
            (CgroupVersion::V2, "file_writeback") | (CgroupVersion::V1, "writeback") => {
                &mut sample.writeback_bytes
            }
            (CgroupVersion::V2, "pgscan") => &mut sample.pgscan_pages,
            (CgroupVersion::V2, "pgsteal") => &mut sample.pgsteal_pages,
            _ => continue,
        };
        if total || *field == 0 {
            *field = value;
        }
    }
}

/// The counter after `key` in a "key value" per line file (memory.events,
/// memory.oom_control, cpu.stat).
fn keyed(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let (k, v) = line.split_once(' ')?;
        (k == key).then(|| v.trim().parse().ok()).flatten()
    })
}

/// v2 `memory.events`: times over `memory.high`, at `memory.max`, OOM kills.
pub(crate) fn parse_memory_events(text: &str, sample: &mut CgroupSample) {
    sample.memory_high_events = keyed(text, "high").unwrap_or(0);
    sample.memory_max_events = keyed(text, "max").unwrap_or(0);
    sample.oom_kills = keyed(text, "oom_kill").unwrap_or(0);
}

/// `cpu.stat`: periods, throttled periods and throttled time (v2
/// `throttled_usec`, v1 `throttled_time` in ns).
pub(crate) fn parse_cpu_stat(text: &str, sample: &mut CgroupSample) {
    sample.cpu_periods = keyed(text, "nr_periods").unwrap_or(0);
    sample.cpu_throttled_periods = keyed(text, "nr_throttled").unwrap_or(0);
    sample.cpu_throttled_ns = keyed(text, "throttled_usec")
        .map(|us| us * 1000)
        .or_else(|| keyed(text, "throttled_time"))
        .unwrap_or(0);
}

/// v2 `io.stat` ("7:3 rbytes=… wbytes=… rios=… wios=…"): the counters of
/// each of `devices` ("maj:min") into `counters` (same order).
pub(crate) fn parse_io_stat(text: &str, devices: &[String], counters: &mut [CgroupIoCounters]) {
    for line in text.lines() {
        let mut fields = line.split_whitespace();
        let Some(slot) = fields
            .next()
            .and_then(|dev| devices.iter().position(|d| d == dev))
        else {
            continue;
        };
        let c = &mut counters[slot];
        for pair in fields {
            let Some((key, Ok(value))) = pair.split_once('=').map(|(k, v)| (k, v.parse())) else {
                continue;
            };
            match key {
                "rbytes" => c.read_bytes = value,
                "wbytes" => c.write_bytes = value,
                "rios" => c.read_ios = value,
                "wios" => c.write_ios = value,
                _ => {}
            }
        }
    }
}

/// v1 `blkio.throttle.io_service_bytes` (`ios` false) or `io_serviced`
/// (`ios` true), "7:3 Read 4096" per line, into `counters`.
pub(crate) fn parse_blkio(
    text: &str,
    devices: &[String],
    ios: bool,
    counters: &mut [CgroupIoCounters],
) {
    for line in text.lines() {
        let mut fields = line.split_whitespace();
        let (Some(dev), Some(op), Some(Ok(value))) =
            (fields.next(), fields.next(), fields.next().map(str::parse))
        else {
            continue;
        };
        let Some(slot) = devices.iter().position(|d| d == dev) else {
            continue;
        };
        let c = &mut counters[slot];
        match (op, ios) {
            ("Read", false) => c.read_bytes = value,
            ("Write", false) => c.write_bytes = value,
            ("Read", true) => c.read_ios = value,
            ("Write", true) => c.write_ios = value,
            _ => {}
        }
    }
}

/// The `vm.dirty_*` settings that size a group's dirty thresholds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct DirtyShare {
    pub ratio_pct: u64,
    pub background_ratio_pct: u64,
    /// When set (> 0) these replace the ratios, as a share of the machine's dirtyable memory.
    pub bytes: u64,
    pub background_bytes: u64,
}

impl DirtyShare {
    /// Read from `root`'s /proc/sys/vm.
    pub(crate) fn read(root: &Path) -> DirtyShare {
        let vm = root.join("proc/sys/vm");
        let value = |name: &str| {
            std::fs::read_to_string(vm.join(name))
                .ok()
                .and_then(|t| t.trim().parse().ok())
                .unwrap_or(0)
        };
        DirtyShare {
            ratio_pct: value("dirty_ratio"),
            background_ratio_pct: value("dirty_background_ratio"),
            bytes: value("dirty_bytes"),
            background_bytes: value("dirty_background_bytes"),
        }
    }
}

/// The dirty thresholds of a v2 group's writeback domain, (hard, background)
/// bytes, as the kernel sizes them: the share of the memory the group could
/// dirty (its page cache plus the room left under its limit, that room at
/// most the clean cache the rest of the machine holds) that the settings
/// give the whole machine. `ceiling` is the group's tightest `memory.max` /
/// `memory.high`; `global` the machine's memory (its free + cached
/// memory standing for the dirtyable memory).
pub(crate) fn group_dirty_thresholds(
    group: &CgroupSample,
    ceiling: u64,
    global: &MemorySample,
    share: DirtyShare,
) -> (u64, u64) {
    let global_avail = (global.free_bytes + global.cached_bytes).max(1);
    let global_dirty = global.dirty_bytes + global.writeback_bytes;
    let global_clean = global_avail.saturating_sub(global_dirty);
    let group_dirty = group.dirty_bytes + group.writeback_bytes;
    let group_clean = group.file_bytes.saturating_sub(group_dirty);
    let other_clean = global_clean.saturating_sub(group_clean);
    let headroom = ceiling.saturating_sub(group.memory_usage_bytes);
    let avail = group.file_bytes + headroom.min(other_clean);
    let part = |bytes: u64, ratio_pct: u64| -> u64 {
        if bytes > 0 {
            (avail as u128 * bytes as u128 / global_avail as u128) as u64
        } else {
            avail * ratio_pct / 100
        }
    };
    let hard = part(share.bytes, share.ratio_pct);
    let background = part(share.background_bytes, share.background_ratio_pct);
    let background = if background >= hard {
        hard / 2
    } else {
        background
    };
    (hard, background)
}

/// The files of the run's group, opened once.
pub(crate) struct CgroupProbe {
    memory_version: CgroupVersion,
    usage: Option<File>,
    stat: Option<File>,
    /// v2 `memory.events`.
    events: Option<File>,
    /// v1 `memory.failcnt` and `memory.oom_control`.
    failcnt: Option<File>,
    oom_control: Option<File>,
    pressure: Option<File>,
    cpu_stat: Option<File>,
    /// v2 `io.stat`; v1 `blkio.throttle.io_service_bytes` and `io_serviced`.
    io_stat: Option<File>,
    blkio_bytes: Option<File>,
    blkio_ios: Option<File>,
    /// "maj:min" of each device in `Observations::cgroup_io`.
    devices: Vec<String>,
    /// The tightest memory.max/high when the group is its own writeback
    /// domain (v2 with the memory and io controllers and a limit).
    dirty_ceiling: Option<u64>,
    share: DirtyShare,
    /// The io counters of the current sample, reused.
    io: Vec<CgroupIoCounters>,
    /// Every file is read into this (see `read_whole`).
    bytes: Vec<u8>,
}

fn open(dir: &Path, file: &str) -> Option<File> {
    File::open(dir.join(file)).ok()
}

/// The whole of `file`, read from its start with one pread into `scratch`
/// (its length is its size; doubled while a read fills it); None when the
/// read fails (the group was removed) or the text is not UTF-8. A cgroup
/// file is one record, produced whole by each read from offset 0.
fn read_whole<'a>(file: &File, scratch: &'a mut Vec<u8>) -> Option<&'a str> {
    loop {
        let n = file.read_at(scratch, 0).ok()?;
        if n < scratch.len() {
            return std::str::from_utf8(&scratch[..n]).ok();
        }
        let bigger = scratch.len() * 2;
        scratch.resize(bigger, 0);
    }
}

impl CgroupProbe {
    /// The probe of `place` with the limits found for it; `devices` are
    /// (kernel name, "maj:min") of the devices behind the targets; `root`
    /// the filesystem root (for `vm.dirty_*`). The io series it will fill
    /// are returned beside it, one per device.
    pub(crate) fn new(
        place: &CgroupPlace,
        limits: &crate::model::CgroupLimits,
        devices: &[(String, String)],
        root: &Path,
    ) -> (CgroupProbe, Vec<CgroupIoSeries>) {
        let memory = place.memory.as_ref();
        let memory_version = memory.map_or(CgroupVersion::V2, |m| m.version);
        let in_memory = |version: CgroupVersion, file: &str| {
            memory
                .filter(|m| m.version == version)
                .and_then(|m| open(Path::new(&m.dir), file))
        };
        let io = place.io.as_ref();
        let in_io = |version: CgroupVersion, file: &str| {
            io.filter(|g| g.version == version)
                .and_then(|g| open(Path::new(&g.dir), file))
        };
        let writeback_domain = memory_version == CgroupVersion::V2
            && memory.is_some()
            && io.is_some_and(|g| g.version == CgroupVersion::V2);
        let ceiling = [limits.memory_max_bytes, limits.memory_high_bytes]
            .into_iter()
            .flatten()
            .min();
        let probe = CgroupProbe {
            memory_version,
            usage: in_memory(CgroupVersion::V1, "memory.usage_in_bytes")
                .or_else(|| in_memory(CgroupVersion::V2, "memory.current")),
            stat: memory.and_then(|m| open(Path::new(&m.dir), "memory.stat")),
            events: in_memory(CgroupVersion::V2, "memory.events"),
            failcnt: in_memory(CgroupVersion::V1, "memory.failcnt"),
            oom_control: in_memory(CgroupVersion::V1, "memory.oom_control"),
            pressure: place
                .unified
                .as_ref()
                .filter(|u| u.path != "/")
                .and_then(|u| open(Path::new(&u.dir), "memory.pressure")),
            cpu_stat: place
                .cpu
                .as_ref()
                .and_then(|g| open(Path::new(&g.dir), "cpu.stat")),
            io_stat: in_io(CgroupVersion::V2, "io.stat"),
            blkio_bytes: in_io(CgroupVersion::V1, "blkio.throttle.io_service_bytes"),
            blkio_ios: in_io(CgroupVersion::V1, "blkio.throttle.io_serviced"),
            devices: devices.iter().map(|(_, dev)| dev.clone()).collect(),
            dirty_ceiling: ceiling.filter(|_| writeback_domain),
            share: DirtyShare::read(root),
            io: vec![CgroupIoCounters::default(); devices.len()],
            bytes: vec![0; 16 << 10],
        };
        let series = devices
            .iter()
            .map(|(name, dev)| CgroupIoSeries {
                device: dev.clone(),
                name: name.clone(),
                counter_series: Vec::new(),
            })
            .collect();
        (probe, series)
    }

    /// Whether none of the group's files could be opened.
    pub(crate) fn is_empty(&self) -> bool {
        [
            &self.usage,
            &self.stat,
            &self.events,
            &self.failcnt,
            &self.oom_control,
            &self.pressure,
            &self.cpu_stat,
            &self.io_stat,
            &self.blkio_bytes,
            &self.blkio_ios,
        ]
        .iter()
        .all(|f| f.is_none())
    }

    /// One sample into `sample`, the io counters pushed onto `io` (one
    /// series per device); `global` is the machine's memory at the same
    /// moment. False when a file that was open could not be read.
    pub(crate) fn sample(
        &mut self,
        global: &MemorySample,
        sample: &mut CgroupSample,
        io: &mut [CgroupIoSeries],
    ) -> bool {
        let mut all_read = true;
        let bytes = &mut self.bytes;
        let mut read = |file: &Option<File>, parse: &mut dyn FnMut(&str)| {
            if let Some(file) = file {
                match read_whole(file, bytes) {
                    Some(text) => parse(text),
                    None => all_read = false,
                }
            }
        };
        let number = |text: &str| text.trim().parse().unwrap_or(0);
        read(&self.usage, &mut |t| sample.memory_usage_bytes = number(t));
        read(&self.stat, &mut |t| {
            parse_memory_stat(t, self.memory_version, sample)
        });
        read(&self.events, &mut |t| parse_memory_events(t, sample));
        read(&self.failcnt, &mut |t| sample.memory_max_events = number(t));
        read(&self.oom_control, &mut |t| {
            sample.oom_kills = keyed(t, "oom_kill").unwrap_or(0)
        });
        read(&self.pressure, &mut |t| {
            (sample.memory_some_us, sample.memory_full_us) =
                pressure::parse_totals(t).unwrap_or_default()
        });
        read(&self.cpu_stat, &mut |t| parse_cpu_stat(t, sample));
        let counters = &mut self.io;
        counters.fill(CgroupIoCounters::default());
        let devices = &self.devices;
        read(&self.io_stat, &mut |t| parse_io_stat(t, devices, counters));
        read(&self.blkio_bytes, &mut |t| {
            parse_blkio(t, devices, false, counters)
        });
        read(&self.blkio_ios, &mut |t| {
            parse_blkio(t, devices, true, counters)
        });
        for (series, counters) in io.iter_mut().zip(counters.iter()) {
            series.counter_series.push(*counters);
        }
        if let Some(ceiling) = self.dirty_ceiling {
            (
                sample.dirty_threshold_bytes,
                sample.dirty_background_threshold_bytes,
            ) = group_dirty_thresholds(sample, ceiling, global, self.share);
        }
        all_read
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::cgroup::tests::fixture;
    use crate::observe::cgroup::{limits, place_of};

    #[test]
    fn a_file_larger_than_the_scratch_buffer_is_read_whole() {
        let dir = crate::testutil::scratch_dir();
        let text = "x".repeat(100) + "\n";
        let path = dir.path().join("memory.stat");
        std::fs::write(&path, &text).unwrap();
        let file = File::open(&path).unwrap();
        let mut scratch = vec![0; 16];
        assert_eq!(read_whole(&file, &mut scratch), Some(text.as_str()));
        assert_eq!(
            read_whole(&file, &mut scratch),
            Some(text.as_str()),
            "expected the same text read again"
        );
    }

    #[test]
    fn a_file_that_cannot_be_read_is_reported_and_the_rest_still_read() {
        let dir = crate::testutil::scratch_dir();
        std::fs::write(dir.path().join("memory.current"), "4096\n").unwrap();
        std::fs::create_dir(dir.path().join("memory.stat")).unwrap();
        let group = crate::model::CgroupDir {
            dir: dir.path().display().to_string(),
            mount_point: dir.path().display().to_string(),
            ..Default::default()
        };
        let place = CgroupPlace {
            memory: Some(group),
            ..Default::default()
        };
        let limits = crate::model::CgroupLimits::default();
        let (mut probe, mut io) = CgroupProbe::new(&place, &limits, &[], dir.path());
        let mut s = CgroupSample::default();
        let all = probe.sample(&MemorySample::default(), &mut s, &mut io);
        assert!(!all, "expected the unreadable memory.stat reported");
        assert_eq!(
            s.memory_usage_bytes, 4096,
            "expected memory.current read all the same"
        );
    }

    #[test]
    fn reads_memory_stat_of_v2() {
        let mut s = CgroupSample::default();
        let text = "anon 4096\nfile 8192\nfile_dirty 4096\nfile_writeback 0\npgscan 7\npgsteal 5\n";
        parse_memory_stat(text, CgroupVersion::V2, &mut s);
        assert_eq!(
            (
                s.file_bytes,
                s.dirty_bytes,
                s.writeback_bytes,
                s.pgscan_pages,
                s.pgsteal_pages
            ),
            (8192, 4096, 0, 7, 5),
            "got {s:?}"
        );
    }

    #[test]
    fn reads_memory_stat_of_v1_preferring_the_hierarchical_totals() {
        let mut s = CgroupSample::default();
        let text = "cache 100\ndirty 10\nwriteback 1\ntotal_cache 300\ntotal_dirty 30\ntotal_writeback 3\n";
        parse_memory_stat(text, CgroupVersion::V1, &mut s);
        assert_eq!(
            (s.file_bytes, s.dirty_bytes, s.writeback_bytes),
            (300, 30, 3),
            "got {s:?}"
        );
        let mut own = CgroupSample::default();
        parse_memory_stat("cache 100\ndirty 10\n", CgroupVersion::V1, &mut own);
        assert_eq!(
            (own.file_bytes, own.dirty_bytes),
            (100, 10),
            "expected the group's own without totals"
        );
    }

    #[test]
    fn reads_cpu_stat_of_both_versions_in_nanoseconds() {
        let mut v2 = CgroupSample::default();
        parse_cpu_stat(
            "nr_periods 150\nnr_throttled 87\nthrottled_usec 4350000\n",
            &mut v2,
        );
        let mut v1 = CgroupSample::default();
        parse_cpu_stat(
            "nr_periods 150\nnr_throttled 87\nthrottled_time 4350000000\n",
            &mut v1,
        );
        assert_eq!((v2.cpu_periods, v2.cpu_throttled_periods), (150, 87));
        assert_eq!(v2.cpu_throttled_ns, 4_350_000_000);
        assert_eq!(v1.cpu_throttled_ns, 4_350_000_000);
    }

    #[test]
    fn reads_io_counters_of_the_asked_devices_only() {
        let devices = vec!["7:3".to_string()];
        let mut c = vec![CgroupIoCounters::default()];
        parse_io_stat(
            "8:0 rbytes=9 wbytes=9 rios=9 wios=9\n7:3 rbytes=1 wbytes=2 rios=3 wios=4 dbytes=0\n",
            &devices,
            &mut c,
        );
        assert_eq!(
            c[0],
            CgroupIoCounters {
                read_bytes: 1,
                write_bytes: 2,
                read_ios: 3,
                write_ios: 4
            }
        );
        let mut v1 = vec![CgroupIoCounters::default()];
        parse_blkio(
            "7:3 Read 10\n7:3 Write 20\n7:3 Total 30\n8:0 Read 9\nTotal 39\n",
            &devices,
            false,
            &mut v1,
        );
        parse_blkio("7:3 Read 1\n7:3 Write 2\n", &devices, true, &mut v1);
        assert_eq!(
            v1[0],
            CgroupIoCounters {
                read_bytes: 10,
                write_bytes: 20,
                read_ios: 1,
                write_ios: 2
            }
        );
    }

    #[test]
    fn a_group_dirty_threshold_is_the_ratio_of_what_it_could_dirty() {
        let group = CgroupSample {
            memory_usage_bytes: 100 << 20,
            file_bytes: 80 << 20,
            dirty_bytes: 20 << 20,
            ..Default::default()
        };
        let global = MemorySample {
            free_bytes: 4 << 30,
            cached_bytes: 1 << 30,
            ..Default::default()
        };
        let share = DirtyShare {
            ratio_pct: 20,
            background_ratio_pct: 10,
            ..Default::default()
        };
        // 80 MiB of cache + 28 MiB of room under a 128 MiB limit = 108 MiB.
        let (hard, background) = group_dirty_thresholds(&group, 128 << 20, &global, share);
        assert_eq!((hard, background), ((108 << 20) / 5, (108 << 20) / 10));
        let by_bytes = DirtyShare {
            bytes: 1 << 30,
            background_bytes: 1 << 30,
            ..share
        };
        let (hard, background) = group_dirty_thresholds(&group, 128 << 20, &global, by_bytes);
        assert_eq!(
            hard,
            (108 << 20) / 5,
            "expected 1 GiB of 5 GiB dirtyable: a fifth"
        );
        assert_eq!(
            background,
            hard / 2,
            "expected a background at or above the hard threshold halved"
        );
    }

    fn probe_of(version: &str) -> (CgroupProbe, Vec<CgroupIoSeries>) {
        let root = fixture(version);
        let text = |f: &str| std::fs::read_to_string(root.join(f)).unwrap();
        let place = place_of(&text("proc_cgroup"), &text("mountinfo"), &root);
        let limits = limits::read(&place, &root, &["loop3".to_string()]);
        CgroupProbe::new(&place, &limits, &[("loop3".into(), "7:3".into())], &root)
    }

    #[test]
    fn samples_the_v1_fixture_tree() {
        let (mut probe, mut io) = probe_of("v1");
        let mut s = CgroupSample::default();
        let all = probe.sample(&MemorySample::default(), &mut s, &mut io);
        assert!(all, "expected every file found to be read");
        assert_eq!(s.memory_usage_bytes, 134115328);
        assert_eq!(
            (s.file_bytes, s.dirty_bytes, s.writeback_bytes),
            (125829120, 30 << 20, 8 << 20)
        );
        assert_eq!((s.memory_max_events, s.oom_kills), (4312, 2));
        assert_eq!((s.cpu_periods, s.cpu_throttled_periods), (150, 87));
        assert_eq!(
            s.dirty_threshold_bytes, 0,
            "v1 has no group dirty threshold"
        );
        assert_eq!(
            io[0].counter_series,
            [CgroupIoCounters {
                read_bytes: 4096,
                write_bytes: 100 << 20,
                read_ios: 1,
                write_ios: 25600
            }]
        );
    }

    #[test]
    fn samples_the_v2_fixture_tree() {
        let (mut probe, mut io) = probe_of("v2");
        let mut s = CgroupSample::default();
        let global = MemorySample {
            free_bytes: 4 << 30,
            cached_bytes: 1 << 30,
            ..Default::default()
        };
        assert!(probe.sample(&global, &mut s, &mut io));
        assert_eq!(s.memory_usage_bytes, 199229440);
        assert_eq!(
            (s.file_bytes, s.dirty_bytes, s.writeback_bytes),
            (188743680, 40 << 20, 12 << 20)
        );
        assert_eq!(
            (s.memory_high_events, s.memory_max_events, s.oom_kills),
            (1234, 56, 1)
        );
        assert_eq!((s.pgscan_pages, s.pgsteal_pages), (51200, 48000));
        assert_eq!((s.memory_some_us, s.memory_full_us), (2500000, 2000000));
        assert_eq!(s.cpu_throttled_ns, 4_350_000_000);
        assert!(
            s.dirty_threshold_bytes > 0,
            "expected the group's own dirty threshold, got {s:?}"
        );
        assert_eq!(io[0].counter_series[0].write_bytes, 100 << 20);
    }
}
