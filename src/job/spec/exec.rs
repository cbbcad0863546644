//! Execution: how many workers, threads or processes, timing, grouping and scheduling.

use crate::job::choice::choice_words;
use crate::job::error::JobError;
use crate::job::layers::Layers;
use crate::job::options::{opt, OptionDef};
use crate::units::{self, UnitError};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// fio's `cpus_allowed_policy=`: whether the workers share the CPUs or take one each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CpuPolicy {
    Shared,
    Split,
}

choice_words!(CpuPolicy {
    "shared" => CpuPolicy::Shared,
    "split" => CpuPolicy::Split,
});

/// How each worker thread is scheduled (fio's `cpus_allowed`, `nice`, `prio`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SchedSpec {
    /// CPUs the workers may run on (`cpus_allowed=`, `cpumask=`); empty = no pinning.
    pub cpus: Vec<usize>,
    /// `cpus_allowed_policy=split`: worker N runs only on the Nth of `cpus` (wrapping).
    pub split_cpus: bool,
    /// `nice=` (-20..=19); `None` keeps the inherited value.
    pub nice: Option<i32>,
    /// `prioclass=` and `prio=` as (class, level); `None` keeps the inherited priority.
    pub ioprio: Option<(u32, u32)>,
}

/// Execution: workers, timing, grouping.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ExecSpec {
    pub numjobs: u32,
    /// Workers as threads (`thread`) or processes (fio's default).
    pub thread: bool,
    pub group_reporting: bool,
    /// Wait for the previous jobs to finish before starting (starts a new group).
    pub stonewall: bool,
    pub new_group: bool,
    pub startdelay: Duration,
    pub runtime: Option<Duration>,
    pub time_based: bool,
    pub ramp_time: Duration,
    pub sched: SchedSpec,
    /// `exec_prerun=`: a shell command run before each clone starts (a failure fails it).
    pub prerun: Option<String>,
    /// `exec_postrun=`: a shell command run after each clone ends.
    pub postrun: Option<String>,
}

impl Layers<'_> {
    pub(crate) fn exec(&self) -> Result<ExecSpec, JobError> {
        let runtime = self.time(opt::RUNTIME)?;
        let (time_based, time_based_given) = self.bool_and_given(opt::TIME_BASED)?;
        if let (true, None, Some(setting)) = (time_based, runtime, time_based_given) {
            return Err(setting.invalid_with_hint(
                "needs a runtime to run for",
                "set runtime=, e.g. runtime=60s",
            ));
        }
        Ok(ExecSpec {
            numjobs: self.count_u32(opt::NUMJOBS, 1)?,
            thread: self.bool(opt::THREAD)?,
            group_reporting: self.bool(opt::GROUP_REPORTING)?,
            stonewall: self.bool(opt::STONEWALL)?,
            new_group: self.bool(opt::NEW_GROUP)?,
            startdelay: self.time(opt::STARTDELAY)?.unwrap_or_default(),
            runtime,
            time_based,
            ramp_time: self.time(opt::RAMP_TIME)?.unwrap_or_default(),
            sched: self.sched()?,
            prerun: self.given(opt::EXEC_PRERUN).map(|s| s.text.to_string()),
            postrun: self.given(opt::EXEC_POSTRUN).map(|s| s.text.to_string()),
        })
    }

    fn sched(&self) -> Result<SchedSpec, JobError> {
        let mut cpus = match (self.given(opt::CPUS_ALLOWED), self.given(opt::CPUMASK)) {
            (Some(list), _) => parse_cpu_list(list.text).map_err(|e| list.invalid(e))?,
            (None, Some(mask)) => {
                let bits =
                    units::parse_count(mask.text, self.kb_base).map_err(|e| mask.invalid(e))?;
                (0..64).filter(|cpu| bits >> cpu & 1 == 1).collect()
            }
            (None, None) => Vec::new(),
        };
        cpus.sort_unstable();
        cpus.dedup();
        let policy: CpuPolicy = self.choice(opt::CPUS_ALLOWED_POLICY)?;
        let nice = self
            .given(opt::NICE)
            .map(|s| {
                s.text
                    .trim()
                    .parse::<i32>()
                    .ok()
                    .filter(|n| (-20..=19).contains(n))
                    .ok_or_else(|| s.invalid("not a whole number from -20 to 19"))
            })
            .transpose()?;
        // Neither has a default: unset is the kernel's choice.
        let level = |def: &'static OptionDef, range: std::ops::RangeInclusive<u64>| {
            let Some(s) = self.given(def) else {
                return Ok(None);
            };
            match units::parse_count(s.text, self.kb_base).map_err(|e| s.invalid(e))? {
                v if !range.contains(&v) => {
                    Err(s.invalid(format!("must be from {} to {}", range.start(), range.end())))
                }
                v => Ok(Some(v as u32)),
            }
        };
        let (class, prio) = (level(opt::PRIOCLASS, 1..=3)?, level(opt::PRIO, 0..=7)?);
        // The kernel's best-effort class, and its default level, when only one is given.
        let ioprio = match (class, prio) {
            (None, None) => None,
            (class, prio) => Some((class.unwrap_or(2), prio.unwrap_or(4))),
        };
        Ok(SchedSpec {
            cpus,
            split_cpus: policy == CpuPolicy::Split,
            nice,
            ioprio,
        })
    }
}

/// `0-3,6,8-9`: CPU numbers and inclusive ranges.
fn parse_cpu_list(text: &str) -> Result<Vec<usize>, UnitError> {
    let number = |t: &str| {
        t.trim()
            .parse::<usize>()
            .map_err(|_| UnitError::Invalid(format!("'{t}' is not a CPU number")))
    };
    let mut cpus = Vec::new();
    for part in text.split(',').filter(|p| !p.trim().is_empty()) {
        match part.split_once('-') {
            Some((first, last)) => {
                let (first, last) = (number(first)?, number(last)?);
                if first > last {
                    return Err(UnitError::Invalid(format!("range {part} runs backwards")));
                }
                cpus.extend(first..=last);
            }
            None => cpus.push(number(part)?),
        }
    }
    Ok(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::resolve::tests::{error, job};

    #[test]
    fn exec_options() {
        let spec = job(&[
            "--numjobs=4",
            "--thread",
            "--group_reporting",
            "--wait_for_previous",
            "--new_group",
            "--startdelay=500ms",
            "--timeout=2m",
            "--time_based",
            "--ramp_time=5",
        ]);
        let e = &spec.exec;
        assert_eq!(e.numjobs, 4);
        assert!(e.thread && e.group_reporting && e.stonewall && e.new_group && e.time_based);
        assert_eq!(e.startdelay, Duration::from_millis(500));
        assert_eq!(e.runtime, Some(Duration::from_secs(120)));
        assert_eq!(e.ramp_time, Duration::from_secs(5));
        assert_eq!(
            error(&["--name=a", "--size=1m", "--time_based"]),
            "command line argument 3: time_based=1: needs a runtime to run for \
             (set runtime=, e.g. runtime=60s)"
        );
        assert!(error(&["--name=a", "--size=1m", "--numjobs=0"]).contains("at least 1"));
    }

    #[test]
    fn scheduling_options() {
        let sched = job(&[
            "--cpus_allowed=2,0-1,1",
            "--cpus_allowed_policy=split",
            "--nice=5",
            "--prio=6",
        ])
        .exec
        .sched;
        assert_eq!(sched.cpus, vec![0, 1, 2]);
        assert!(sched.split_cpus);
        assert_eq!((sched.nice, sched.ioprio), (Some(5), Some((2, 6))));
        assert_eq!(job(&["--cpumask=0x5"]).exec.sched.cpus, vec![0, 2]);
        assert_eq!(job(&["--prioclass=3"]).exec.sched.ioprio, Some((3, 4)));
        assert_eq!(job(&[]).exec.sched, SchedSpec::default());
        assert!(error(&["--name=a", "--size=1m", "--cpus_allowed=3-1"]).contains("backwards"));
        assert!(error(&["--name=a", "--size=1m", "--nice=40"]).contains("-20 to 19"));
        assert!(error(&["--name=a", "--size=1m", "--prio=8"]).contains("from 0 to 7"));
    }
}
