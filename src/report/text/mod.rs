//! fio's `normal` output layout, so a fio user reads a report at a glance.
//! iolens adds `cpu/io=` (CPU time per I/O) to the cpu line. Timestamps are
//! shown in UTC. A rate-limited job adds its schedule and the latencies from
//! the due times (`schedule`). Beside it, iolens' own text: the system block and its parts,
//! the findings, and the compact tables of `quick`, `--repeat` and `--timeline`.

pub(crate) mod cgroup;
pub(crate) mod cluster;
pub(crate) mod comparison;
pub(crate) mod findings;
mod ledger;
pub(crate) mod quick;
pub(crate) mod repeat_table;
pub(crate) mod schedule;
pub(crate) mod stack;
pub(crate) mod system;
pub(crate) mod timeline;

use std::fmt::{self, Write};

use crate::model::{
    window_mean, DirReport, DiskUtil, GroupDirSummary, GroupReport, JobReport, LatBuckets,
    LatSummary, PrioReport, RunReport, SteadyStateReport,
};
use crate::report::fio::{
    ctime_utc, depth_pct, lat_pct, runtime_ms, scaled, share_of_group, shown_dirs, BINARY_PREFIXES,
    DECIMAL_PREFIXES, DEPTH_BATCH_LABELS, DEPTH_LEVEL_LABELS, LAT_LABELS, LAT_MS_LABELS,
};

const GROUP_DIR_NAMES: [&str; 3] = ["READ", "WRITE", "TRIM"];

/// The whole report: every job, then each group's totals, then the disks.
pub(in crate::report) fn render(report: &RunReport) -> String {
    let mut out = String::new();
    write_report(&mut out, report).expect("writing to a String cannot fail");
    out
}

fn write_report(out: &mut String, report: &RunReport) -> fmt::Result {
    // fio starts its results with an empty line (after its live status line).
    out.push('\n');
    for job in &report.jobs {
        write_job(out, job, report)?;
    }
    for group in &report.groups {
        write_group(out, group)?;
    }
    if !report.disks.is_empty() {
        writeln!(out, "\nDisk stats (read/write):")?;
        for disk in &report.disks {
            write_disk(out, disk)?;
        }
    }
    if let Some(cluster) = &report.cluster {
        crate::report::text::cluster::write_ranks(out, cluster)?;
    }
    crate::report::text::system::write_system(out, report)?;
    // What the diagnose rules concluded, last, so it is what the reader sees.
    out.push_str(&findings::render(&report.findings));
    Ok(())
}

/// (usr + sys) CPU per MiB moved, milliseconds.
fn cpu_ms_per_mib(job: &JobReport) -> f64 {
    crate::model::metrics::cpu_ns_per_mib(job).unwrap_or(0.0) / 1e6
}

fn write_job(out: &mut String, job: &JobReport, report: &RunReport) -> fmt::Result {
    let unix_secs = report.started_unix_ms / 1000;
    write!(
        out,
        "{}: (groupid={}, jobs={}): err={:2}",
        job.name, job.groupid, job.workers, job.errno
    )?;
    if let Some(error) = &job.error {
        write!(out, " (error={error})")?;
    }
    writeln!(
        out,
        ": pid={}: {}",
        job.pid.unwrap_or(0),
        ctime_utc(unix_secs)
    )?;
    if let Some(description) = &job.description {
        writeln!(out, "  Description  : [{description}]")?;
    }
    for (name, dir, group_bw) in shown_dirs(report, job) {
        if dir.total_ios > 0 || dir.io_bytes > 0 {
            write_dir(out, name, dir, group_bw, job.significant_figures)?;
        }
    }
    write_lat_distribution(out, &job.lat_buckets)?;
    if let Some(sync_lat) = job.sync.lat.as_ref() {
        writeln!(out, "  fsync/fdatasync/sync_file_range:")?;
        write_latency(out, "sync", sync_lat)?;
    }
    let cpu = &job.cpu;
    writeln!(
        out,
        "  cpu          : usr={:.2}%, sys={:.2}%, ctx={}, majf={}, minf={}, cpu/io={:.2}us, cpu/MiB={:.3}ms",
        cpu.usr_pct,
        cpu.sys_pct,
        cpu.ctx,
        cpu.majf,
        cpu.minf,
        cpu.cpu_ns_per_io / 1000.0,
        cpu_ms_per_mib(job)
    )?;
    write_depths(
        out,
        "  IO depths    :",
        &DEPTH_LEVEL_LABELS,
        &job.depth.level_pct,
    )?;
    write_depths(
        out,
        "     submit    :",
        &DEPTH_BATCH_LABELS,
        &job.depth.submit_pct,
    )?;
    write_depths(
        out,
        "     complete  :",
        &DEPTH_BATCH_LABELS,
        &job.depth.complete_pct,
    )?;
    // With only the merged report shown, fio counts every I/O as a read.
    let nothing = DirReport::default();
    let [read, write, trim] = match &job.mixed {
        Some(mixed) if mixed.only => [&mixed.report, &nothing, &nothing],
        _ => job.dirs.each_ref(),
    };
    writeln!(
        out,
        "     issued rwts: total={},{},{},{} short={},{},{},0 dropped=0,0,0,0",
        read.total_ios,
        write.total_ios,
        trim.total_ios,
        job.sync.total_ios,
        read.short_ios,
        write.short_ios,
        trim.short_ios
    )?;
    if let Some(target) = &job.latency_target {
        // As fio: the target in ns, the window in µs.
        writeln!(
            out,
            "     latency   : target={}, window={}, percentile={:.2}%, depth={}",
            target.target_ns,
            target.window_ns / 1000,
            target.percentile,
            target.depth
        )?;
    }
    if let Some(schedule) = &job.schedule {
        schedule::write(out, schedule)?;
    }
    if let Some(ss) = &job.steadystate {
        write_steadystate(out, ss)?;
    }
    if let Some(errors) = job.tolerated_errors {
        writeln!(
            out,
            "     errors    : total={}, first_error={}/<{}>",
            errors.total,
            errors.first_errno,
            errno_text(errors.first_errno)
        )?;
    }
    Ok(())
}

/// The OS's text for an errno, without Rust's " (os error N)" suffix.
fn errno_text(errno: i32) -> String {
    let text = std::io::Error::from_raw_os_error(errno).to_string();
    match text.rsplit_once(" (os error") {
        Some((message, _)) => message.to_string(),
        None => text,
    }
}

/// `figures`: digits of IOPS and bandwidth (fio's `significant_figures`).
fn write_dir(
    out: &mut String,
    name: &str,
    dir: &DirReport,
    group_bw: f64,
    figures: u32,
) -> fmt::Result {
    let figures = figures as usize;
    writeln!(
        out,
        "  {name}: IOPS={}, BW={}B/s ({}B/s)({}B/{}msec)",
        scaled(dir.iops.trunc(), 1000.0, &DECIMAL_PREFIXES, figures),
        scaled(dir.bw_bytes_per_sec, 1024.0, &BINARY_PREFIXES, figures),
        scaled(dir.bw_bytes_per_sec, 1000.0, &DECIMAL_PREFIXES, figures),
        compact(dir.io_bytes as f64, 1024.0, &BINARY_PREFIXES),
        runtime_ms(dir.runtime_ns)
    )?;
    let measured = [("slat", &dir.slat), ("clat", &dir.clat), ("lat", &dir.lat)];
    for (name, summary) in measured {
        if let Some(summary) = summary.as_ref().filter(|s| s.samples > 0) {
            write_lat_line(out, name, summary)?;
        }
    }
    // fio's per-priority lines (cmdprio_*) name each priority class/level; the names are
    // longer than the column, so they carry their own indent.
    for p in &dir.prios {
        write_lat_line(out, &prio_name(p), &p.lat)?;
    }
    for (name, summary) in measured {
        if let Some(summary) = summary.as_ref().filter(|s| !s.percentiles.is_empty()) {
            write_percentiles(out, name, &summary.percentiles)?;
        }
    }
    let prio_samples: u64 = dir.prios.iter().map(|p| p.lat.samples).sum();
    for p in dir.prios.iter().filter(|p| !p.lat.percentiles.is_empty()) {
        let share = 100.0 * p.lat.samples as f64 / prio_samples as f64;
        let name = format!("{} ({share:.2}% of IOs)", prio_name(p));
        write_percentiles(out, &name, &p.lat.percentiles)?;
    }
    let bw = &dir.bw_samples;
    if bw.samples > 0 {
        let per = share_of_group(bw.mean, group_bw);
        // KiB/s, or MiB/s once the mean passes 1 GiB/s, as fio does.
        let (unit, divisor) = if bw.mean > 1024.0 * 1024.0 * 1024.0 {
            ("MiB", 1024.0 * 1024.0)
        } else {
            ("KiB", 1024.0)
        };
        writeln!(
            out,
            "   bw ({unit:>5}/s): min={:5}, max={:5}, per={per:.2}%, avg={:5.2}, stdev={:5.2}, samples={}",
            (bw.min / divisor) as u64,
            (bw.max / divisor) as u64,
            bw.mean / divisor,
            bw.stddev / divisor,
            bw.samples
        )?;
    }
    let iops = &dir.iops_samples;
    if iops.samples > 0 {
        writeln!(
            out,
            "   iops        : min={:5}, max={:5}, avg={:5.2}, stdev={:5.2}, samples={}",
            iops.min as u64, iops.max as u64, iops.mean, iops.stddev, iops.samples
        )?;
    }
    Ok(())
}

/// `    clat prio 1/0`: the latency kept per priority and the priority's class/level.
fn prio_name(p: &PrioReport) -> String {
    let kind = if p.total_latency { "lat" } else { "clat" };
    format!("    {kind} prio {}/{}", p.prioclass, p.prio)
}

/// A summary line and, when it has them, its percentiles (used for sync).
fn write_latency(out: &mut String, name: &str, summary: &LatSummary) -> fmt::Result {
    write_lat_line(out, name, summary)?;
    if !summary.percentiles.is_empty() {
        write_percentiles(out, name, &summary.percentiles)?;
    }
    Ok(())
}

/// `    clat (usec): min=…, max=…, avg=…, stdev=…` in the unit fio would pick.
fn write_lat_line(out: &mut String, name: &str, s: &LatSummary) -> fmt::Result {
    // fio scales only when all of min, max and spread are large.
    let (unit, divisor) = if s.min_ns > 2_000_000 && s.max_ns > 99_999_999 && s.stddev_ns > 1e6 {
        ("msec", 1_000_000)
    } else if s.min_ns > 2000 && s.max_ns > 99_999 && s.stddev_ns > 1e3 {
        ("usec", 1000)
    } else {
        ("nsec", 1)
    };
    writeln!(
        out,
        "{name:>8} ({unit}): min={}, max={}, avg={:5.2}, stdev={:5.2}",
        compact_int(s.min_ns / divisor),
        compact_int(s.max_ns / divisor),
        s.mean_ns / divisor as f64,
        s.stddev_ns / divisor as f64
    )
}

/// fio's percentile block: four per row, values rounded up into one unit.
fn write_percentiles(out: &mut String, name: &str, percentiles: &[(f64, u64)]) -> fmt::Result {
    const PER_ROW: usize = 4;
    let lowest = percentiles.iter().map(|p| p.1).min().unwrap_or(0);
    let highest = percentiles.iter().map(|p| p.1).max().unwrap_or(0);
    let (unit, divisor) = if lowest > 2_000_000 && highest > 99_999_999 {
        ("msec", 1_000_000)
    } else if lowest > 2000 && highest > 99_999 {
        ("usec", 1000)
    } else {
        ("nsec", 1)
    };
    let value_width = highest.div_ceil(divisor).to_string().len().max(5);
    let decimals = percentiles
        .iter()
        .map(|p| decimals_needed(p.0))
        .max()
        .unwrap_or(2);
    let label_width = decimals + 3;
    writeln!(out, "{name:>8} percentiles ({unit}):")?;
    for (row_index, row) in percentiles.chunks(PER_ROW).enumerate() {
        out.push_str("     |");
        for (i, (pct, ns)) in row.iter().enumerate() {
            let is_last = row_index * PER_ROW + i + 1 == percentiles.len();
            let value = ns.div_ceil(divisor);
            write!(
                out,
                " {pct:label_width$.decimals$}th=[{value:value_width$}]"
            )?;
            if !is_last {
                out.push(',');
            }
        }
        out.push('\n');
    }
    Ok(())
}

/// Decimals that show `pct` exactly: 2 ("99.90"), up to 6 ("99.9999").
fn decimals_needed(pct: f64) -> usize {
    (2..6)
        .find(|&d| {
            let scale = 10f64.powi(d as i32);
            ((pct * scale).round() - pct * scale).abs() < 1e-6
        })
        .unwrap_or(6)
}

/// `  lat (usec)   : 2=…%, 4=…%` lines: nonzero buckets only, five per line.
fn write_lat_distribution(out: &mut String, buckets: &LatBuckets) -> fmt::Result {
    let units: [(&str, &[&str], &[f64]); 3] = [
        ("nsec", &LAT_LABELS, &buckets.ns_pct),
        ("usec", &LAT_LABELS, &buckets.us_pct),
        ("msec", &LAT_MS_LABELS, &buckets.ms_pct),
    ];
    for (unit, labels, shares) in units {
        let nonzero: Vec<String> = labels
            .iter()
            .zip(shares)
            .filter(|(_, &pct)| pct > 0.0)
            .map(|(label, &pct)| format!("{label}={:.2}%", lat_pct(pct)))
            .collect();
        for line in nonzero.chunks(5) {
            writeln!(out, "  lat ({unit})   : {}", line.join(", "))?;
        }
    }
    Ok(())
}

/// fio's steadystate line: the verdict, the window's mean rates and what was judged.
fn write_steadystate(out: &mut String, ss: &SteadyStateReport) -> fmt::Result {
    // fio's means are over the whole window, zeros where no sample was taken yet.
    let (iops, bw) = ss.full_window();
    let (iops, bw) = (window_mean(&iops) as f64, window_mean(&bw) as f64);
    let (metric, judged) = match ss.criterion.split_once('_') {
        Some((metric, _)) => (metric, "slope"),
        None => (ss.criterion.as_str(), "mean dev"),
    };
    writeln!(
        out,
        "  steadystate  : attained={}, bw={}B/s ({}B/s), iops={}, {metric} {judged}={:.3}{}",
        if ss.attained { "yes" } else { "no" },
        compact(bw, 1024.0, &BINARY_PREFIXES),
        compact(bw, 1000.0, &DECIMAL_PREFIXES),
        compact(iops, 1000.0, &DECIMAL_PREFIXES),
        ss.value,
        if ss.limit_is_percent { "%" } else { "" }
    )
}

fn write_depths(
    out: &mut String,
    prefix: &str,
    labels: &[&str; 7],
    shares: &[f64; 7],
) -> fmt::Result {
    let entries: Vec<String> = labels
        .iter()
        .zip(shares)
        .map(|(label, &pct)| format!("{label}={:.1}%", depth_pct(pct)))
        .collect();
    writeln!(out, "{prefix} {}", entries.join(", "))
}

fn write_group(out: &mut String, group: &GroupReport) -> fmt::Result {
    writeln!(out, "\nRun status group {} (all jobs):", group.id)?;
    let mixed_only = group.mixed.as_ref().is_some_and(|m| m.only);
    let dirs = GROUP_DIR_NAMES
        .iter()
        .zip(&group.dirs)
        .filter(|_| !mixed_only);
    let mixed = group.mixed.iter().map(|m| (&"MIXED", &m.report));
    for (name, dir) in dirs.chain(mixed) {
        if dir.io_bytes > 0 || dir.max_runtime_ns > 0 {
            write_group_dir(out, name, dir)?;
        }
    }
    Ok(())
}

fn write_group_dir(out: &mut String, name: &str, dir: &GroupDirSummary) -> fmt::Result {
    let binary = |v: f64| compact(v, 1024.0, &BINARY_PREFIXES);
    let decimal = |v: f64| compact(v, 1000.0, &DECIMAL_PREFIXES);
    writeln!(
        out,
        "{name:>7}: bw={}B/s ({}B/s), {}B/s-{}B/s ({}B/s-{}B/s), io={}B ({}B), run={}-{}msec",
        binary(dir.bw_bytes_per_sec),
        decimal(dir.bw_bytes_per_sec),
        binary(dir.min_bw_bytes_per_sec),
        binary(dir.max_bw_bytes_per_sec),
        decimal(dir.min_bw_bytes_per_sec),
        decimal(dir.max_bw_bytes_per_sec),
        binary(dir.io_bytes as f64),
        decimal(dir.io_bytes as f64),
        runtime_ms(dir.min_runtime_ns),
        runtime_ms(dir.max_runtime_ns)
    )
}

fn write_disk(out: &mut String, d: &DiskUtil) -> fmt::Result {
    writeln!(
        out,
        "  {}: ios={}/{}, merge={}/{}, ticks={}/{}, in_queue={}, util={:.2}%",
        d.name,
        d.read_ios,
        d.write_ios,
        d.read_merges,
        d.write_merges,
        d.read_ticks_ms,
        d.write_ticks_ms,
        d.in_queue_ms,
        d.util_pct
    )
}

/// fio's short number style: at most four characters of digits and point,
/// scaled by powers of `base` with the matching prefix (29146 → "29.1k",
/// 8159232 with base 1024 → "7968Ki"). Decimals fill the space left.
fn compact(value: f64, base: f64, prefixes: &[&str; 6]) -> String {
    scaled(value, base, prefixes, 4)
}

/// Integers in latency lines: up to six digits as they are, then "6813.5k".
fn compact_int(value: u64) -> String {
    scaled(value as f64, 1000.0, &DECIMAL_PREFIXES, 6)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CpuReport, DepthReport, Finding, SampleSummary, Severity, SyncReport};

    #[test]
    fn significant_figures_widen_iops_and_bandwidth() {
        let dir = DirReport {
            iops: 29_146.7,
            bw_bytes_per_sec: 38_668_739.0,
            ..Default::default()
        };
        let line = |figures| {
            let mut out = String::new();
            write_dir(&mut out, "read", &dir, 0.0, figures).unwrap();
            out.lines().next().unwrap().to_string()
        };
        assert!(
            line(4).starts_with("  read: IOPS=29.1k, BW=36.9MiB/s (38.7MB/s)"),
            "{}",
            line(4)
        );
        assert!(
            line(6).starts_with("  read: IOPS=29146, BW=37762KiB/s (38669kB/s)"),
            "{}",
            line(6)
        );
    }

    #[test]
    fn the_steadystate_line_averages_over_the_whole_window_as_fio() {
        let ss = crate::testutil::steady_state(4, &[2000, 2000], &[8 << 20, 8 << 20]);
        let mut out = String::new();
        write_steadystate(&mut out, &ss).unwrap();
        assert!(
            out.contains("bw=4096KiB/s") && out.contains("iops=1000,"),
            "two samples in a 4 s window: fio's means are half of them (bw=4096KiB/s, iops=1000), got {out}"
        );
    }

    #[test]
    fn compact_numbers_look_like_fios() {
        assert_eq!(compact(9440.0, 1000.0, &DECIMAL_PREFIXES), "9440");
        assert_eq!(compact(29_146.0, 1000.0, &DECIMAL_PREFIXES), "29.1k");
        assert_eq!(compact(38_668_739.0, 1024.0, &BINARY_PREFIXES), "36.9Mi");
        assert_eq!(compact(38_668_739.0, 1000.0, &DECIMAL_PREFIXES), "38.7M");
        assert_eq!(compact(8_159_232.0, 1024.0, &BINARY_PREFIXES), "7968Ki");
        assert_eq!(compact(8_617_984.0, 1000.0, &DECIMAL_PREFIXES), "8618k");
        assert_eq!(compact(239_075_328.0, 1024.0, &BINARY_PREFIXES), "228Mi");
        assert_eq!(compact_int(700_275), "700275");
        assert_eq!(compact_int(6_813_500), "6813.5k");
        assert_eq!(compact_int(22_866_123), "22866k");
    }

    fn summary(min_ns: u64, max_ns: u64, mean_ns: f64, stddev_ns: f64) -> LatSummary {
        LatSummary {
            min_ns,
            max_ns,
            mean_ns,
            stddev_ns,
            samples: 100,
            percentiles: Vec::new(),
            bins: Default::default(),
        }
    }

    #[test]
    fn latency_unit_follows_fios_thresholds() {
        let line = |s: &LatSummary| {
            let mut out = String::new();
            write_lat_line(&mut out, "clat", s).unwrap();
            out
        };
        assert_eq!(
            line(&summary(37_100, 559_900, 102_530.0, 89_530.0)),
            "    clat (usec): min=37, max=559, avg=102.53, stdev=89.53\n"
        );
        assert_eq!(
            line(&summary(950, 16_104, 2256.13, 1270.51)),
            "    clat (nsec): min=950, max=16104, avg=2256.13, stdev=1270.51\n"
        );
        assert_eq!(
            line(&summary(3_000, 241_000, 58_000.0, 7_170.0)).replace("clat", " lat"),
            "     lat (usec): min=3, max=241, avg=58.00, stdev= 7.17\n"
        );
    }

    #[test]
    fn percentile_block_has_fios_columns() {
        let pcts: Vec<(f64, u64)> = [1.0, 5.0, 10.0, 20.0, 99.99]
            .iter()
            .zip([51_900, 54_528, 56_600, 58_900, 561_152])
            .map(|(&p, v)| (p, v))
            .collect();
        let mut out = String::new();
        write_percentiles(&mut out, "clat", &pcts).unwrap();
        assert_eq!(
            out,
            "    clat percentiles (usec):\n     |  1.00th=[   52],  5.00th=[   55], 10.00th=[   57], 20.00th=[   59],\n     | 99.99th=[  562]\n"
        );
        out.clear();
        write_percentiles(
            &mut out,
            "clat",
            &[(50.0, 318), (99.9, 946_176), (99.995, 946_176)],
        )
        .unwrap();
        assert_eq!(
            out,
            "    clat percentiles (nsec):\n     | 50.000th=[   318], 99.900th=[946176], 99.995th=[946176]\n"
        );
    }

    fn sample_report() -> RunReport {
        let read = DirReport {
            io_bytes: 8_159_232,
            total_ios: 1992,
            short_ios: 0,
            runtime_ns: 211_000_000,
            bw_bytes_per_sec: 38_668_739.0,
            iops: 9440.76,
            slat: None,
            clat: Some(LatSummary {
                percentiles: vec![(50.0, 66_048), (99.0, 382_976)],
                ..summary(37_100, 559_900, 102_530.0, 89_530.0)
            }),
            lat: Some(summary(37_200, 559_950, 102_580.0, 89_540.0)),
            bw_samples: SampleSummary {
                min: 86_614_016.0,
                max: 136_445_952.0,
                mean: 116_047_872.0,
                stddev: 26_115_880.0,
                samples: 3,
            },
            iops_samples: SampleSummary {
                min: 21146.0,
                max: 33312.0,
                mean: 28332.0,
                stddev: 6375.95,
                samples: 3,
            },
            prios: Vec::new(),
        };
        let mut lat_buckets = LatBuckets::default();
        lat_buckets.ns_pct[9] = 0.05;
        lat_buckets.us_pct = [
            28.76, 19.41, 2.93, 0.22, 0.17, 40.21, 1.07, 7.15, 0.004, 0.0,
        ];
        let job = JobReport {
            name: "t".into(),
            workers: 1,
            pid: Some(4242),
            options: vec![("rw".into(), "randread".into())],
            dirs: [read, DirReport::default(), DirReport::default()],
            sync: SyncReport::default(),
            cpu: CpuReport {
                usr_ns: 4_000_000,
                sys_ns: 61_300_000,
                usr_pct: 1.9,
                sys_pct: 29.05,
                ctx: 1985,
                majf: 0,
                minf: 12,
                cpu_ns_per_io: 2345.0,
            },
            depth: DepthReport {
                level_pct: [99.99, 0.01, 0.0, 0.0, 0.0, 0.0, 0.0],
                submit_pct: [0.0, 100.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                complete_pct: [0.0, 100.0, 0.0, 0.0, 0.0, 0.0, 0.0],
            },
            lat_buckets,
            runtime_ns: 211_000_000,
            ..Default::default()
        };
        let group_read = GroupDirSummary {
            io_bytes: 8_159_232,
            bw_bytes_per_sec: 38_668_739.0,
            min_bw_bytes_per_sec: 38_668_739.0,
            max_bw_bytes_per_sec: 38_668_739.0,
            min_runtime_ns: 211_000_000,
            max_runtime_ns: 211_000_000,
        };
        RunReport {
            schema_version: crate::model::SCHEMA_VERSION,
            tool_version: "0.1.0".into(),
            started_unix_ms: 1_795_305_009_000,
            elapsed_ns: None,
            command_line: vec!["run".into()],
            global_options: Vec::new(),
            jobs: vec![job],
            groups: vec![GroupReport {
                id: 0,
                mixed: None,
                dirs: [
                    group_read,
                    GroupDirSummary::default(),
                    GroupDirSummary::default(),
                ],
            }],
            disks: vec![DiskUtil {
                name: "vda".into(),
                read_ios: 1260,
                read_ticks_ms: 99,
                in_queue_ms: 99,
                util_pct: 44.04,
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    #[test]
    fn renders_a_job_like_fio() {
        let text = render(&sample_report());
        let expected_lines = [
            "t: (groupid=0, jobs=1): err= 0: pid=4242: Sat Nov 21 23:50:09 2026",
            "  read: IOPS=9440, BW=36.9MiB/s (38.7MB/s)(7968KiB/211msec)",
            "    clat (usec): min=37, max=559, avg=102.53, stdev=89.53",
            "     lat (usec): min=37, max=559, avg=102.58, stdev=89.54",
            "    clat percentiles (usec):",
            "     | 50.00th=[   67], 99.00th=[  383]",
            "   bw (  KiB/s): min=84584, max=133248, per=100.00%, avg=113328.00, stdev=25503.79, samples=3",
            "   iops        : min=21146, max=33312, avg=28332.00, stdev=6375.95, samples=3",
            "  lat (nsec)   : 1000=0.05%",
            "  lat (usec)   : 2=28.76%, 4=19.41%, 10=2.93%, 20=0.22%, 50=0.17%",
            "  lat (usec)   : 100=40.21%, 250=1.07%, 500=7.15%, 750=0.01%",
            "  cpu          : usr=1.90%, sys=29.05%, ctx=1985, majf=0, minf=12, cpu/io=2.35us, cpu/MiB=8.392ms",
            "  IO depths    : 1=100.0%, 2=0.1%, 4=0.0%, 8=0.0%, 16=0.0%, 32=0.0%, >=64=0.0%",
            "     submit    : 0=0.0%, 4=100.0%, 8=0.0%, 16=0.0%, 32=0.0%, 64=0.0%, >=64=0.0%",
            "     issued rwts: total=1992,0,0,0 short=0,0,0,0 dropped=0,0,0,0",
            "Run status group 0 (all jobs):",
            "   READ: bw=36.9MiB/s (38.7MB/s), 36.9MiB/s-36.9MiB/s (38.7MB/s-38.7MB/s), io=7968KiB (8159kB), run=211-211msec",
            "Disk stats (read/write):",
            "  vda: ios=1260/0, merge=0/0, ticks=99/0, in_queue=99, util=44.04%",
        ];
        for line in expected_lines {
            assert!(
                text.lines().any(|l| l == line),
                "missing {line:?} in\n{text}"
            );
        }
        // Nothing for directions, latencies and syncs that did not happen.
        for absent in ["write:", "slat", "WRITE:", "fsync", "lat (msec)"] {
            assert!(!text.contains(absent), "unexpected {absent:?} in\n{text}");
        }
    }

    #[test]
    fn findings_close_the_report() {
        let mut report = sample_report();
        assert!(
            !render(&report).contains("Findings:"),
            "no block without findings"
        );
        report.findings.push(Finding {
            code: "served-from-cache".into(),
            severity: Severity::Warning,
            title:
                "97% of the reads of job 't' never reached the device: this measured the page cache"
                    .into(),
            evidence: vec!["the job read 512.0 MiB while the device read 15.4 MiB".into()],
            advice: "use direct=1".into(),
            at_ns: None,
        });
        let text = render(&report);
        let tail: Vec<&str> = text.lines().skip_while(|l| *l != "Findings:").collect();
        assert_eq!(
            tail,
            [
                "Findings:",
                "  [WARNING] 97% of the reads of job 't' never reached the device: this measured the page cache (served-from-cache)",
                "      - the job read 512.0 MiB while the device read 15.4 MiB",
                "      what to do: use direct=1",
            ],
            "{text}"
        );
    }

    #[test]
    fn error_and_sync_are_shown() {
        let mut report = sample_report();
        let job = &mut report.jobs[0];
        job.errno = 28;
        job.error = Some("No space left on device".into());
        job.sync = SyncReport {
            total_ios: 10,
            lat: Some(LatSummary {
                percentiles: vec![(50.0, 192_000)],
                ..summary(80_000, 1_905_000, 234_280.0, 159_040.0)
            }),
        };
        let text = render(&report);
        assert!(
            text.starts_with(
                "\nt: (groupid=0, jobs=1): err=28 (error=No space left on device): pid=4242: "
            ),
            "expected fio's empty line, then the header with the error and the pid:\n{text}"
        );
        assert!(text.contains(
            "  fsync/fdatasync/sync_file_range:\n    sync (usec): min=80, max=1905, avg=234.28, stdev=159.04\n    sync percentiles (usec):\n"
        ));
        assert!(text.contains("total=1992,0,0,10 "));
    }
}
