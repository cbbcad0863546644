//! CPU facts: system-wide time per state (`/proc/stat`), one thread's CPU time
//! and run-queue delay (`/proc/<pid>/task/<tid>/schedstat`), and the CPU model
//! (`/proc/cpuinfo`).

use crate::model::SystemCpuSample;

/// The aggregate `cpu ` line of `/proc/stat`, converted from clock ticks to ns.
pub(crate) fn parse_proc_stat(text: &str, ticks_per_sec: u64) -> Option<SystemCpuSample> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let mut v = [0u64; 8];
    let mut fields = line.split_whitespace().skip(1);
    for slot in &mut v {
        *slot = fields.next()?.parse().ok()?;
    }
    let ns = |ticks: u64| ticks * (1_000_000_000 / ticks_per_sec.max(1));
    Some(SystemCpuSample {
        user_ns: ns(v[0]),
        nice_ns: ns(v[1]),
        system_ns: ns(v[2]),
        idle_ns: ns(v[3]),
        iowait_ns: ns(v[4]),
        irq_ns: ns(v[5]),
        softirq_ns: ns(v[6]),
        steal_ns: ns(v[7]),
    })
}

/// One thread's scheduler counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct SchedStat {
    /// Time on a CPU.
    pub cpu_ns: u64,
    /// Time runnable but waiting for a CPU.
    pub run_delay_ns: u64,
    /// Times it was scheduled in.
    pub timeslices: u64,
}

/// The three numbers of a `schedstat` file.
pub(crate) fn parse_schedstat(text: &str) -> Option<SchedStat> {
    let mut fields = text.split_whitespace().map(|f| f.parse::<u64>().ok());
    Some(SchedStat {
        cpu_ns: fields.next()??,
        run_delay_ns: fields.next()??,
        timeslices: fields.next()??,
    })
}

/// (model name, number of logical CPUs) from `/proc/cpuinfo`. Architectures
/// without "model name" (some ARM kernels) give an empty model.
pub(crate) fn parse_cpuinfo(text: &str) -> (String, u32) {
    let mut model = String::new();
    let mut count = 0;
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        match key.trim() {
            "processor" => count += 1,
            "model name" if model.is_empty() => model = value.trim().to_string(),
            _ => {}
        }
    }
    (model, count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_stat_aggregate_line_in_ns() {
        let text = "cpu  50477 1 24062 164836 2174 0 281 19 0 0\n\
                    cpu0 23282 1 10524 86649 508 0 77 6 0 0\n\
                    intr 1570643 0 0\n";
        let s = parse_proc_stat(text, 100).unwrap();
        assert_eq!(s.user_ns, 504_770_000_000);
        assert_eq!(s.nice_ns, 10_000_000);
        assert_eq!(s.system_ns, 240_620_000_000);
        assert_eq!(s.idle_ns, 1_648_360_000_000);
        assert_eq!(s.iowait_ns, 21_740_000_000);
        assert_eq!(s.softirq_ns, 2_810_000_000);
        assert_eq!(s.steal_ns, 190_000_000);
    }

    #[test]
    fn proc_stat_without_aggregate_line_is_none() {
        assert_eq!(parse_proc_stat("cpu0 1 2 3 4 5 6 7 8\n", 100), None);
        assert_eq!(parse_proc_stat("cpu  1 2 3\n", 100), None);
    }

    #[test]
    fn schedstat_has_three_counters() {
        let s = parse_schedstat("243395 2491386 2\n").unwrap();
        assert_eq!(
            s,
            SchedStat {
                cpu_ns: 243395,
                run_delay_ns: 2491386,
                timeslices: 2
            }
        );
        assert_eq!(parse_schedstat("1 2\n"), None);
        assert_eq!(parse_schedstat("1 x 3\n"), None);
    }

    #[test]
    fn cpuinfo_model_and_count() {
        let text = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) CPU @ 2.20GHz\n\n\
                    processor\t: 1\nmodel name\t: Intel(R) Xeon(R) CPU @ 2.20GHz\n";
        assert_eq!(
            parse_cpuinfo(text),
            ("Intel(R) Xeon(R) CPU @ 2.20GHz".to_string(), 2)
        );
        assert_eq!(
            parse_cpuinfo("processor : 0\nBogoMIPS : 50\n"),
            (String::new(), 1)
        );
    }
}
