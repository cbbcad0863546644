//! `cgroup-io-limit`: a job's rate on a device sat at the io limit its
//! cgroup has there (v2 `io.max`, v1 `blkio.throttle.*_device`): the number
//! is the limit, not the device's. Silent when the rate is well below the
//! limit (the limit did not bind) or above it.

use super::seconds_at;
use crate::model::{CgroupVersion, Finding, IoLimit, JobInterval, JobSeries, RunReport, Severity};

/// The job's rate counts as at the limit within this share of it, either
/// way (a throttle lets a little burst through at the start).
const AT_LIMIT: f64 = 0.10;

/// One of the four limits of an `IoLimit`.
struct Bound {
    value: u64,
    /// 0 read, 1 write.
    dir: usize,
    bytes: bool,
    /// v1 file, v2 `io.max` key.
    v1: &'static str,
    v2: &'static str,
}

impl Bound {
    fn all(limit: &IoLimit) -> Vec<Bound> {
        let bound = |value: Option<u64>, dir, bytes, v1, v2| {
            value.map(|value| Bound {
                value,
                dir,
                bytes,
                v1,
                v2,
            })
        };
        [
            bound(
                limit.read_bytes_per_sec,
                0,
                true,
                "blkio.throttle.read_bps_device",
                "rbps",
            ),
            bound(
                limit.write_bytes_per_sec,
                1,
                true,
                "blkio.throttle.write_bps_device",
                "wbps",
            ),
            bound(
                limit.read_iops,
                0,
                false,
                "blkio.throttle.read_iops_device",
                "riops",
            ),
            bound(
                limit.write_iops,
                1,
                false,
                "blkio.throttle.write_iops_device",
                "wiops",
            ),
        ]
        .into_iter()
        .flatten()
        .collect()
    }

    fn count(&self, interval: &JobInterval) -> u64 {
        if self.bytes {
            interval.bytes[self.dir]
        } else {
            interval.ios[self.dir]
        }
    }

    /// "8.0 MiB/s", "500 IOPS".
    fn rate_text(&self, per_sec: f64) -> String {
        if self.bytes {
            format!("{:.1} MiB/s", per_sec / (1u64 << 20) as f64)
        } else {
            format!("{per_sec:.0} IOPS")
        }
    }

    fn setting(&self, version: CgroupVersion, device: &str) -> String {
        match version {
            CgroupVersion::V1 => format!("{} {device}", self.v1),
            CgroupVersion::V2 => format!("io.max {device} {}", self.v2),
        }
    }
}

/// The job does I/O on the device `name`: one of its targets is on it (the
/// device found from the target, or the filesystem holding it is on it).
fn on_device(report: &RunReport, series: &JobSeries, name: &str) -> bool {
    series.targets.iter().any(|target| {
        let found_from_target = report
            .observations
            .devices
            .iter()
            .any(|d| d.name == name && d.via.strip_prefix("holds ") == Some(target.as_str()));
        let filesystem_on_it = report.environment.filesystems.iter().any(|fs| {
            fs.target == *target
                && fs
                    .source
                    .rsplit('/')
                    .next()
                    .is_some_and(|source| is_on_disk(source, name))
        });
        found_from_target || filesystem_on_it
    })
}

/// `device` ("sda1", "nvme0n1p2", "loop3") is the disk `disk` or one of its
/// partitions: digits after a name ending in a letter, "p" and digits after
/// one ending in a digit.
fn is_on_disk(device: &str, disk: &str) -> bool {
    let Some(rest) = device.strip_prefix(disk) else {
        return false;
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let ends_in_digit = disk.bytes().last().is_some_and(|b| b.is_ascii_digit());
    rest.is_empty()
        || if ends_in_digit {
            rest.strip_prefix('p').is_some_and(digits)
        } else {
            digits(rest)
        }
}

/// Per second of `bound`'s quantity over the job's active span less its first
/// interval (where the throttle's first slice may let a burst through),
/// with the span's sample indices; the whole span when it is short.
fn steady_rate(
    report: &RunReport,
    series: &JobSeries,
    bound: &Bound,
) -> Option<(f64, usize, usize)> {
    let t = &report.observations.t_ns;
    let (from, to) = series.measured_span(&report.observations.t_ns)?;
    let start = if to > from + 2 { from + 1 } else { from };
    let ns = t[to].saturating_sub(t[start]);
    let total: u64 = series.intervals[start + 1..=to]
        .iter()
        .map(|i| bound.count(i))
        .sum();
    (ns > 0 && total > 0).then(|| (total as f64 / (ns as f64 / 1e9), start, to))
}

pub(super) fn cgroup_io_limit(report: &RunReport) -> Vec<Finding> {
    let Some(cgroup) = &report.environment.cgroup else {
        return Vec::new();
    };
    let Some(group) = cgroup.place.io.as_ref() else {
        return Vec::new();
    };
    let mut findings = Vec::new();
    for limit in &cgroup.limits.io {
        for bound in Bound::all(limit) {
            for series in &report.observations.jobs {
                if !on_device(report, series, &limit.name) {
                    continue;
                }
                let Some((rate, start, to)) = steady_rate(report, series, &bound) else {
                    continue;
                };
                let share = rate / bound.value as f64;
                if (share - 1.0).abs() > AT_LIMIT {
                    continue;
                }
                let what = if bound.dir == 0 { "reads" } else { "writes" };
                findings.push(Finding {
                    code: "cgroup-io-limit".into(),
                    severity: Severity::Warning,
                    title: format!(
                        "job '{}': {what} on {} sat at its cgroup's io limit: {} measured, limit {}",
                        series.name,
                        limit.name,
                        bound.rate_text(rate),
                        bound.rate_text(bound.value as f64)
                    ),
                    evidence: vec![
                        format!(
                            "cgroup {}: {} {}",
                            group.path,
                            bound.setting(group.version, &limit.device),
                            bound.rate_text(bound.value as f64)
                        ),
                        format!(
                            "the job's {what} from t={:.1} to {:.1} s: {}, {:.0}% of the limit",
                            seconds_at(&report.observations, start),
                            seconds_at(&report.observations, to),
                            bound.rate_text(rate),
                            share * 100.0
                        ),
                    ],
                    advice: "the benchmark measured the cgroup's io limit, not the device: run it outside the limit (or raise it) to measure the device, or report the number as the container's".into(),
                    at_ns: None,
                });
            }
        }
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::super::fixture::*;
    use super::*;
    use crate::model::{CgroupLimits, DeviceObservation};

    /// The fixture's writer (10 MiB/s, 2560 4k writes a second) on `TARGET`
    /// in a group whose `limit` is on `device`.
    fn limited(device: &str, limit: IoLimit) -> RunReport {
        let mut report = run(40);
        add_job(&mut report, "w", true, io(0, 256));
        report.observations.jobs[0].targets = vec![TARGET.into()];
        report.observations.devices.push(DeviceObservation {
            zram_series: Vec::new(),
            name: "loop7".into(),
            via: format!("holds {TARGET}"),
            counter_series: Vec::new(),
        });
        let limits = CgroupLimits {
            io: vec![IoLimit {
                device: "7:7".into(),
                name: device.into(),
                ..limit
            }],
            ..Default::default()
        };
        add_cgroup(&mut report, limits, |_| Default::default());
        report
    }

    fn write_bps(bytes: u64) -> IoLimit {
        IoLimit {
            write_bytes_per_sec: Some(bytes),
            ..Default::default()
        }
    }

    #[test]
    fn a_rate_at_the_limit_is_the_limits() {
        let found = cgroup_io_limit(&limited("loop7", write_bps(10 << 20)));
        assert_eq!(codes(&found), ["cgroup-io-limit"], "{found:?}");
        let f = &found[0];
        assert!(
            f.title
                .contains("writes on loop7 sat at its cgroup's io limit: 10.0 MiB/s measured, limit 10.0 MiB/s"),
            "expected the measured rate and the limit in the title, saw {}",
            f.title
        );
        assert!(
            f.evidence[0] == "cgroup /bench: blkio.throttle.write_bps_device 7:7 10.0 MiB/s",
            "expected the v1 setting in the evidence, saw {:?}",
            f.evidence
        );

        let iops = IoLimit {
            write_iops: Some(2600),
            ..Default::default()
        };
        let found = cgroup_io_limit(&limited("loop7", iops));
        assert!(
            found.len() == 1
                && found[0]
                    .title
                    .contains("2560 IOPS measured, limit 2600 IOPS"),
            "expected 2560 IOPS under a 2600 IOPS limit to be capped, saw {found:?}"
        );
    }

    #[test]
    fn a_file_target_is_on_the_disk_of_its_filesystem() {
        let mut report = limited("sda", write_bps(10 << 20));
        report.observations.devices.clear();
        report
            .environment
            .filesystems
            .push(crate::model::FilesystemInfo {
                target: TARGET.into(),
                source: "/dev/sda2".into(),
                ..Default::default()
            });
        assert_eq!(codes(&cgroup_io_limit(&report)), ["cgroup-io-limit"]);
        for (device, disk, on) in [
            ("sda2", "sda", true),
            ("sda", "sda", true),
            ("nvme0n1p2", "nvme0n1", true),
            ("loop10", "loop1", false),
            ("sdab", "sda", false),
        ] {
            assert_eq!(
                is_on_disk(device, disk),
                on,
                "expected {device} on {disk}: {on}"
            );
        }
    }

    #[test]
    fn silent_well_below_the_limit_or_on_another_device() {
        for (device, limit) in [
            ("loop7", write_bps(40 << 20)),
            ("loop7", write_bps(8 << 20)),
            (
                "loop7",
                IoLimit {
                    read_bytes_per_sec: Some(10 << 20),
                    ..Default::default()
                },
            ),
            ("sda", write_bps(10 << 20)),
        ] {
            let found = cgroup_io_limit(&limited(device, limit.clone()));
            assert!(
                found.is_empty(),
                "expected no finding for {limit:?} on {device}, saw {found:?}"
            );
        }
    }
}
