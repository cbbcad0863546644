//! The supervisor run with fake workers, fake peers and a clock the test sets:
//! no thread, no sleep, every tick at a time the test chooses.

use super::*;
use crate::fileset::{self, FileSet};
use crate::runner::group::peers::{OneHost, PeersWord};
use crate::runner::Gathered;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// A worker whose end the test decides, and what its join gives.
struct FakeWorker<'t> {
    finished: &'t Cell<bool>,
    result: Result<WorkerResult, &'static str>,
}

impl Worker for FakeWorker<'_> {
    fn is_finished(&self) -> bool {
        self.finished.get()
    }

    fn join(self) -> std::thread::Result<WorkerResult> {
        self.result
            .map_err(|panic| Box::new(panic) as Box<dyn std::any::Any + Send>)
    }
}

/// A worker that ran for `runtime_ns` and ends when `finished` is set.
fn worker(finished: &Cell<bool>, runtime_ns: u64) -> FakeWorker<'_> {
    FakeWorker {
        finished,
        result: Ok(WorkerResult {
            runtime_ns,
            ..WorkerResult::empty()
        }),
    }
}

/// Peers that say what the test puts in `word`, and note what they heard.
struct ScriptedPeers<'t> {
    word: &'t Cell<PeersWord>,
    /// At each tick: whether this host's workers still ran.
    heard: &'t RefCell<Vec<bool>>,
}

impl Peers for ScriptedPeers<'_> {
    fn before_start(&mut self, _: usize, _: Option<Duration>, _: &Gathered) -> bool {
        true
    }

    fn tick(&mut self, _: u64, here: bool, _: &dyn Fn() -> LiveTotals) -> PeersWord {
        self.heard.borrow_mut().push(here);
        self.word.get()
    }

    fn group_end(&mut self, _: &mut Gathered) {}

    fn run_end(&mut self, _: &Gathered) {}
}

/// A group of null-engine thread jobs (each given by its own options) and a
/// clock that stays where the test sets it.
struct Fixture {
    jobs: Vec<JobSpec>,
    group: Vec<usize>,
    board: LiveBoard,
    files: FileSet,
    /// By job, then worker, as the group's workers publish snapshots.
    slots: Vec<Vec<StatusSlot>>,
    run_stop: AtomicBool,
    given_up: AtomicBool,
    start: Instant,
    now: Rc<Cell<Instant>>,
    /// Reads `now`: the supervisor's clock.
    clock: Box<dyn Fn() -> Instant>,
}

impl Fixture {
    fn of(jobs: &[&[&str]]) -> Self {
        let jobs: Vec<JobSpec> = jobs
            .iter()
            .enumerate()
            .map(|(j, options)| {
                let name = format!("--name={}", ["a", "b"][j]);
                let common = [name.as_str(), "--ioengine=null", "--size=1m", "--thread"];
                crate::testutil::job_spec(&[&common[..], options].concat())
            })
            .collect();
        let files = fileset::prepare(&jobs, false, false, &()).expect("null-engine targets");
        let start = Instant::now();
        let now = Rc::new(Cell::new(start));
        let read = Rc::clone(&now);
        Fixture {
            group: (0..jobs.len()).collect(),
            board: LiveBoard::new(jobs.iter().map(|j| j.exec.numjobs)),
            slots: jobs
                .iter()
                .map(|j| (0..j.exec.numjobs).map(|_| StatusSlot::default()).collect())
                .collect(),
            files,
            jobs,
            run_stop: AtomicBool::new(false),
            given_up: AtomicBool::new(false),
            start,
            now,
            clock: Box::new(move || read.get()),
        }
    }

    fn control(&self) -> GroupControl<'_> {
        GroupControl::new(&self.jobs, &self.group, &self.run_stop)
    }

    /// The supervisor of the whole group over `workers`, on the fixture's clock.
    fn supervisor<'g, W: Worker>(
        &'g self,
        control: &'g GroupControl<'g>,
        peers: &'g mut dyn Peers,
        workers: Vec<Vec<W>>,
    ) -> GroupSupervisor<'g, W> {
        let watch = GroupWatch::new(
            &self.jobs,
            &self.group,
            &self.board,
            &self.files,
            None,
            &self.given_up,
            self.start,
        );
        let on = Supervised {
            jobs: &self.jobs,
            group: &self.group,
            board: &self.board,
            control,
            peers,
            slots: &self.slots,
            clock: &*self.clock,
            started: self.start,
        };
        GroupSupervisor::new(on, watch, workers)
    }

    fn at(&self, seconds: u64) {
        self.now.set(self.start + Duration::from_secs(seconds));
    }
}

#[test]
fn the_group_runs_until_every_worker_has_ended_and_their_results_come_back_in_order() {
    let fixture = Fixture::of(&[&["--numjobs=2"]]);
    let control = fixture.control();
    let ended = [Cell::new(false), Cell::new(false)];
    let workers = vec![vec![worker(&ended[0], 1), worker(&ended[1], 2)]];
    let mut peers = OneHost;
    let mut supervisor = fixture.supervisor(&control, &mut peers, workers);
    assert!(supervisor.tick(), "expected the group running");
    ended[0].set(true);
    assert!(
        supervisor.tick(),
        "expected the group running while worker 1 is"
    );
    ended[1].set(true);
    assert!(
        !supervisor.tick(),
        "expected the group over once both ended"
    );
    let Joined::Ended(results, watchdog_stopped) = supervisor.join() else {
        panic!("expected every worker joined");
    };
    let runtimes: Vec<u64> = results[0].iter().map(|r| r.runtime_ns).collect();
    assert_eq!(
        runtimes,
        [1, 2],
        "expected each worker's result in its place"
    );
    assert!(!watchdog_stopped, "expected the watchdog silent");
}

#[test]
fn a_worker_that_panicked_is_a_failed_result_naming_the_panic() {
    let fixture = Fixture::of(&[&[]]);
    let control = fixture.control();
    let ended = Cell::new(true);
    let workers = vec![vec![FakeWorker {
        finished: &ended,
        result: Err("slot 3 is already in use"),
    }]];
    let mut peers = OneHost;
    let supervisor = fixture.supervisor(&control, &mut peers, workers);
    let Joined::Ended(results, _) = supervisor.join() else {
        panic!("expected the worker joined");
    };
    let error = results[0][0].error.as_ref().map(|e| e.message.as_str());
    assert_eq!(
        error,
        Some("job 'a' worker 0: panicked: slot 3 is already in use")
    );
}

#[test]
fn with_exitall_the_first_job_to_end_stops_the_others() {
    let fixture = Fixture::of(&[&["--exitall"], &[]]);
    let control = fixture.control();
    let ended = [Cell::new(false), Cell::new(false)];
    let workers = vec![vec![worker(&ended[0], 1)], vec![worker(&ended[1], 1)]];
    let mut peers = OneHost;
    let mut supervisor = fixture.supervisor(&control, &mut peers, workers);
    assert!(supervisor.tick());
    assert!(
        !control.stop_flag(1, 0).load(Ordering::Relaxed),
        "expected job b running while job a is"
    );
    ended[0].set(true);
    assert!(supervisor.tick(), "expected the group running until b ends");
    assert!(
        control.stop_flag(1, 0).load(Ordering::Relaxed),
        "expected job a's end to stop job b"
    );
}

#[test]
fn a_worker_stuck_past_the_watchdogs_grace_is_left_behind_with_the_watchdogs_reason() {
    // planned 1 s: a warning past the 10 s margin, a stop one margin later,
    // then a grace of 5 s for the processes and 5 s more for the threads
    let fixture = Fixture::of(&[&["--runtime=1", "--time_based"]]);
    let control = fixture.control();
    let never = Cell::new(false);
    let mut peers = OneHost;
    let mut supervisor = fixture.supervisor(&control, &mut peers, vec![vec![worker(&never, 1)]]);
    let ended_at = (0..60).find(|&t| {
        fixture.at(t);
        !supervisor.tick()
    });
    assert_eq!(
        ended_at,
        Some(33),
        "expected the stuck thread given up on 10 s after the stop at 22 s"
    );
    assert!(control.stopping(), "expected the group told to stop");
    assert!(
        fixture.given_up.load(Ordering::Relaxed),
        "expected the proxies told to stop waiting"
    );
    let Joined::LeftBehind(results) = supervisor.join() else {
        panic!("expected the stuck worker left behind");
    };
    let error = results[0][0]
        .error
        .as_ref()
        .map_or("", |e| e.message.as_str());
    assert!(
        error.starts_with("watchdog: still running 10 s after that warning; job 'a' worker 0"),
        "expected the watchdog's reason, saw: {error}"
    );
}

#[test]
fn the_group_waits_for_its_peers_and_a_first_end_heard_stops_a_timed_group() {
    let fixture = Fixture::of(&[&["--runtime=10", "--time_based"]]);
    let control = fixture.control();
    let ended = Cell::new(false);
    let word = Cell::new(PeersWord::default());
    let heard = RefCell::new(Vec::new());
    let mut peers = ScriptedPeers {
        word: &word,
        heard: &heard,
    };
    let mut supervisor = fixture.supervisor(&control, &mut peers, vec![vec![worker(&ended, 1)]]);
    assert!(supervisor.tick());
    assert!(!control.stopping(), "expected no stop before any end");
    word.set(PeersWord {
        first_end: true,
        waiting: true,
        ..PeersWord::default()
    });
    assert!(supervisor.tick());
    assert!(
        control.stopping(),
        "expected a peer's end to stop a time-based group here"
    );
    ended.set(true);
    word.set(PeersWord {
        waiting: true,
        ..PeersWord::default()
    });
    assert!(
        supervisor.tick(),
        "expected the group waiting for its peers after its own end"
    );
    word.set(PeersWord::default());
    assert!(
        !supervisor.tick(),
        "expected the group over once the peers are"
    );
    assert_eq!(
        *heard.borrow(),
        [true, true, false, false],
        "expected the peers told at each tick whether this host still ran"
    );
}

#[test]
fn an_ended_worker_leaves_its_flow_once_noticed_and_every_worker_at_the_join() {
    let fixture = Fixture::of(&[&["--numjobs=2", "--flow=2"]]);
    let control = fixture.control();
    let ended = [Cell::new(false), Cell::new(false)];
    for w in 0..2 {
        fixture.board.worker(0, w).set_flow(2, 5);
    }
    let workers = vec![vec![worker(&ended[0], 1), worker(&ended[1], 1)]];
    let mut peers = OneHost;
    let mut supervisor = fixture.supervisor(&control, &mut peers, workers);
    ended[0].set(true);
    assert!(supervisor.tick());
    let flows = |fixture: &Fixture| [0, 1].map(|w| fixture.board.worker(0, w).flow());
    assert_eq!(
        flows(&fixture),
        [(0, 0), (2, 5)],
        "expected the ended worker out of the flow, the running one in it"
    );
    supervisor.join();
    assert_eq!(
        flows(&fixture),
        [(0, 0), (0, 0)],
        "expected every worker out of the flow once the group is joined"
    );
}

#[test]
fn a_job_whose_rate_holds_steady_is_stopped_and_its_workers_report_it() {
    let fixture = Fixture::of(&[&["--steadystate=iops:10%", "--ss_dur=3"]]);
    let control = fixture.control();
    let ended = Cell::new(false);
    let mut peers = OneHost;
    let mut supervisor = fixture.supervisor(&control, &mut peers, vec![vec![worker(&ended, 1)]]);
    // 100 I/Os a second: one sample a second from the first I/O, three judged
    let stopped_at = (0..10).find(|&t| {
        fixture.at(t);
        for _ in 0..100 {
            fixture.board.worker(0, 0).record_io(0, 4096, 1_000);
        }
        supervisor.tick();
        control.stop_flag(0, 0).load(Ordering::Relaxed)
    });
    assert_eq!(
        stopped_at,
        Some(3),
        "expected the job stopped at its third sample"
    );
    ended.set(true);
    let Joined::Ended(results, _) = supervisor.join() else {
        panic!("expected the worker joined");
    };
    assert!(
        results[0][0].steadystate.is_some(),
        "expected the worker's result to carry its steady-state check"
    );
}

#[test]
fn an_interim_report_holds_the_groups_before_and_this_groups_latest_snapshots() {
    let fixture = Fixture::of(&[&["--numjobs=2"]]);
    let control = fixture.control();
    let running = Cell::new(false);
    let workers = vec![vec![worker(&running, 1), worker(&running, 1)]];
    let mut peers = OneHost;
    let supervisor = fixture.supervisor(&control, &mut peers, workers);
    fixture.slots[0][1].publish(WorkerResult {
        runtime_ns: 7,
        ..WorkerResult::empty()
    });
    let earlier = WorkerResult {
        runtime_ns: 3,
        ..WorkerResult::empty()
    };
    let interim = supervisor.interim(vec![Vec::new(), vec![earlier]]);
    let runtimes: Vec<Vec<u64>> = interim
        .iter()
        .map(|job| job.iter().map(|r| r.runtime_ns).collect())
        .collect();
    assert_eq!(
        runtimes,
        [vec![0, 7], vec![3]],
        "expected worker 1's snapshot, an empty result for worker 0 (none yet), and the other job's results kept"
    );
}

#[test]
fn a_panic_message_is_read_from_either_payload_type() {
    let caught = std::panic::catch_unwind(|| panic!("slot {} is already in use", 3));
    let payload = caught.expect_err("expected the closure to panic");
    assert_eq!(panic_message(payload.as_ref()), "slot 3 is already in use");
    let payload: Box<dyn std::any::Any + Send> = Box::new("plain");
    assert_eq!(panic_message(payload.as_ref()), "plain");
    let payload: Box<dyn std::any::Any + Send> = Box::new(7_u8);
    assert_eq!(panic_message(payload.as_ref()), "(no message)");
}
