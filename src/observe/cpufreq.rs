//! Each CPU's current clock from cpufreq
//! (`/sys/devices/system/cpu/cpu<N>/cpufreq/scaling_cur_freq`, kHz), read every
//! sample so the `cpu-frequency` finding can see the clock move during a job.
//! Most VMs expose no cpufreq at all; then there is nothing to read.

use super::environment::is_cpu_dir_name;
use super::read_into;
use std::path::{Path, PathBuf};

/// Where the kernel lists the CPUs.
pub const SYS_CPU: &str = "/sys/devices/system/cpu";

/// The value of a `scaling_cur_freq` file, kHz.
pub fn parse_khz(text: &str) -> Option<u64> {
    text.trim().parse().ok()
}

/// The `scaling_cur_freq` files of every CPU that has one, paths built once.
pub struct FreqProbe {
    /// CPU number of each file, ascending.
    cpus: Vec<u32>,
    paths: Vec<PathBuf>,
}

impl FreqProbe {
    /// The CPUs under `sys_cpu` (normally `SYS_CPU`) that expose their clock.
    pub fn discover(sys_cpu: &Path) -> FreqProbe {
        let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir(sys_cpu)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|entry| {
                let name = entry.file_name();
                let name = name.to_str().filter(|n| is_cpu_dir_name(n))?;
                let cpu = name["cpu".len()..].parse().ok()?;
                let path = entry.path().join("cpufreq/scaling_cur_freq");
                path.exists().then_some((cpu, path))
            })
            .collect();
        found.sort();
        let (cpus, paths) = found.into_iter().unzip();
        FreqProbe { cpus, paths }
    }

    /// CPU number of each column of a sample.
    pub fn cpus(&self) -> &[u32] {
        &self.cpus
    }

    /// No CPU exposes its clock: frequency changes cannot be seen.
    pub fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }

    /// Every CPU's clock now, kHz, in `cpus()` order; 0 where the file could not
    /// be read (the CPU went offline). `buf` is the caller's reused read buffer.
    pub fn sample(&self, buf: &mut String) -> Vec<u64> {
        self.paths
            .iter()
            .map(|path| {
                if read_into(path, buf) {
                    parse_khz(buf).unwrap_or(0)
                } else {
                    0
                }
            })
            .collect()
    }
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
        let mut buf = String::new();
        assert_eq!(probe.sample(&mut buf), vec![3_400_000, 800_000]);

        std::fs::remove_file(root.join("cpu10/cpufreq/scaling_cur_freq")).unwrap();
        assert_eq!(probe.sample(&mut buf), vec![3_400_000, 0]);
    }

    #[test]
    fn nothing_to_read_without_cpufreq() {
        let dir = scratch_dir();
        std::fs::create_dir_all(dir.path().join("cpu0/cpuidle")).unwrap();
        assert!(FreqProbe::discover(dir.path()).is_empty());
    }
}
