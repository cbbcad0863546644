//! Control shared by the workers of one running group: the stop flag they
//! read (the run's SIGINT/SIGTERM stop, and `exitall` when a job ends) and
//! `wait_for` (a job starts only once an earlier job of its group is done).
//!
//! The group's supervising thread calls [`GroupControl::observe`] every few
//! milliseconds with which jobs have finished; workers only read flags, so
//! nothing here costs anything per I/O.

use super::ctx::StartSignal;
use super::stop_signal;
use crate::job::spec::{ExitWhat, JobSpec};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// How often a held-back `wait_for` job looks whether it may start.
const WAIT_POLL: Duration = Duration::from_millis(5);

pub(super) struct GroupControl<'a> {
    run_stop: &'a AtomicBool,
    /// The whole group is stopping.
    stop: AtomicBool,
    /// What each worker reads as its stop flag, by position then worker: set
    /// with `stop`, or alone when its own job ends early (steady state reached).
    worker_stops: Vec<Vec<AtomicBool>>,
    /// By position in the group: every worker of the job has finished.
    done: Vec<AtomicBool>,
    /// By position in the group: what ends when that job ends (`exitall`).
    exits: Vec<Option<ExitWhat>>,
    /// By position in the group: the position of the job it waits for.
    waitees: Vec<Option<usize>>,
    /// `exit_what=all` fired: the groups after this one do not run.
    ends_run: AtomicBool,
}

impl<'a> GroupControl<'a> {
    /// `jobs` are the run's jobs; `group` the indexes of the running group's.
    pub(super) fn new(jobs: &[JobSpec], group: &[usize], run_stop: &'a AtomicBool) -> Self {
        // fio: once any job of the run sets exitall, every job's end stops the others.
        let exitall = jobs.iter().any(|j| j.control.exitall);
        let exits = group
            .iter()
            .map(|&j| exitall.then_some(jobs[j].control.exit_what))
            .collect();
        let waitees = group
            .iter()
            .enumerate()
            .map(|(position, &j)| {
                let name = jobs[j].control.wait_for.as_deref()?;
                // A waitee in an earlier group has finished already.
                group[..position].iter().position(|&k| jobs[k].name == name)
            })
            .collect();
        Self {
            run_stop,
            stop: AtomicBool::new(false),
            worker_stops: group
                .iter()
                .map(|&j| {
                    (0..jobs[j].exec.numjobs)
                        .map(|_| AtomicBool::new(false))
                        .collect()
                })
                .collect(),
            done: group.iter().map(|_| AtomicBool::new(false)).collect(),
            exits,
            waitees,
            ends_run: AtomicBool::new(false),
        }
    }

    /// The flag worker `worker` of the job at `position` stops on.
    pub(super) fn stop_flag(&self, position: usize, worker: u32) -> &AtomicBool {
        &self.worker_stops[position][worker as usize]
    }

    /// Stop these workers of the job at `position`, and only them.
    pub(super) fn stop_workers(&self, position: usize, workers: std::ops::Range<u32>) {
        for w in workers {
            self.stop_flag(position, w).store(true, Ordering::Relaxed);
        }
    }

    /// Stop every worker of the group (exitall, the run's stop, the watchdog).
    pub(super) fn stop_group(&self) {
        self.stop.store(true, Ordering::Relaxed);
        for flag in self.worker_stops.iter().flatten() {
            flag.store(true, Ordering::Relaxed);
        }
    }

    /// Some of the group's workers were told to stop.
    pub(super) fn stopping(&self) -> bool {
        self.worker_stops
            .iter()
            .flatten()
            .any(|flag| flag.load(Ordering::Relaxed))
    }

    /// What a worker of the job at `position` waits on before its first I/O.
    pub(super) fn start_signal<'s>(&'s self, gate: &'s StartGate, position: usize) -> JobStart<'s> {
        JobStart {
            gate,
            control: self,
            waitee: self.waitees[position],
        }
    }

    /// Take note of which jobs (by position) have finished, and stop what their
    /// ends stop; passes the run's stop on to the group.
    pub(super) fn observe(&self, finished: impl Iterator<Item = bool>) {
        if stop_signal::stop_requested(self.run_stop) {
            self.stop_group();
        }
        for (position, finished) in finished.enumerate() {
            if !finished || self.done[position].swap(true, Ordering::Relaxed) {
                continue;
            }
            if let Some(exit_what) = self.exits[position] {
                self.stop_group();
                if exit_what == ExitWhat::All {
                    self.ends_run.store(true, Ordering::Relaxed);
                }
            }
        }
    }

    /// True when `exit_what=all` stopped the run: no later group may start.
    pub(super) fn ends_run(&self) -> bool {
        self.ends_run.load(Ordering::Relaxed)
    }

    fn wait_until_done(&self, position: usize) {
        while !self.done[position].load(Ordering::Relaxed) && !self.stop.load(Ordering::Relaxed) {
            std::thread::sleep(WAIT_POLL);
        }
    }
}

/// The group's start: each of its parties (the workers and the thread that lets them go)
/// waits until all have come, or until the start is called off (a worker could not be
/// spawned, so the others would wait for it forever: they go, to find the group stopped).
pub(super) struct StartGate {
    /// The parties still awaited; 0 once the gate is open.
    awaited: Mutex<usize>,
    open: Condvar,
}

impl StartGate {
    pub(super) fn new(parties: usize) -> Self {
        StartGate {
            awaited: Mutex::new(parties),
            open: Condvar::new(),
        }
    }

    /// Come to the gate and wait until it opens.
    pub(super) fn wait(&self) {
        let mut awaited = self.awaited.lock().unwrap_or_else(|e| e.into_inner());
        *awaited = awaited.saturating_sub(1);
        if *awaited == 0 {
            self.open.notify_all();
        }
        while *awaited > 0 {
            awaited = self.open.wait(awaited).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Open the gate without the parties that will not come.
    pub(super) fn call_off(&self) {
        *self.awaited.lock().unwrap_or_else(|e| e.into_inner()) = 0;
        self.open.notify_all();
    }
}

/// The group's start gate, then (with `wait_for`) the end of the waited-for job.
pub(super) struct JobStart<'a> {
    gate: &'a StartGate,
    control: &'a GroupControl<'a>,
    waitee: Option<usize>,
}

impl StartSignal for JobStart<'_> {
    fn wait(&self) {
        self.gate.wait();
        if let Some(waitee) = self.waitee {
            self.control.wait_until_done(waitee);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Jobs from fio-style arguments (`--name=` starts each).
    fn jobs(args: &[&str]) -> Vec<JobSpec> {
        let mut all = vec!["--ioengine=null", "--size=1m"];
        all.extend_from_slice(args);
        let args: Vec<String> = all.iter().map(|s| s.to_string()).collect();
        let (global, jobs) = crate::job::front::cli_args::parse_fio_args(&args).unwrap();
        crate::job::resolve::resolve(&global, &jobs).unwrap().jobs
    }

    #[test]
    fn without_exitall_a_finished_job_stops_nothing() {
        let run_stop = AtomicBool::new(false);
        let jobs = jobs(&["--name=a", "--name=b"]);
        let control = GroupControl::new(&jobs, &[0, 1], &run_stop);
        control.observe([true, false].into_iter());
        assert!(!control.stop_flag(1, 0).load(Ordering::Relaxed));
        run_stop.store(true, Ordering::Relaxed);
        control.observe([true, false].into_iter());
        assert!(control.stop_flag(1, 0).load(Ordering::Relaxed));
        assert!(!control.ends_run());
    }

    #[test]
    fn a_job_can_stop_alone() {
        let run_stop = AtomicBool::new(false);
        let jobs = jobs(&["--name=a", "--numjobs=2", "--name=b"]);
        let control = GroupControl::new(&jobs, &[0, 1], &run_stop);
        control.stop_workers(0, 1..2);
        let stopped =
            |position, worker| control.stop_flag(position, worker).load(Ordering::Relaxed);
        assert_eq!(
            [stopped(0, 0), stopped(0, 1), stopped(1, 0)],
            [false, true, false]
        );
        run_stop.store(true, Ordering::Relaxed);
        control.observe([false, false].into_iter());
        assert_eq!([stopped(0, 0), stopped(0, 1), stopped(1, 0)], [true; 3]);
    }

    #[test]
    fn exitall_on_any_job_makes_every_job_end_stop_the_group() {
        let run_stop = AtomicBool::new(false);
        // Set on b only, yet a's end stops the group, as in fio.
        let jobs = jobs(&["--name=a", "--name=b", "--exitall", "--exit_what=all"]);
        let control = GroupControl::new(&jobs, &[0, 1], &run_stop);
        control.observe([false, false].into_iter());
        assert!(!control.stop_flag(1, 0).load(Ordering::Relaxed));
        control.observe([true, false].into_iter());
        assert!(control.stop_flag(1, 0).load(Ordering::Relaxed));
        // exit_what is the finished job's: a's is group.
        assert!(!control.ends_run());
        control.observe([true, true].into_iter());
        assert!(control.ends_run());
    }

    #[test]
    fn wait_for_holds_a_job_until_its_waitee_is_done() {
        let run_stop = AtomicBool::new(false);
        let mut jobs = jobs(&[
            "--name=a",
            "--name=b",
            "--wait_for=a",
            "--name=c",
            "--wait_for=a",
        ]);
        // A waitee outside the running group.
        jobs[2].control.wait_for = Some("elsewhere".to_string());
        let control = GroupControl::new(&jobs, &[0, 1, 2], &run_stop);
        assert_eq!(control.waitees, [None, Some(0), None]);
        let gate = StartGate::new(1);
        let started = AtomicBool::new(false);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                control.start_signal(&gate, 1).wait();
                started.store(true, Ordering::Relaxed);
            });
            std::thread::sleep(Duration::from_millis(30));
            assert!(!started.load(Ordering::Relaxed));
            control.observe([true, false, false].into_iter());
        });
        assert!(started.load(Ordering::Relaxed));
    }

    #[test]
    fn a_start_gate_opens_when_all_come_or_when_called_off() {
        let gate = StartGate::new(2);
        std::thread::scope(|scope| {
            let first = scope.spawn(|| gate.wait());
            gate.wait();
            first.join().unwrap();
        });
        // Three parties, one of which never comes: calling it off lets the other go.
        let gate = StartGate::new(3);
        std::thread::scope(|scope| {
            let waiting = scope.spawn(|| gate.wait());
            gate.call_off();
            waiting.join().unwrap();
        });
        gate.wait();
    }
}
