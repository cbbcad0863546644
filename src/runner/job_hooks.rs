//! What runs around the jobs of a group, as fio runs it around each job: the
//! `ioscheduler=` switch, then `exec_prerun` before the workers start and
//! `exec_postrun` after they end. Like fio, each command runs once per clone with
//! `sh -c`, in the current directory, its output and errors in `JOBNAME.prerun.txt`
//! (`.postrun.txt`); a failed prerun fails its job, which then does no I/O. A
//! worker left behind stuck in the kernel runs no postrun (fio's clone runs its
//! own after its I/O ends, which a stuck one never reaches); the others do.

use super::result::{IoFailure, WorkerResult};
use crate::fileset::{FileSet, Progress, SchedulerSwitch, Step, TargetError};
use crate::job::spec::JobSpec;
use std::fs::File;
use std::path::PathBuf;
use std::process::{Command, ExitStatus, Stdio};
use std::time::Duration;

/// How often a running command is looked at (and progress told meanwhile).
const POLL: Duration = Duration::from_millis(50);

/// A job (its index) and its clones' results.
type JobResults = (usize, Vec<WorkerResult>);

/// The group's switched schedulers, put back when it ends (or is dropped).
#[derive(Debug, Default)]
pub(super) struct GroupHooks {
    schedulers: SchedulerSwitch,
}

/// Which command of a job: fio's names, also in the output file's name.
#[derive(Debug, Clone, Copy)]
enum Stage {
    Prerun,
    Postrun,
}

impl Stage {
    fn name(self) -> &'static str {
        match self {
            Stage::Prerun => "prerun",
            Stage::Postrun => "postrun",
        }
    }

    /// What running it is called in progress ("while running exec_prerun").
    fn doing(self) -> &'static str {
        match self {
            Stage::Prerun => "running exec_prerun",
            Stage::Postrun => "running exec_postrun",
        }
    }

    fn command(self, job: &JobSpec) -> Option<&str> {
        match self {
            Stage::Prerun => job.exec.prerun.as_deref(),
            Stage::Postrun => job.exec.postrun.as_deref(),
        }
    }
}

impl GroupHooks {
    /// Before the group's workers start: switch the schedulers its jobs ask for, then run
    /// their prerun commands (`progress` hears of them while they run). Returns the jobs that may run and, for those whose prerun
    /// failed, their clones' results (each failed, with why).
    pub(super) fn start(
        &mut self,
        jobs: &[JobSpec],
        group: Vec<usize>,
        files: &FileSet,
        notes: &mut Vec<String>,
        progress: &dyn Progress,
    ) -> Result<(Vec<usize>, Vec<JobResults>), TargetError> {
        for &j in &group {
            if let Some(wanted) = &jobs[j].files.ioscheduler {
                let job_notes = self
                    .schedulers
                    .switch_job(files, j, &jobs[j].name, wanted)?;
                notes.extend(job_notes);
            }
        }
        let mut runs = Vec::new();
        let mut failed = Vec::new();
        for j in group {
            match run_per_clone(&jobs[j], Stage::Prerun, jobs[j].exec.numjobs, progress) {
                Ok(()) => runs.push(j),
                Err(message) => {
                    let clones = jobs[j].exec.numjobs as usize;
                    let result = || {
                        WorkerResult::failed(IoFailure {
                            message: message.clone(),
                            errno: 0,
                        })
                    };
                    failed.push((j, std::iter::repeat_with(result).take(clones).collect()));
                }
            }
        }
        Ok((runs, failed))
    }

    /// After the group's workers ended: the postrun commands of the jobs that ran,
    /// given with their workers' results, once per worker that came back (a
    /// failure is a note, as fio ignores it), then the schedulers are put back.
    pub(super) fn finish<'r>(
        self,
        jobs: &[JobSpec],
        ran: impl IntoIterator<Item = (usize, &'r [WorkerResult])>,
        notes: &mut Vec<String>,
        progress: &dyn Progress,
    ) {
        for (j, workers) in ran {
            let job = &jobs[j];
            let behind = workers.iter().filter(|w| w.left_behind).count();
            let back = (workers.len() - behind) as u32;
            if let Err(message) = run_per_clone(job, Stage::Postrun, back, progress) {
                notes.push(format!("job '{}': {message}", job.name));
            }
            if behind > 0 && job.exec.postrun.is_some() {
                notes.push(format!(
                    "job '{}': exec_postrun not run for its {behind} worker(s) left behind, stuck in the kernel",
                    job.name
                ));
            }
        }
        notes.extend(self.schedulers.restore());
    }
}

/// Run the job's command of `stage` once for each of `clones` clones, as fio's clones
/// each do; `progress` hears of it while it runs.
fn run_per_clone(
    job: &JobSpec,
    stage: Stage,
    clones: u32,
    progress: &dyn Progress,
) -> Result<(), String> {
    let Some(command) = stage.command(job) else {
        return Ok(());
    };
    let output = PathBuf::from(format!("{}.{}.txt", job.name, stage.name()));
    let fail = |what: String| {
        format!(
            "exec_{}={command}: {what} (its output is in {})",
            stage.name(),
            output.display()
        )
    };
    for _ in 0..clones {
        let out = File::create(&output)
            .map_err(|e| fail(format!("cannot create {}: {e}", output.display())))?;
        let err = out
            .try_clone()
            .map_err(|e| fail(format!("cannot share {}: {e}", output.display())))?;
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(command)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .map_err(|e| fail(format!("cannot start sh: {e}")))?;
        let step = Step {
            doing: stage.doing(),
            on: command,
            done: 0,
            total: 0,
        };
        let status = wait_telling(&mut child, || progress.step(step))
            .map_err(|e| fail(format!("cannot wait for sh: {e}")))?;
        if !status.success() {
            return Err(fail(match status.code() {
                Some(code) => format!("exited with status {code}"),
                None => format!("ended by a signal ({status})"),
            }));
        }
    }
    Ok(())
}

/// Wait for `child` to end, calling `meanwhile` every `POLL` until it does.
fn wait_telling(
    child: &mut std::process::Child,
    meanwhile: impl Fn(),
) -> std::io::Result<ExitStatus> {
    loop {
        meanwhile();
        if let Some(status) = child.try_wait()? {
            return Ok(status);
        }
        std::thread::sleep(POLL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_is_waited_for_while_progress_is_told() {
        let mut child = Command::new("sh")
            .args(["-c", "sleep 0.3; exit 3"])
            .spawn()
            .expect("start sh");
        let told = std::cell::Cell::new(0);
        let status = wait_telling(&mut child, || told.set(told.get() + 1)).expect("wait for sh");
        assert_eq!(status.code(), Some(3), "expected sh's own exit status");
        assert!(
            told.get() >= 2,
            "expected progress told while sh ran (0.3 s, looked at every 50 ms), saw {} times",
            told.get()
        );
    }
}
