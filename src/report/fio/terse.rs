//! fio's terse output, version 3 (`--minimal`, `--output-format=terse`): one
//! line of semicolon-separated fields per job, in the order fio documents.
//! Latencies are in microseconds, sizes in KiB, bandwidth in KiB/s; every
//! disk's utilisation is appended to every job line, as fio does.

use crate::model::{DirReport, DiskUtil, JobReport, LatSummary, RunReport};
use crate::report::fio::{depth_pct, lat_pct, runtime_ms, share_of_group, shown_dirs};

/// The terse format version written here.
pub(crate) const VERSION: u32 = 3;
/// Latency percentile fields per direction, used or not.
const PERCENTILE_FIELDS: usize = 20;

/// One line per job.
pub(in crate::report) fn render(report: &RunReport) -> String {
    let mut out = String::new();
    for job in &report.jobs {
        let fields = job_fields(report, job);
        out.push_str(&fields.join(";"));
        out.push('\n');
    }
    out
}

fn job_fields(report: &RunReport, job: &JobReport) -> Vec<String> {
    let mut fields = vec![
        VERSION.to_string(),
        super::json::fio_version(&report.tool_version),
        job.name.clone(),
        job.groupid.to_string(),
        job.errno.to_string(),
    ];
    // fio puts the merged block of unified_rw_reporting after write's, or alone;
    // version 3 has no trim fields (fio's version 4 added them).
    let shown = shown_dirs(report, job).into_iter();
    for (_, dir, group_bw) in shown.filter(|(name, _, _)| *name != "trim") {
        dir_fields(&mut fields, dir, group_bw);
    }
    let cpu = &job.cpu;
    fields.extend([
        format!("{:.6}%", cpu.usr_pct),
        format!("{:.6}%", cpu.sys_pct),
        cpu.ctx.to_string(),
        cpu.majf.to_string(),
        cpu.minf.to_string(),
    ]);
    let depth = job.depth.level_pct.iter();
    fields.extend(depth.map(|&p| format!("{:.1}%", depth_pct(p))));
    // fio's terse line has no nanosecond buckets: microseconds, then milliseconds.
    let buckets = &job.lat_buckets;
    let lat = buckets.us_pct.iter().chain(&buckets.ms_pct);
    fields.extend(lat.map(|&p| format!("{:.2}%", lat_pct(p))));
    for disk in &report.disks {
        disk_fields(&mut fields, disk);
    }
    // fio's optional last field.
    fields.extend(job.description.clone());
    fields
}

/// Size, rate, latencies, percentiles and bandwidth samples of one direction.
fn dir_fields(fields: &mut Vec<String>, dir: &DirReport, group_bw: f64) {
    const KIB: f64 = 1024.0;
    fields.extend([
        (dir.io_bytes / 1024).to_string(),
        ((dir.bw_bytes_per_sec / KIB) as u64).to_string(),
        (dir.iops as u64).to_string(),
        runtime_ms(dir.runtime_ns).to_string(),
    ]);
    lat_fields(fields, dir.slat.as_ref());
    lat_fields(fields, dir.clat.as_ref());
    // fio fills them from total latency with lat_percentiles, else from clat.
    let with_percentiles = [dir.lat.as_ref(), dir.clat.as_ref()].into_iter().flatten();
    let percentiles = with_percentiles
        .map(|l| &l.percentiles[..])
        .find(|p| !p.is_empty())
        .unwrap_or(&[]);
    for i in 0..PERCENTILE_FIELDS {
        fields.push(match percentiles.get(i) {
            Some(&(pct, ns)) => format!("{pct:.6}%={}", ns / 1000),
            None => "0%=0".to_string(),
        });
    }
    lat_fields(fields, dir.lat.as_ref());
    let bw = &dir.bw_samples;
    let agg = if bw.samples > 0 {
        share_of_group(bw.mean, group_bw)
    } else {
        0.0
    };
    fields.extend([
        ((bw.min / KIB) as u64).to_string(),
        ((bw.max / KIB) as u64).to_string(),
        format!("{agg:.6}%"),
        format!("{:.6}", bw.mean / KIB),
        format!("{:.6}", bw.stddev / KIB),
    ]);
}

/// min, max (whole µs), mean, stddev (µs); zeros when not measured.
fn lat_fields(fields: &mut Vec<String>, summary: Option<&LatSummary>) {
    let unmeasured = LatSummary::default();
    let s = summary.unwrap_or(&unmeasured);
    fields.extend([
        (s.min_ns / 1000).to_string(),
        (s.max_ns / 1000).to_string(),
        format!("{:.6}", s.mean_ns / 1000.0),
        format!("{:.6}", s.stddev_ns / 1000.0),
    ]);
}

fn disk_fields(fields: &mut Vec<String>, d: &DiskUtil) {
    fields.push(d.name.clone());
    fields.extend(d.fio_counters().iter().map(u64::to_string));
    fields.push(format!("{:.2}%", d.util_pct));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{GroupDirSummary, GroupReport, SampleSummary, SCHEMA_VERSION};

    /// Fields before the disks: 5 of the job, 41 per direction, 5 cpu,
    /// 7 depth, 22 latency buckets.
    const JOB_FIELDS: usize = 5 + 2 * 41 + 5 + 7 + 22;
    const DISK_FIELDS: usize = 9;

    /// Where fio's documented v3 fields sit (0-based), by their documented short names.
    const READ_KB: usize = 5;
    const READ_CLAT_MIN: usize = 13;
    const READ_CLAT_PCT01: usize = 17;
    const READ_LAT_MIN: usize = 37;
    const READ_BW_AGG: usize = 43;
    const WRITE_KB: usize = 46;
    const CPU_USER: usize = 87;
    const IODEPTH_1: usize = 92;
    const LAT_2US: usize = 99;
    const LAT_OVER_2000MS: usize = 120;
    const DISK_NAME: usize = 121;

    fn report(disks: usize) -> RunReport {
        let clat = LatSummary {
            min_ns: 1500,
            max_ns: 9_578_000,
            mean_ns: 73_861.493,
            stddev_ns: 117_668.751,
            samples: 100,
            percentiles: vec![(1.0, 39_168), (99.99, 3_096_576)],
            bins: Default::default(),
        };
        let read = DirReport {
            io_bytes: 47_444 * 1024,
            total_ios: 11_861,
            runtime_ns: 1_001_000_000,
            bw_bytes_per_sec: 47_396.0 * 1024.0,
            iops: 11_849.7,
            clat: Some(clat),
            bw_samples: SampleSummary {
                min: 39_520.0 * 1024.0,
                max: 52_460.0 * 1024.0,
                mean: 44_995.0 * 1024.0,
                stddev: 1024.0,
                samples: 5,
            },
            ..Default::default()
        };
        let mut job = JobReport {
            name: "h".into(),
            workers: 1,
            dirs: [read, DirReport::default(), DirReport::default()],
            runtime_ns: 1_001_000_000,
            ..Default::default()
        };
        job.cpu.usr_pct = 1.3;
        job.depth.level_pct[0] = 100.0;
        job.lat_buckets.us_pct[0] = 34.71;
        job.lat_buckets.ms_pct[11] = 0.001;
        RunReport {
            schema_version: SCHEMA_VERSION,
            tool_version: "0.1.0".into(),
            started_unix_ms: 0,
            elapsed_ns: None,
            command_line: Vec::new(),
            global_options: Vec::new(),
            jobs: vec![
                job.clone(),
                JobReport {
                    description: None,
                    tolerated_errors: None,
                    name: "second".into(),
                    ..job
                },
            ],
            groups: vec![GroupReport {
                id: 0,
                mixed: None,
                dirs: [
                    GroupDirSummary {
                        bw_bytes_per_sec: 47_396.0 * 1024.0 * 2.0,
                        ..Default::default()
                    },
                    GroupDirSummary::default(),
                    GroupDirSummary::default(),
                ],
            }],
            disks: (0..disks)
                .map(|i| DiskUtil {
                    name: format!("vd{i}"),
                    read_ios: 10_884,
                    util_pct: 69.714,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    fn lines(report: &RunReport) -> Vec<Vec<String>> {
        render(report)
            .lines()
            .map(|l| l.split(';').map(str::to_string).collect())
            .collect()
    }

    #[test]
    fn one_line_per_job_with_fios_field_count() {
        for disks in [0, 1, 2] {
            let lines = lines(&report(disks));
            assert_eq!(lines.len(), 2);
            for fields in &lines {
                assert_eq!(fields.len(), JOB_FIELDS + disks * DISK_FIELDS);
            }
        }
    }

    #[test]
    fn fields_sit_where_fio_documents_them() {
        let f = &lines(&report(1))[0];
        assert_eq!(&f[..5], ["3", "fio-3.33-iolens-0.1.0", "h", "0", "0"]);
        assert_eq!(
            &f[READ_KB..READ_KB + 4],
            ["47444", "47396", "11849", "1001"]
        );
        assert_eq!(
            &f[READ_KB + 4..READ_CLAT_MIN],
            ["0", "0", "0.000000", "0.000000"]
        );
        assert_eq!(
            &f[READ_CLAT_MIN..READ_CLAT_PCT01],
            ["1", "9578", "73.861493", "117.668751"]
        );
        assert_eq!(f[READ_CLAT_PCT01], "1.000000%=39");
        assert_eq!(f[READ_CLAT_PCT01 + 1], "99.990000%=3096");
        assert_eq!(f[READ_CLAT_PCT01 + 2], "0%=0");
        assert_eq!(f[READ_LAT_MIN - 1], "0%=0");
        assert_eq!(&f[READ_BW_AGG - 2..READ_BW_AGG], ["39520", "52460"]);
        assert_eq!(
            f[READ_BW_AGG], "47.467086%",
            "mean over the group's aggregate"
        );
        assert_eq!(f[READ_BW_AGG + 1], "44995.000000");
        assert_eq!(f[WRITE_KB], "0");
        assert_eq!(f[WRITE_KB + 40], "0.000000", "write_bw_dev_kb");
        assert_eq!(f[CPU_USER], "1.300000%");
        assert_eq!(f[IODEPTH_1], "100.0%");
        assert_eq!(f[LAT_2US], "34.71%");
        assert_eq!(f[LAT_OVER_2000MS], "0.01%");
        assert_eq!(f[DISK_NAME], "vd0");
        assert_eq!(f[DISK_NAME + 1], "10884");
        assert_eq!(f[DISK_NAME + 8], "69.71%");
        assert_eq!(lines(&report(1))[1][2], "second");
    }

    #[test]
    fn lat_percentiles_fill_the_percentile_fields_as_in_fio() {
        let lat = LatSummary {
            percentiles: vec![(50.0, 5_000)],
            ..Default::default()
        };
        let mut report = report(0);
        report.jobs[0].dirs[0].lat = Some(lat);
        let with_clat = &lines(&report)[0];
        assert_eq!(
            with_clat[READ_CLAT_PCT01], "50.000000%=5",
            "lat_percentiles=1: fio writes lat's percentiles, not clat's"
        );
        report.jobs[0].dirs[0]
            .clat
            .as_mut()
            .unwrap()
            .percentiles
            .clear();
        let without_clat = &lines(&report)[0];
        assert_eq!(
            without_clat[READ_CLAT_PCT01], "50.000000%=5",
            "clat_percentiles=0 lat_percentiles=1: fio still writes lat's percentiles"
        );
        report.jobs[0].dirs[0].lat = None;
        assert_eq!(
            lines(&report)[0][READ_CLAT_PCT01],
            "0%=0",
            "no percentiles asked for: fio leaves the fields empty"
        );
    }
}
