//! Each CPU's current clock from cpufreq
//! (`/sys/devices/system/cpu/cpu<N>/cpufreq/scaling_cur_freq`, kHz), read every
//! sample so the `cpu-frequency` finding can see the clock move during a job.
//! Most VMs expose no cpufreq at all; then there is nothing to read.

use super::environment::is_cpu_dir_name;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Where the kernel lists the CPUs.
pub(crate) const SYS_CPU: &str = "/sys/devices/system/cpu";

/// The value of a `scaling_cur_freq` file, kHz.
pub(crate) fn parse_khz(text: &str) -> Option<u64> {
    text.trim().parse().ok()
}

/// The `scaling_cur_freq` files of every CPU that has one, kept open: sysfs
/// regenerates the value on each read at offset 0, so a sample costs one
/// `pread` per CPU instead of open, read and close.
pub(crate) struct FreqProbe {
    /// CPU number of each file, ascending.
    cpus: Vec<u32>,
    files: Vec<File>,
}

impl FreqProbe {
    /// The CPUs under `sys_cpu` (normally `SYS_CPU`) that expose their clock.
    pub(crate) fn discover(sys_cpu: &Path) -> FreqProbe {
        let mut found: Vec<(u32, File)> = std::fs::read_dir(sys_cpu)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|entry| {
                let name = entry.file_name();
                let name = name.to_str().filter(|n| is_cpu_dir_name(n))?;
                let cpu = name["cpu".len()..].parse().ok()?;
                let file = File::open(entry.path().join("cpufreq/scaling_cur_freq")).ok()?;
                Some((cpu, file))
            })
            .collect();
        found.sort_by_key(|&(cpu, _)| cpu);
        let (cpus, files) = found.into_iter().unzip();
        FreqProbe { cpus, files }
    }

    /// CPU number of each column of a sample.
    pub(crate) fn cpus(&self) -> &[u32] {
        &self.cpus
    }

    /// No CPU exposes its clock: frequency changes cannot be seen.
    pub(crate) fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Every CPU's clock now, kHz, in `cpus()` order; 0 where the file could not
    /// be read (the CPU went offline).
    pub(crate) fn sample(&self) -> Vec<u64> {
        self.files.iter().map(read_khz).collect()
    }
}

/// What cpufreq tells about the CPU clock. `doctor` prints it and a run notes it,
/// both from this one decision, so the two cannot disagree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ClockControl {
    /// No CPU exposes its clock (most VMs): whether it moves cannot be seen.
    NotExposed,
    /// Every CPU runs the `performance` governor.
    Performance,
    /// These governors let the clock follow the load.
    FollowsLoad(Vec<String>),
}

impl ClockControl {
    /// `probe` says whether the clock can be read at all; `governors` are the
    /// distinct cpufreq governors in use (`Environment::cpufreq_governors`).
    pub(crate) fn decide(probe: &FreqProbe, governors: &[String]) -> ClockControl {
        if probe.is_empty() {
            return ClockControl::NotExposed;
        }
        let others: Vec<String> = governors
            .iter()
            .filter(|g| *g != "performance")
            .cloned()
            .collect();
        if others.is_empty() {
            ClockControl::Performance
        } else {
            ClockControl::FollowsLoad(others)
        }
    }

    /// One line, the same in `doctor` and in a run's notes.
    pub(crate) fn describe(&self) -> String {
        match self {
            ClockControl::NotExposed => {
                "cpufreq not exposed: frequency changes cannot be seen".into()
            }
            ClockControl::Performance => "CPU frequency: performance governor".into(),
            ClockControl::FollowsLoad(governors) => format!(
                "CPU frequency governor {}: the clock follows the load, so CPU-heavy I/O varies",
                governors.join(", ")
            ),
        }
    }
}

fn read_khz(file: &File) -> u64 {
    // A kHz value is at most 10 digits and a newline.
    let mut buf = [0u8; 32];
    let Ok(len) = file.read_at(&mut buf, 0) else {
        return 0;
    };
    std::str::from_utf8(&buf[..len])
        .ok()
        .and_then(parse_khz)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::scratch_dir;

    #[test]
    fn khz_from_file_text() {
        assert_eq!(parse_khz("2400000\n"), Some(2_400_000));
        assert_eq!(parse_khz("<unknown>\n"), None);
        assert_eq!(parse_khz(""), None);
    }

    #[test]
    fn discovers_and_reads_cpus_with_cpufreq_in_cpu_order() {
        let dir = scratch_dir();
        let root = dir.path();
        for (cpu, khz) in [(10, "800000\n"), (2, "3400000\n")] {
            let freq = root.join(format!("cpu{cpu}/cpufreq"));
            std::fs::create_dir_all(&freq).unwrap();
            std::fs::write(freq.join("scaling_cur_freq"), khz).unwrap();
        }
        // A CPU without cpufreq and a directory that is not a CPU.
        std::fs::create_dir_all(root.join("cpu0")).unwrap();
        std::fs::create_dir_all(root.join("cpufreq/policy0")).unwrap();

        let probe = FreqProbe::discover(root);
        assert_eq!(probe.cpus(), &[2, 10]);
        assert_eq!(probe.sample(), vec![3_400_000, 800_000]);

        // Each sample reads the value anew.
        std::fs::write(root.join("cpu10/cpufreq/scaling_cur_freq"), "1200000\n").unwrap();
        assert_eq!(probe.sample(), vec![3_400_000, 1_200_000]);
    }

    #[test]
    fn the_clock_verdict_needs_an_exposed_clock_first() {
        let dir = scratch_dir();
        let governors = ["powersave".to_string(), "performance".to_string()];
        let hidden = FreqProbe::discover(dir.path());
        assert_eq!(
            ClockControl::decide(&hidden, &governors),
            ClockControl::NotExposed,
            "no scaling_cur_freq: expected 'not exposed' whatever the governors say"
        );
        let freq = dir.path().join("cpu0/cpufreq");
        std::fs::create_dir_all(&freq).unwrap();
        std::fs::write(freq.join("scaling_cur_freq"), "2000000\n").unwrap();
        let seen = FreqProbe::discover(dir.path());
        assert_eq!(
            ClockControl::decide(&seen, &governors[1..]),
            ClockControl::Performance
        );
        let load = ClockControl::decide(&seen, &governors);
        assert_eq!(load, ClockControl::FollowsLoad(vec!["powersave".into()]));
        assert!(
            load.describe().contains("governor powersave"),
            "expected the governor named, got {}",
            load.describe()
        );
    }

    #[test]
    fn nothing_to_read_without_cpufreq() {
        let dir = scratch_dir();
        std::fs::create_dir_all(dir.path().join("cpu0/cpuidle")).unwrap();
        assert!(FreqProbe::discover(dir.path()).is_empty());
    }
}
