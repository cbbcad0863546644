//! The "System during the run" block of the normal text report: a line per
//! target for its I/O stack, then a compact summary of
//! `RunReport.observations` (the full series are in iolens-json).

use crate::model::{
    CacheGuard, ClusterReport, JobSeries, LayoutRecord, Observations, RunReport, WorkerObservation,
};
use crate::units::{human_bytes, ByteUnits::BToTib};
use std::fmt::{self, Write};

/// Write the block; nothing when the run was not observed.
pub(crate) fn write_system(out: &mut String, report: &RunReport) -> fmt::Result {
    let obs = &report.observations;
    if obs.t_ns.is_empty() && obs.cache_guards.is_empty() && obs.layouts.is_empty() {
        return Ok(());
    }
    let span_ns = obs.t_ns.last().copied().unwrap_or(0);
    let kept = obs.t_ns.len();
    let samples = match obs.rolled_up {
        0 => format!("{kept} samples every {} ms", obs.interval_ns / 1_000_000),
        merged => format!(
            "{} samples every {} ms, {kept} kept: the older ones rolled up",
            kept as u64 + merged,
            obs.interval_ns / 1_000_000
        ),
    };
    writeln!(
        out,
        "\nSystem during the run ({samples}; the sampler used {:.2}% of a CPU):",
        share_pct(obs.sampler_cpu_ns, span_ns)
    )?;
    let cluster = report.cluster.as_deref();
    let observed = cluster.and_then(ClusterReport::first_host);
    if let (Some(cluster), Some(host)) = (cluster, observed) {
        let ranks: Vec<String> = host.ranks.iter().map(u32::to_string).collect();
        let others = if cluster.observed_hosts.len() > 1 {
            "; each other host by its first rank (its findings name it; its observations are in that rank's report in iolens-json)"
        } else {
            ""
        };
        writeln!(
            out,
            "  observed on {} by rank 0, where ranks {} of {} ran{others}",
            host.hostname,
            ranks.join(", "),
            cluster.ranks.len(),
        )?;
    }
    for stack in &report.environment.stacks {
        writeln!(out, "  {}", super::stack::stack_line(stack))?;
    }
    let movers = observed.map_or("the jobs".to_string(), |h| {
        format!("the ranks on {}", h.hostname)
    });
    for layout in &obs.layouts {
        write_layout(out, layout)?;
    }
    for guard in &obs.cache_guards {
        write_guard(out, guard)?;
    }
    for target in &obs.targets {
        // From the first job's start on: what the guard found before is on its own line.
        let read = obs.cache_during_jobs(target);
        if let (Some(first), Some(last)) = (read.first(), read.last()) {
            let (first, last) = (first.1.cached, last.1.cached);
            let max = read.iter().map(|(_, p)| p.cached).max().unwrap_or(0);
            let dirty_max = read.iter().map(|(_, p)| p.dirty).max().unwrap_or(0);
            writeln!(
                out,
                "  page cache {}: {first} -> max {max} -> {last} pages cached, max {dirty_max} dirty",
                target.path
            )?;
        }
    }
    let job_bytes = job_totals(&obs.jobs);
    // With a ledger the devices are in each job's table, over its window.
    let whole_run_devices = if obs.ledger.is_empty() {
        &obs.devices[..]
    } else {
        &[]
    };
    for device in whole_run_devices {
        let (Some(first), Some(last)) =
            (device.counter_series.first(), device.counter_series.last())
        else {
            continue;
        };
        let read = last.read_sectors.saturating_sub(first.read_sectors) * 512;
        let written = last.write_sectors.saturating_sub(first.write_sectors) * 512;
        writeln!(
            out,
            "  device {} ({}): read {}, wrote {}; {movers} read {}, wrote {}",
            device.name,
            device.via,
            human_bytes(read, BToTib),
            human_bytes(written, BToTib),
            human_bytes(job_bytes[0], BToTib),
            human_bytes(job_bytes[1], BToTib)
        )?;
    }
    super::ledger::write_ledger(out, obs)?;
    write_memory(out, obs)?;
    super::cgroup::write_cgroup(out, report)?;
    write_workers(out, obs)?;
    for change in &obs.tunable_changes {
        writeln!(
            out,
            "  {} changed from {} to {} at {:.1} s (by another process)",
            change.name,
            change.from,
            change.to,
            change.t_ns as f64 / 1e9
        )?;
    }
    for note in &obs.notes {
        writeln!(out, "  note: {note}")?;
    }
    Ok(())
}

fn write_layout(out: &mut String, layout: &LayoutRecord) -> fmt::Result {
    let written = human_bytes(layout.to - layout.from, BToTib);
    match &layout.error {
        None if layout.in_memory => writeln!(
            out,
            "  laid out {}: wrote {written}; the file lives in RAM (tmpfs keeps its pages; there is no device to read from)",
            layout.path
        ),
        None => writeln!(
            out,
            "  laid out {}: wrote {written}, then dropped it from the page cache (a first read goes to the device)",
            layout.path
        ),
        Some(e) => writeln!(
            out,
            "  laid out {}: wrote {written}, could not drop it from the page cache: {e}",
            layout.path
        ),
    }
}

fn write_guard(out: &mut String, guard: &CacheGuard) -> fmt::Result {
    let count = |p: Option<u64>| p.map_or("?".to_string(), |p| p.to_string());
    let action = if guard.purged {
        format!("dropped, {} left", count(guard.pages_after))
    } else if let Some(e) = &guard.error {
        format!("could not drop: {e}")
    } else {
        "kept (invalidate=0)".to_string()
    };
    writeln!(
        out,
        "  before job '{}': {} had {} pages cached; {action}",
        guard.job,
        guard.path,
        count(guard.pages_before)
    )
}

fn write_memory(out: &mut String, obs: &Observations) -> fmt::Result {
    let Some(peak) = obs
        .memory_series
        .iter()
        .max_by_key(|m| m.dirty_bytes + m.writeback_bytes)
    else {
        return Ok(());
    };
    writeln!(
        out,
        "  memory: Dirty+Writeback max {} (background threshold {}, threshold {})",
        human_bytes(peak.dirty_bytes + peak.writeback_bytes, BToTib),
        human_bytes(peak.dirty_background_threshold_bytes, BToTib),
        human_bytes(peak.dirty_threshold_bytes, BToTib)
    )
}

fn write_workers(out: &mut String, obs: &Observations) -> fmt::Result {
    for job in &obs.jobs {
        let workers: Vec<_> = obs.workers.iter().filter(|w| w.job == job.name).collect();
        let cpu: u64 = workers.iter().map(|w| w.cpu_ns).sum();
        let delay: u64 = workers.iter().map(|w| w.run_delay_ns).sum();
        if cpu + delay == 0 {
            continue;
        }
        write!(
            out,
            "  job '{}': workers on CPU {:.2} s, waiting for a CPU {:.2} s",
            job.name,
            cpu as f64 / 1e9,
            delay as f64 / 1e9,
        )?;
        if let Some(wait) = &job.cpu_wait {
            write!(out, "; while it ran: {}", wait.describe())?;
        }
        for (wchan, ns) in longest_waits(&workers).iter().take(3) {
            write!(out, "; in {wchan} {:.2} s", *ns as f64 / 1e9)?;
        }
        writeln!(out)?;
    }
    Ok(())
}

/// Wait channels summed over workers, longest first.
fn longest_waits<'a>(workers: &[&'a WorkerObservation]) -> Vec<(&'a str, u64)> {
    let mut all: Vec<(&str, u64)> = workers
        .iter()
        .flat_map(|w| &w.waits)
        .map(|w| (w.wchan.as_str(), w.time_ns))
        .collect();
    all.sort_unstable();
    let mut summed: Vec<(&str, u64)> = Vec::new();
    for (wchan, ns) in all {
        match summed.last_mut() {
            Some(last) if last.0 == wchan => last.1 += ns,
            _ => summed.push((wchan, ns)),
        }
    }
    summed.sort_by_key(|&(_, ns)| std::cmp::Reverse(ns));
    summed
}

/// Bytes the jobs moved over the whole run, [read, write].
fn job_totals(jobs: &[JobSeries]) -> [u64; 2] {
    let mut total = [0; 2];
    for interval in jobs.iter().flat_map(|j| &j.intervals) {
        total[0] += interval.bytes[0];
        total[1] += interval.bytes[1];
    }
    total
}

fn share_pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64 * 100.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{
        CachePages, CpuWait, DeviceCounters, DeviceObservation, JobInterval, Layer, MemorySample,
        StackLayer, TargetObservation, TargetStack, TunableChange, WaitTime,
    };

    fn observed() -> Observations {
        // A busy interval: 256 writes, 25 ms of run-queue delay.
        let interval = |bytes: u64| JobInterval {
            ios: [0, if bytes > 0 { 256 } else { 0 }],
            bytes: [0, bytes],
            run_delay_ns: if bytes > 0 { 25_000_000 } else { 0 },
            ..Default::default()
        };
        let mut obs = Observations {
            interval_ns: 100_000_000,
            t_ns: vec![0, 100_000_000, 200_000_000, 300_000_000],
            sampler_cpu_ns: 1_500_000,
            layouts: vec![LayoutRecord {
                path: "/tmp/f".into(),
                from: 1 << 20,
                to: 3 << 20,
                error: None,
                ..Default::default()
            }],
            cache_guards: vec![CacheGuard {
                job: "w".into(),
                path: "/dev/loop1".into(),
                pages_before: Some(192),
                purged: false,
                pages_after: Some(192),
                ..Default::default()
            }],
            targets: vec![TargetObservation {
                path: "/dev/loop1".into(),
                cache_series: [Some(192), None, Some(300), Some(250)]
                    .map(|cached| {
                        cached.map(|cached| CachePages {
                            cached,
                            ..Default::default()
                        })
                    })
                    .to_vec(),
                ..Default::default()
            }],
            devices: vec![DeviceObservation {
                zram_series: Vec::new(),
                name: "loop1".into(),
                via: "holds /dev/loop1".into(),
                counter_series: [0, 2048, 4096, 4096]
                    .map(|write_sectors| DeviceCounters {
                        write_sectors,
                        ..Default::default()
                    })
                    .to_vec(),
            }],
            memory_series: vec![MemorySample {
                dirty_bytes: 1 << 30,
                dirty_threshold_bytes: 2 << 30,
                ..Default::default()
            }],
            jobs: vec![JobSeries {
                measured_from_ns: None,
                buffers: String::new(),
                name: "w".into(),
                workers: 1,
                direct: false,
                invalidate: true,
                syncs_writes: false,
                targets: vec!["/dev/loop1".into()],
                intervals: vec![
                    interval(0),
                    interval(1 << 20),
                    interval(1 << 20),
                    interval(0),
                ],
                cpu_wait: None,
            }],
            workers: vec![WorkerObservation {
                job: "w".into(),
                cpu_ns: 900_000_000,
                run_delay_ns: 100_000_000,
                waits: vec![WaitTime {
                    wchan: "balance_dirty_pages".into(),
                    time_ns: 50_000_000,
                }],
                ..Default::default()
            }],
            tunable_changes: vec![TunableChange {
                t_ns: 150_000_000,
                name: "vm.dirty_bytes".into(),
                from: "0".into(),
                to: "805306368".into(),
            }],
            ..Default::default()
        };
        obs.jobs[0].cpu_wait = CpuWait::of(&obs.jobs[0], &obs.t_ns);
        obs
    }

    fn render(obs: Observations) -> String {
        render_report(RunReport {
            schema_version: 1,
            observations: obs,
            ..Default::default()
        })
    }

    fn render_report(report: RunReport) -> String {
        let mut out = String::new();
        write_system(&mut out, &report).unwrap();
        out
    }

    #[test]
    fn a_rolled_up_run_says_how_many_samples_were_taken_and_kept() {
        let mut obs = observed();
        obs.rolled_up = 6;
        let text = render(obs);
        assert!(
            text.contains("(10 samples every 100 ms, 4 kept: the older ones rolled up;"),
            "{text}"
        );
    }

    #[test]
    fn summarises_every_kind_of_observation() {
        let text = render(observed());
        for expected in [
            "4 samples every 100 ms; the sampler used 0.50% of a CPU",
            "laid out /tmp/f: wrote 2.0 MiB, then dropped it from the page cache (a first read goes to the device)",
            "before job 'w': /dev/loop1 had 192 pages cached; kept (invalidate=0)",
            "page cache /dev/loop1: 192 -> max 300 -> 250 pages cached",
            "device loop1 (holds /dev/loop1): read 0 B, wrote 2.0 MiB; the jobs read 0 B, wrote 2.0 MiB",
            "Dirty+Writeback max 1.0 GiB (background threshold 0 B, threshold 2.0 GiB)",
            "job 'w': workers on CPU 0.90 s, waiting for a CPU 0.10 s; while it ran: CPU wait 25.0% (0.05 s waiting for a CPU in 0.20 s of worker time); in balance_dirty_pages 0.05 s",
            "vm.dirty_bytes changed from 0 to 805306368 at 0.1 s",
        ] {
            assert!(text.contains(expected), "missing {expected:?} in\n{text}");
        }
    }

    #[test]
    fn cache_samples_from_before_the_job_do_not_count() {
        let mut obs = observed();
        // The layout left 254208 pages; the guard dropped them at 150 ms, then the job ran.
        obs.cache_guards[0].pages_before = Some(254_208);
        obs.cache_guards[0].pages_after = Some(0);
        obs.cache_guards[0].purged = true;
        obs.cache_guards[0].t_ns = 150_000_000;
        obs.targets[0].cache_series = [254_208, 254_208, 0, 16]
            .map(|cached| {
                Some(CachePages {
                    cached,
                    ..Default::default()
                })
            })
            .to_vec();
        let text = render(obs);
        assert!(
            text.contains("page cache /dev/loop1: 0 -> max 16 -> 16 pages cached"),
            "expected the samples from the job's start (200 ms) on, saw\n{text}"
        );
        assert!(
            text.contains("had 254208 pages cached; dropped, 0 left"),
            "expected the guard's own line to keep what was there before, saw\n{text}"
        );
    }

    #[test]
    fn each_target_gets_its_stack_on_one_line() {
        let mut report = RunReport {
            observations: observed(),
            ..Default::default()
        };
        report.environment.stacks = vec![TargetStack {
            target: "/dev/loop1".into(),
            layers: vec![StackLayer {
                depth: 0,
                layer: Layer::Loop {
                    name: "loop1".into(),
                    direct_io: true,
                    backing_file: "/img".into(),
                },
            }],
        }];
        let text = render_report(report);
        assert!(
            text.contains("\n  stack of /dev/loop1: loop1 (direct I/O)\n"),
            "{text}"
        );
    }

    #[test]
    fn an_unobserved_run_prints_nothing() {
        assert_eq!(render(Observations::default()), "");
    }
}
