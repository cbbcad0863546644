//! fio's `ioscheduler=`: the scheduler of the disk holding each of a job's files (a
//! partition's parent disk, a device's own queue) is switched for the job. Unlike fio,
//! iolens switches it back when the job's group ends, on an error or an interrupt too
//! (the switch is undone when it is dropped).

use super::{FileSet, TargetError};
use std::path::{Path, PathBuf};

/// The schedulers switched so far, each with the one it replaced.
#[derive(Debug, Default)]
pub(crate) struct SchedulerSwitch {
    /// (queue/scheduler file, the scheduler it had), in the order they were switched.
    replaced: Vec<(PathBuf, String)>,
}

/// What a `queue/scheduler` file offers: its choices and the active one
/// ("none [mq-deadline] kyber" → [none, mq-deadline, kyber], mq-deadline).
fn choices(text: &str) -> (Vec<String>, Option<String>) {
    let names = text
        .split_whitespace()
        .map(|w| w.trim_start_matches('[').trim_end_matches(']').to_string())
        .collect();
    (names, crate::observe::environment::selected_choice(text))
}

/// What switching one disk's scheduler takes.
enum Step {
    /// Nothing: the scheduler is active already.
    Nothing,
    /// Nothing can be switched there (why, as a note).
    Note(String),
    /// Write the wanted one, replacing `original`.
    Switch { original: String },
}

impl SchedulerSwitch {
    /// Switch the disks of job `job_index`'s files in `files` to `wanted`. A file on no
    /// disk (tmpfs) or a queue without a choice is left as it is, with a note, as fio does;
    /// a scheduler the disk does not offer is refused, naming the ones it does.
    pub(crate) fn switch_job(
        &mut self,
        files: &FileSet,
        job_index: usize,
        job_name: &str,
        wanted: &str,
    ) -> Result<Vec<String>, TargetError> {
        let mut notes = Vec::new();
        for (file, step) in steps(files, job_index, job_name, wanted)? {
            match step {
                Step::Nothing => {}
                Step::Note(note) => notes.push(note),
                Step::Switch { original } => {
                    write_scheduler(&file, wanted)?;
                    if !self.replaced.iter().any(|(f, _)| *f == file) {
                        self.replaced.push((file, original));
                    }
                }
            }
        }
        Ok(notes)
    }

    /// Put back every scheduler switched, the last switched first; what failed, as notes.
    pub(crate) fn restore(mut self) -> Vec<String> {
        self.undo()
    }

    fn undo(&mut self) -> Vec<String> {
        let mut notes = Vec::new();
        while let Some((file, original)) = self.replaced.pop() {
            if let Err(e) = write_scheduler(&file, &original) {
                notes.push(format!(
                    "ioscheduler: switching back to {original} failed: {e}"
                ));
            }
        }
        notes
    }
}

impl Drop for SchedulerSwitch {
    fn drop(&mut self) {
        for note in self.undo() {
            crate::console::warn(format_args!("{note}"));
        }
    }
}

/// Refuse, before the run, a job whose `ioscheduler=` a disk of its files does not offer.
pub(super) fn check_offered(
    files: &FileSet,
    job_index: usize,
    job_name: &str,
    wanted: &str,
) -> Result<(), TargetError> {
    steps(files, job_index, job_name, wanted).map(drop)
}

/// Per disk holding a file of the job (each once): its `queue/scheduler` file and the step
/// that switches it; a file on no disk is a note.
fn steps(
    files: &FileSet,
    job_index: usize,
    job_name: &str,
    wanted: &str,
) -> Result<Vec<(PathBuf, Step)>, TargetError> {
    let mut steps: Vec<(PathBuf, Step)> = Vec::new();
    for t in files.job_targets(job_index) {
        let path = &files.targets[t].path;
        let Some(disk) = crate::observe::diskstats::disk_of(path) else {
            let note = format!(
                "job '{job_name}': ioscheduler={wanted}: {} is on no block device, so there is no scheduler to switch",
                path.display()
            );
            steps.push((path.clone(), Step::Note(note)));
            continue;
        };
        let file = Path::new("/sys/block").join(&disk).join("queue/scheduler");
        if !steps.iter().any(|(f, _)| *f == file) {
            let step = step(&file, &disk, job_name, wanted)?;
            steps.push((file, step));
        }
    }
    Ok(steps)
}

fn step(file: &Path, disk: &str, job_name: &str, wanted: &str) -> Result<Step, TargetError> {
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Step::Note(format!(
                "job '{job_name}': ioscheduler={wanted}: {disk} has no scheduler to switch (no {})",
                file.display()
            )))
        }
        Err(e) => return Err(TargetError::io(file, "read the scheduler", e)),
    };
    let (offered, active) = choices(&text);
    if active.as_deref() == Some(wanted) {
        return Ok(Step::Nothing);
    }
    if offered.len() < 2 {
        return Ok(Step::Note(format!(
            "job '{job_name}': ioscheduler={wanted}: the scheduler of {disk} cannot be switched (it offers only {})",
            text.trim()
        )));
    }
    if !offered.iter().any(|name| name == wanted) {
        return Err(TargetError::Config(format!(
            "job '{job_name}': ioscheduler={wanted}: {disk} does not offer it; it offers {} (pick one of them, or load the scheduler's module)",
            offered.join(", ")
        )));
    }
    Ok(Step::Switch {
        original: active.unwrap_or_default(),
    })
}

/// Write `name` to a `queue/scheduler` file and check that it became the active one.
fn write_scheduler(file: &Path, name: &str) -> Result<(), TargetError> {
    std::fs::write(file, name).map_err(|e| TargetError::io(file, "switch the scheduler", e))?;
    let now = std::fs::read_to_string(file)
        .map_err(|e| TargetError::io(file, "read the scheduler back", e))?;
    match crate::observe::environment::selected_choice(&now) {
        Some(active) if active == name => Ok(()),
        active => Err(TargetError::Config(format!(
            "{}: wrote {name}, but the active scheduler is {} (check the kernel log)",
            file.display(),
            active.unwrap_or_else(|| "unknown".into())
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choices_lists_every_scheduler_and_the_active_one() {
        assert_eq!(
            choices("none [mq-deadline] kyber bfq\n"),
            (
                ["none", "mq-deadline", "kyber", "bfq"]
                    .map(String::from)
                    .to_vec(),
                Some("mq-deadline".to_string())
            ),
            "expected the four names and mq-deadline active"
        );
        assert_eq!(
            choices("none\n"),
            (vec!["none".to_string()], Some("none".to_string())),
            "expected a lone none to be the only choice"
        );
    }
}
