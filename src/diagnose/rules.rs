//! The finding catalogue: every rule's code, severities, scope and check in
//! one table, `RULES`. `diagnose` runs the run's rules from it in its order
//! (which is the order of the findings), and the README's findings table is
//! generated from it, so the two cannot drift apart.

use super::{
    amplification, cache_eviction, cgroup_cpu, cgroup_io, cgroup_memory, compressed, cpu_frequency,
    cpu_starvation, device_traffic, foreign_io, fresh_space, holes, media, missed_schedule,
    pagecache, still_moving, straggler, tool_bound, tunables, unstable, writeback, writes_in_ram,
};
use crate::model::{Finding, RunReport, Severity};

/// What a rule weighs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Scope {
    /// The jobs against their host: on several ranks once per observed host,
    /// with that host's ranks' jobs, its title naming the host.
    Host,
    /// Every rank's jobs together.
    Ranks,
    /// The repetitions of `--repeat` and their statistics.
    Repetitions,
}

/// How a rule's findings are made.
pub(super) enum Check {
    /// A pure function over one run's report.
    Run(fn(&RunReport) -> Vec<Finding>),
    /// In `series::repetitions::build`, over the repetitions with their statistics.
    WithTheRepetitions,
}

/// One finding's rule: its code, the severities it is raised with, what it
/// weighs, how, and when it fires (the README's words).
pub(super) struct Rule {
    pub code: &'static str,
    pub severities: &'static [Severity],
    pub scope: Scope,
    pub check: Check,
    #[cfg_attr(
        not(test),
        expect(
            dead_code,
            reason = "the README's table is generated from it by a test"
        )
    )]
    pub fires_when: &'static str,
}

/// Every rule, the run's in the order `diagnose` runs them.
pub(super) const RULES: &[Rule] = &[
    Rule {
        code: "no-device",
        severities: &[Severity::Warning],
        scope: Scope::Host,
        check: Check::Run(media::no_device),
        fires_when: "a job's target is on a filesystem with no local device: tmpfs/ramfs (\"there is no device: this measured RAM\"), FUSE (its daemon), a network filesystem (the network and the server)",
    },
    Rule {
        code: "loop-without-direct-io",
        severities: &[Severity::Warning],
        scope: Scope::Host,
        check: Check::Run(media::loop_without_direct_io),
        fires_when: "a direct-I/O job on a loop device without direct I/O (`loop/dio = 0`) whose backing file's disk saw less than half of the job's bytes: the loop device used its backing file's page cache; the fix is `losetup --direct-io=on` (a loop device over tmpfs is a RAM disk by design and stays silent)",
    },
    Rule {
        code: "pagecache-under-direct-io",
        severities: &[Severity::Info, Severity::Warning],
        scope: Scope::Host,
        check: Check::Run(pagecache::pagecache_under_direct_io),
        fires_when: "a direct-I/O job ran while its target had cached pages (how many; when they appeared, how many then and which jobs were running; who opened the target then (as root: fanotify for a file; for a device, an inotify open alarm and a `/proc/*/fd` scan at once) and who had it open at that sample, or that the reader was already gone and how to catch it; probable cause, a process only when one was seen; the advice says what they cost: direct writes invalidate them, direct reads wait for the dirty ones to be written back); `info` when `invalidate=1` dropped pages of a block device before the job, and instead of the warning when the pages are of a file the run made and only the job wrote (btrfs caches pages of direct writes that extend a file)",
    },
    Rule {
        code: "served-from-cache",
        severities: &[Severity::Warning],
        scope: Scope::Host,
        check: Check::Run(device_traffic::served_from_cache),
        fires_when: "a buffered job's reads mostly never reached the device (\"97% of your reads never reached the device\"); seen in the device's counters, or in the target's page cache when the job started (so other processes reading the same device do not hide it)",
    },
    Rule {
        code: "direct-io-not-honoured",
        severities: &[Severity::Warning],
        scope: Scope::Host,
        check: Check::Run(device_traffic::direct_io_not_honoured),
        fires_when: "`direct=1`, yet the device saw less than half of the job's bytes; the evidence names the layers of the stack that can serve O_DIRECT from a cache (`data=journal`, btrfs compression, FUSE or a network filesystem, a loop device without direct I/O)",
    },
    Rule {
        code: "writes-left-in-ram",
        severities: &[Severity::Warning],
        scope: Scope::Host,
        check: Check::Run(writes_in_ram::writes_left_in_ram),
        fires_when: "a buffered writer's device received less than half of what it wrote (≥ 16 MiB) and at least a quarter was still dirty in its targets when it ended: the write-side twin of `served-from-cache`",
    },
    Rule {
        code: "writeback-stall",
        severities: &[Severity::Warning],
        scope: Scope::Host,
        check: Check::Run(writeback::writeback_stall),
        fires_when: "buffered writes blocked in dirty throttling: time in `balance_dirty_pages`/`folio_wait_bit`, or max latency jumping while Dirty+Writeback is past the background threshold that applies to the writer (its cgroup's own under cgroup v2, else the machine's); for a job that syncs its own writes (`fsync=`, `fdatasync=`, `end_fsync`, `sync=`) only `balance_dirty_pages` counts, its waits for writeback being what it measures",
    },
    Rule {
        code: "cgroup-memory-limit",
        severities: &[Severity::Warning],
        scope: Scope::Host,
        check: Check::Run(cgroup_memory::cgroup_memory_limit),
        fires_when: "such a stall happened while the run's cgroup was at its memory limit (usage ≥ 90 % of `memory.max`/`memory.high`/`memory.limit_in_bytes`, or the limit hit): the limit and the usage; reported instead of `writeback-stall`",
    },
    Rule {
        code: "cgroup-io-limit",
        severities: &[Severity::Warning],
        scope: Scope::Host,
        check: Check::Run(cgroup_io::cgroup_io_limit),
        fires_when: "a job's read or write rate (MiB/s or IOPS) on a device sat within 10 % of its cgroup's limit there (`io.max`, `blkio.throttle.*_device`)",
    },
    Rule {
        code: "tool-bound",
        severities: &[Severity::Warning],
        scope: Scope::Host,
        check: Check::Run(tool_bound::tool_bound),
        fires_when: "the workers were on a CPU ≥ 95 % of their runtime: the CPU, not the device, set the pace",
    },
    Rule {
        code: "read-from-holes",
        severities: &[Severity::Warning],
        scope: Scope::Host,
        check: Check::Run(holes::read_from_holes),
        fires_when: "a job read ranges that hold no stored data, wherever the hole is: a sparse file, preallocated extents never written (fully allocated, yet `SEEK_HOLE` finds a hole), a loop device whose backing file has holes, a zram device (a thin device) that held data for less than half of the range the job used",
    },
    Rule {
        code: "foreign-io",
        severities: &[Severity::Warning],
        scope: Scope::Host,
        check: Check::Run(foreign_io::foreign_io),
        fires_when: "the device holding a job's targets moved ≥ 10 % of its bytes (and ≥ 8 MiB) beyond what every iolens thread caused there in the job's window — reads beyond iolens' are someone else's, writes beyond a writing run's are its own unless another writer was seen — naming the other processes whose I/O matches the gap, or saying that none was seen",
    },
    Rule {
        code: "job-amplification",
        severities: &[Severity::Warning],
        scope: Scope::Host,
        check: Check::Run(amplification::job_amplification),
        fires_when: "the job made storage read beyond its own bytes (≥ 1 MiB and half its bytes: read-modify-write of writes covering part of a page, mmap read-around, readahead), or its device wrote beyond what iolens submitted (≥ 8 MiB and half the job's writes) while no other writer was seen: journal and metadata, with the mount option that explains it (`data=journal`)",
    },
    Rule {
        code: "compressible-data",
        severities: &[Severity::Warning],
        scope: Scope::Host,
        check: Check::Run(compressed::compressible_data),
        fires_when: "a zram device stored less than a quarter of the data it holds (`mm_stat`): the job's buffers (named: `zero_buffers`, `buffer_compress_percentage`, …) compress away, so the device did not store the data as written",
    },
    Rule {
        code: "unstable-throughput",
        severities: &[Severity::Warning],
        scope: Scope::Host,
        check: Check::Run(unstable::unstable_throughput),
        fires_when: "the per-interval IOPS changed level part-way (≥ 25 %, ≥ 6 standard errors); both segments are reported",
    },
    Rule {
        code: "still-moving",
        severities: &[Severity::Warning],
        scope: Scope::Host,
        check: Check::Run(still_moving::still_moving),
        fires_when: "the per-interval IOPS was still rising or falling when the run ended (a robust line through the last third of the measured intervals moves ≥ 15 % of its level and ≥ 6 standard errors): the average is a point on a curve; says since when (the knee of the best fit of a level, then a line); left to `steadystate=` when it judged the job steady, and instead of `unstable-throughput`",
    },
    Rule {
        code: "first-pass-allocates",
        severities: &[Severity::Info, Severity::Warning],
        scope: Scope::Host,
        check: Check::Run(fresh_space::first_pass_allocates),
        fires_when: "a write job's target was fresh space when the run started (a file with holes, preallocated extents never written, a loop device over a file with holes: a thin device), and its per-interval IOPS changed level (by `unstable-throughput`'s bar, weighing the 10 intervals either side) within 3 intervals (or 5 % of them) of the moment the bytes written to its targets (by it and the jobs before and beside it) reached the range they span: the first pass allocated, then overwrites; names both speeds and when; instead of `unstable-throughput` and `still-moving`. `info` when its measured window (≥ 20 intervals) never got past the first pass: the result is a first-pass number",
    },
    Rule {
        code: "cpu-frequency",
        severities: &[Severity::Info, Severity::Warning],
        scope: Scope::Host,
        check: Check::Run(cpu_frequency::cpu_frequency),
        fires_when: "`info`: a cpufreq governor other than `performance`; `warning`: a CPU's sampled clock moved > 10 % from its median while a job ran (min/median/max MHz and when)",
    },
    Rule {
        code: "cache-evicted-mid-run",
        severities: &[Severity::Warning],
        scope: Scope::Host,
        check: Check::Run(cache_eviction::cache_evicted_mid_run),
        fires_when: "a buffered job's IOPS changed (≥ 25 %) at the sample where its target's pages were evicted and its cached pages fell: names the time, the pages and whose reclaim it was (the run's cgroup at its memory limit, the machine's reclaim scanning, or neither: proactive reclaim)",
    },
    Rule {
        code: "cache-evicted-without-pressure",
        severities: &[Severity::Warning],
        scope: Scope::Host,
        check: Check::Run(cache_eviction::cache_evicted_without_pressure),
        fires_when: "target pages were evicted while reclaim scanned nothing (proactive reclaim such as DAMON) and the run's cgroup was never at its memory limit; when a job's speed changed with it, `cache-evicted-mid-run` says so instead",
    },
    Rule {
        code: "tunables-changed",
        severities: &[Severity::Warning],
        scope: Scope::Host,
        check: Check::Run(|report| tunables::tunables_changed(report).into_iter().collect()),
        fires_when: "a `vm.dirty_*` setting changed during the run",
    },
    Rule {
        code: "cpu-starvation",
        severities: &[Severity::Warning],
        scope: Scope::Host,
        check: Check::Run(cpu_starvation::cpu_starvation),
        fires_when: "a job's CPU wait is ≥ 20 %: its workers waited for a CPU that share of their time (left to `cgroup-cpu-quota` when the quota's throttling explains most of it)",
    },
    Rule {
        code: "cgroup-cpu-quota",
        severities: &[Severity::Warning],
        scope: Scope::Host,
        check: Check::Run(|report| cgroup_cpu::cgroup_cpu_quota(report).into_iter().collect()),
        fires_when: "the cgroup's CPU quota (`cpu.max`, `cpu.cfs_quota_us`) throttled it ≥ 10 % of the jobs' time: the quota, throttled periods and time",
    },
    Rule {
        code: "straggler",
        severities: &[Severity::Warning],
        scope: Scope::Ranks,
        check: Check::Run(straggler::straggler),
        fires_when: "on a run on several MPI ranks, a rank's MB/s or end time is a MAD outlier among the ranks' (as `--repeat`'s outlying runs) and ≥ 10 % from the median: named with its host, rate and lag behind the first rank to end",
    },
    Rule {
        code: "missed-schedule",
        severities: &[Severity::Warning],
        scope: Scope::Ranks,
        check: Check::Run(missed_schedule::missed_schedule),
        fires_when: "a rate-limited job (`rate`, `rate_iops`) whose I/Os went out late (more than two intervals at the rate and 1 ms after their due time) for ≥ 2 % of them: the stalls in which nothing could be issued though I/Os were due (when, how long, how many I/Os fell due), how far behind it got and whether it caught up, and for each direction the usual p99 beside the p99 counted from the due times, which the usual percentiles leave out (coordinated omission)",
    },
    Rule {
        code: "bimodal-results",
        severities: &[Severity::Warning],
        scope: Scope::Repetitions,
        check: Check::WithTheRepetitions,
        fires_when: "`--repeat`: the runs fall into two groups separated by a wide gap; names the report fields (outside the measurements) whose values split the groups, and a finding of the repetitions that every run of one group had and no run of the other",
    },
    Rule {
        code: "first-run-effect",
        severities: &[Severity::Warning],
        scope: Scope::Repetitions,
        check: Check::WithTheRepetitions,
        fires_when: "`--repeat`: the first repetition is an outlier (modified z-score over the runs)",
    },
    Rule {
        code: "repeated-straggler",
        severities: &[Severity::Info, Severity::Warning],
        scope: Scope::Repetitions,
        check: Check::WithTheRepetitions,
        fires_when: "`--repeat` on several MPI ranks: a rank that was a `straggler` in some repetitions, named with them; a warning when in every one, else `info`",
    },
];

/// The findings of the rules of `scope` over `report`, in the catalogue's order.
pub(super) fn run_rules(report: &RunReport, scope: Scope) -> Vec<Finding> {
    let checks = RULES.iter().filter(|rule| rule.scope == scope);
    checks
        .flat_map(|rule| {
            let findings = match rule.check {
                Check::Run(check) => check(report),
                Check::WithTheRepetitions => Vec::new(),
            };
            for finding in &findings {
                debug_assert!(
                    finding.code == rule.code && rule.severities.contains(&finding.severity),
                    "{} raised as {} {}: not what RULES says",
                    rule.code,
                    finding.severity.name(),
                    finding.code
                );
            }
            findings
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fmt::Write;

    impl Scope {
        fn word(self) -> &'static str {
            match self {
                Scope::Host => "host",
                Scope::Ranks => "ranks",
                Scope::Repetitions => "`--repeat`",
            }
        }
    }

    /// The README's findings table: a row per rule.
    pub(super) fn findings_table() -> String {
        let mut table =
            String::from("| code | severity | scope | fires when |\n|---|---|---|---|\n");
        for rule in RULES {
            let severities: Vec<&str> = rule.severities.iter().map(|s| s.name()).collect();
            let _ = writeln!(
                table,
                "| `{}` | {} | {} | {} |",
                rule.code,
                severities.join(", "),
                rule.scope.word(),
                rule.fires_when
            );
        }
        table
    }

    const README: &str = include_str!("../../docs/findings.md");

    #[test]
    fn the_readme_findings_table_is_the_catalogues() {
        let table = findings_table();
        let header = table.lines().next().expect("a header line");
        let start = README.find(header).unwrap_or_else(|| {
            panic!("no findings table in docs/findings.md; paste this one under ## Findings:\n\n{table}")
        });
        let rows = README[start..]
            .lines()
            .take_while(|line| line.starts_with('|'))
            .map(|line| format!("{line}\n"))
            .collect::<String>();
        assert!(
            rows == table,
            "docs/findings.md's findings table differs from diagnose::rules::RULES; paste this one instead:\n\n{table}"
        );
    }

    #[test]
    fn each_code_has_one_rule() {
        let mut codes: Vec<&str> = RULES.iter().map(|rule| rule.code).collect();
        codes.sort_unstable();
        let before = codes.len();
        codes.dedup();
        assert_eq!(codes.len(), before, "a code is in RULES twice");
    }
}
