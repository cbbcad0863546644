//! The worker's loop on the null engine and a [`FakeClock`]: what it decides and
//! when (ramp end, runtime end, iodepth_low draining, batch submit and complete,
//! the rate schedule, the breaks between passes), pinned in fake time, so no test sleeps or depends on the
//! speed of the machine. The null engine completes at once, so time moves only
//! where the loop chooses to wait.

use super::run_on;
use crate::engine::null::Null;
use crate::observe::live::LiveBoard;
use crate::runner::ctx::{OpenFile, WorkerCtx};
use crate::runner::result::WorkerResult;
use crate::workload::pacing::{Clock, FakeClock};
use crate::workload::FileRegion;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Barrier};

const MS: u64 = 1_000_000;

/// What one run of the harness showed.
struct Outcome {
    result: WorkerResult,
    /// When each wait the loop chose ended (fake ns).
    wakes: Vec<u64>,
    /// The fake time when the worker finished.
    end_ns: u64,
    /// The file's length after the run (it starts at its full size).
    file_len: u64,
}

impl Outcome {
    fn reads(&self) -> u64 {
        self.result.stats.dirs[0].ios
    }

    fn writes(&self) -> u64 {
        self.result.stats.dirs[1].ios
    }

    /// The one bucket that holds every submit call, every reap call and every
    /// I/O's depth when it went out, each None when they are spread: batch
    /// buckets 0, 1-4, 5-8, 9-16, …; depth buckets 1, 2, 4-7, 8-15, ….
    fn sole_buckets(&self) -> [Option<usize>; 3] {
        let depth = self.result.stats.depth.report();
        [depth.submit_pct, depth.complete_pct, depth.level_pct]
            .map(|pct| pct.iter().position(|&share| share == 100.0))
    }
}

/// One worker of a null-engine read job with `options` over a file of
/// `file_kib` KiB (its whole region), on a fake clock that starts at 0.
fn run_fake(file_kib: u64, options: &[&str]) -> Outcome {
    let args: Vec<&str> = ["--name=harness", "--filename=harness", "--ioengine=null"]
        .into_iter()
        .chain(options.iter().copied())
        .collect();
    let job = crate::testutil::job_spec(&args);
    let size = file_kib << 10;
    let handle = Arc::new(tempfile::tempfile().expect("scratch file"));
    handle.set_len(size).expect("size the scratch file");
    let file = OpenFile {
        file: handle.clone(),
        size,
        path: "harness".into(),
        region: FileRegion::new(0, 0, size).in_file(size),
    };
    let board = LiveBoard::new([1]);
    let start = Barrier::new(1);
    let stop = AtomicBool::new(false);
    let ctx = WorkerCtx {
        job: &job,
        files: vec![file],
        buffer_align: 4096,
        seed: 1,
        worker_number: 1,
        start: &start,
        stop: &stop,
        live: board.slot(0),
        flow_members: Vec::new(),
        status: None,
        io_timeout: None,
    };
    let clock = FakeClock::new();
    let result = run_on::<Null, _>(ctx, || &clock);
    assert!(result.error.is_none(), "{:?}", result.error);
    Outcome {
        result,
        wakes: clock.wakes(),
        end_ns: clock.now_ns(),
        file_len: handle.metadata().expect("scratch file").len(),
    }
}

#[test]
fn without_pacing_the_loop_never_waits_and_issues_the_size() {
    let run = run_fake(64, &["--bs=4k"]);
    assert_eq!(run.reads(), 16);
    assert!(run.wakes.is_empty());
    assert_eq!(run.end_ns, 0);
}

#[test]
fn the_rate_schedule_spaces_ios_by_the_rate() {
    // 1000 IOPS: one I/O each ms, the first at once
    let run = run_fake(20, &["--bs=4k", "--rate_iops=1000"]);
    assert_eq!(run.reads(), 5);
    assert_eq!(run.wakes, [MS, 2 * MS, 3 * MS, 4 * MS]);
    assert_eq!(run.result.runtime_ns, 4 * MS);
}

#[test]
fn a_rate_limited_job_records_the_stall_its_schedule_took_and_catches_up() {
    // 1000 IOPS, and a 20 ms pause after the 100th I/O: the 101st, due at
    // 100 ms, goes out at 120 ms with the 19 after it, as in fio
    let run = run_fake(
        800,
        &[
            "--bs=4k",
            "--rate_iops=1000",
            "--thinktime=20ms",
            "--thinktime_blocks=100",
        ],
    );
    assert_eq!(run.reads(), 200);
    assert_eq!(&run.wakes[98..101], [99 * MS, 119 * MS, 120 * MS]);
    let schedule = run.result.stats.schedule.as_ref().expect("a schedule");
    let report = schedule.report(&[50.0]);
    assert_eq!(report.ios, 200);
    let stall = crate::model::Stall {
        at_ns: 100 * MS,
        len_ns: 19 * MS,
        missed_ios: 19,
    };
    assert_eq!(report.stalls, [stall]);
    // late: those more than 2 ms behind, due from 100 to 116 ms
    assert_eq!(report.late_ios, 17);
    assert_eq!(report.max_behind_ns, 19 * MS);
    // the null engine takes no time, but the 101st completed 19 ms after it was due
    let corrected = report.corrected[0].as_ref().expect("corrected latencies");
    assert_eq!((corrected.samples, corrected.max_ns), (200, 19 * MS));
    assert_eq!(run.result.stats.dirs[0].lat.max(), 0);
}

#[test]
fn an_unpaced_job_keeps_no_schedule() {
    assert!(run_fake(64, &["--bs=4k"]).result.stats.schedule.is_none());
    let think_only = run_fake(64, &["--bs=4k", "--thinktime=1ms"]);
    assert!(think_only.result.stats.schedule.is_none());
}

#[test]
fn a_byte_rate_books_each_io_by_its_size() {
    // 8 KiB/s of 4 KiB reads: one each half second
    let run = run_fake(12, &["--bs=4k", "--rate=8k"]);
    assert_eq!(run.reads(), 3);
    assert_eq!(run.wakes, [500 * MS, 1000 * MS]);
}

#[test]
fn thinktime_waits_after_every_thinktime_blocks_ios() {
    let run = run_fake(32, &["--bs=4k", "--thinktime=1ms", "--thinktime_blocks=4"]);
    assert_eq!(run.reads(), 8);
    assert_eq!(run.wakes, [MS, 2 * MS]);
}

#[test]
fn runtime_ends_issuing_once_a_completion_is_past_it() {
    // one I/O per ms; the limit is checked against the latest completion,
    // so the I/O at 5 ms still goes out and the job's clock stops at the end
    let run = run_fake(
        1024,
        &[
            "--bs=4k",
            "--time_based",
            "--runtime=5ms",
            "--thinktime=1ms",
        ],
    );
    assert_eq!(run.reads(), 6);
    assert_eq!(run.wakes, [MS, 2 * MS, 3 * MS, 4 * MS, 5 * MS]);
    assert_eq!(run.end_ns, 5 * MS);
    assert_eq!(run.result.runtime_ns, 5 * MS);
}

#[test]
fn ramp_time_is_not_measured_and_runtime_counts_after_it() {
    let run = run_fake(
        1024,
        &[
            "--bs=4k",
            "--time_based",
            "--ramp_time=2ms",
            "--runtime=3ms",
            "--thinktime=1ms",
        ],
    );
    // I/Os at 0..=5 ms; measuring starts at the completion at 2 ms, so the
    // I/Os at 3, 4 and 5 ms are measured, over the 3 ms from 2 ms to the end
    assert_eq!(run.reads(), 3);
    assert_eq!(run.end_ns, 5 * MS);
    assert_eq!(run.result.runtime_ns, 3 * MS);
}

#[test]
fn iodepth_batch_sets_the_submit_and_reap_batches_and_one_batch_drains_first() {
    // (options beside iodepth=8, the sole bucket of submits, reaps and depths:
    // batch buckets 1-4 = 1, 5-8 = 2; depth buckets 2-3 = 1, 4-7 = 2, 8-15 = 3)
    let cases: [(&[&str], _); 3] = [
        // a full queue submitted in one batch of 8 and reaped in one
        (&["--iodepth_batch=8"], [Some(2), Some(2), Some(3)]),
        // every submit hands 2 I/Os to the engine
        (&["--iodepth_batch=2"], [Some(1), Some(1), Some(1)]),
        // The null engine holds one committed batch (as fio's): the loop reaps
        // it all before issuing more, never a batch on top of another, where
        // iodepth_low=6 alone would refill the queue at 6 in flight.
        (
            &["--iodepth_batch=4", "--iodepth_low=6"],
            [Some(1), Some(1), Some(2)],
        ),
    ];
    for (options, buckets) in cases {
        let args: Vec<&str> = ["--bs=4k", "--iodepth=8"]
            .into_iter()
            .chain(options.iter().copied())
            .collect();
        let run = run_fake(64, &args);
        assert_eq!(run.reads(), 16, "{options:?}");
        assert_eq!(run.sole_buckets(), buckets, "{options:?}");
    }
}

#[test]
fn every_pass_of_loops_is_issued_and_unlink_each_loop_empties_the_files_between() {
    let kept = run_fake(16, &["--rw=write", "--bs=4k", "--loops=3"]);
    assert_eq!(kept.writes(), 12);
    assert_eq!(kept.file_len, 16 << 10);
    // the break after each pass but the last empties the files; none follows the last
    let emptied = run_fake(
        16,
        &["--rw=write", "--bs=4k", "--loops=3", "--unlink_each_loop=1"],
    );
    assert_eq!(emptied.writes(), 12);
    assert_eq!(emptied.file_len, 0);
}
