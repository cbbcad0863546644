//! Live progress on stderr while a group runs: one line per job with elapsed and planned
//! time, the ETA, the current IOPS and MiB/s per direction and the current mean and p99
//! latency, read from the workers' live counters (never from stdout, so JSON stays clean).

use crate::cli::EtaMode;
use crate::job::spec::JobSpec;
use crate::observe::live::{LiveBoard, LiveTotals};
use crate::runner::GroupProgress;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::fmt::Write;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often the lines are redrawn: fast enough to feel live, slow enough to read.
const REDRAW: Duration = Duration::from_millis(500);
/// Without a terminal (`--eta=always`), one plain line per job this often.
const PLAIN_EVERY: Duration = Duration::from_secs(1);

/// How progress reaches the user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    /// Bars redrawn in place on a terminal.
    Bars,
    /// A line per job and second, for logs.
    Plain,
}

/// The progress display of one run; `None` when `mode` and the terminals say to stay silent.
pub(super) fn live_progress(mode: EtaMode) -> Option<LiveProgress> {
    let stderr_tty = std::io::stderr().is_terminal();
    let both_tty = stderr_tty && std::io::stdout().is_terminal();
    let style = match mode {
        EtaMode::Never => return None,
        EtaMode::Auto if !both_tty => return None,
        EtaMode::Always if !stderr_tty => Style::Plain,
        EtaMode::Auto | EtaMode::Always => Style::Bars,
    };
    Some(LiveProgress {
        style,
        running: Mutex::new(None),
    })
}

pub(super) struct LiveProgress {
    style: Style,
    /// The drawing thread of the group that runs now.
    running: Mutex<Option<Drawing>>,
}

struct Drawing {
    done: Arc<AtomicBool>,
    thread: JoinHandle<()>,
}

impl GroupProgress for LiveProgress {
    fn group_started(&self, jobs: &[JobSpec], group: &[usize], board: Arc<LiveBoard>) {
        let lines: Vec<JobLine> = group.iter().map(|&j| JobLine::of(j, &jobs[j])).collect();
        let done = Arc::new(AtomicBool::new(false));
        let style = self.style;
        let thread = {
            let done = done.clone();
            std::thread::spawn(move || draw(style, &lines, &board, &done))
        };
        *self.running.lock().unwrap_or_else(|e| e.into_inner()) = Some(Drawing { done, thread });
    }

    fn group_finished(&self) {
        let drawing = self
            .running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(d) = drawing {
            d.done.store(true, Ordering::Relaxed);
            // A panicked drawing thread only loses the progress display.
            let _ = d.thread.join();
        }
    }
}

/// One job of the running group.
struct JobLine {
    index: usize,
    name: String,
    /// Ramp plus runtime when the job is bounded by time; unknown when it runs until its size is done.
    planned: Option<Duration>,
}

impl JobLine {
    fn of(index: usize, job: &JobSpec) -> JobLine {
        JobLine {
            index,
            name: job.name.clone(),
            planned: job.exec.runtime.map(|r| r + job.exec.ramp_time),
        }
    }
}

fn draw(style: Style, lines: &[JobLine], board: &LiveBoard, done: &AtomicBool) {
    let start = Instant::now();
    let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
    let bars: Vec<ProgressBar> = match style {
        Style::Bars => lines.iter().map(|l| multi.add(bar_for(l))).collect(),
        Style::Plain => Vec::new(),
    };
    let mut before: Vec<(Instant, LiveTotals)> = lines
        .iter()
        .map(|l| (start, job_totals(board, l.index)))
        .collect();
    let tick = match style {
        Style::Bars => REDRAW,
        Style::Plain => PLAIN_EVERY,
    };
    while !sleep_unless_done(tick, done) {
        let now = Instant::now();
        let elapsed = now - start;
        for (i, line) in lines.iter().enumerate() {
            let totals = job_totals(board, line.index);
            let (then, earlier) = before[i];
            let status = describe(&totals.since(&earlier), now - then);
            before[i] = (now, totals);
            match style {
                Style::Bars => {
                    bars[i].set_position(elapsed.as_millis() as u64);
                    bars[i].set_message(format!("{}  {status}", timing(line, elapsed)));
                }
                Style::Plain => {
                    eprintln!("iolens: {}: {}  {status}", line.name, timing(line, elapsed))
                }
            }
        }
    }
    for bar in bars {
        bar.finish_and_clear();
    }
}

/// Sleep `tick` in short steps; true as soon as `done` is set.
fn sleep_unless_done(tick: Duration, done: &AtomicBool) -> bool {
    const STEP: Duration = Duration::from_millis(20);
    let deadline = Instant::now() + tick;
    while Instant::now() < deadline {
        if done.load(Ordering::Relaxed) {
            return true;
        }
        std::thread::sleep(STEP);
    }
    done.load(Ordering::Relaxed)
}

fn bar_for(line: &JobLine) -> ProgressBar {
    let bar = match line.planned {
        Some(total) => ProgressBar::new(total.as_millis() as u64).with_style(
            ProgressStyle::with_template("{prefix:<20} [{bar:24}] {msg}")
                .expect("a valid template")
                .progress_chars("=> "),
        ),
        None => ProgressBar::new_spinner().with_style(
            ProgressStyle::with_template("{prefix:<20} {spinner} {msg}").expect("a valid template"),
        ),
    };
    bar.set_prefix(line.name.clone());
    bar
}

fn job_totals(board: &LiveBoard, job: usize) -> LiveTotals {
    let mut sum = LiveTotals::default();
    for counters in board.job(job) {
        sum += &counters.totals();
    }
    sum
}

/// "2.0s/6.0s ETA 4.0s", or just the elapsed time when the job is not bounded by time.
fn timing(line: &JobLine, elapsed: Duration) -> String {
    match line.planned {
        Some(total) => format!(
            "{:.1}s/{:.1}s ETA {:.1}s",
            elapsed.as_secs_f64(),
            total.as_secs_f64(),
            total.saturating_sub(elapsed).as_secs_f64()
        ),
        None => format!("{:.1}s", elapsed.as_secs_f64()),
    }
}

/// What the job did in the last `window`: per direction IOPS and MiB/s, the mean latency
/// and the p99 from the live counters' coarse histogram (hence "≈").
fn describe(delta: &LiveTotals, window: Duration) -> String {
    let seconds = window.as_secs_f64().max(1e-9);
    let mut out = String::new();
    for (dir, label) in ["read", "write"].iter().enumerate() {
        if delta.ios[dir] > 0 {
            let _ = write!(
                out,
                "{label} {} IOPS {:.1} MiB/s  ",
                si(delta.ios[dir] as f64 / seconds),
                delta.bytes[dir] as f64 / seconds / (1024.0 * 1024.0)
            );
        }
    }
    let ios = delta.ios[0] + delta.ios[1];
    if ios == 0 {
        // Nothing completed yet (a ramp, or a slow first I/O).
        out.push_str("no I/O completed in this interval");
    } else {
        let _ = write!(
            out,
            "lat mean {}",
            latency(delta.lat_sum_ns as f64 / ios as f64)
        );
        if let Some(p99) = delta.latencies.percentile_ns(99.0) {
            let _ = write!(out, " p99≈{}", latency(p99 as f64));
        }
    }
    out
}

/// 950, 12.3k, 1.20M.
fn si(value: f64) -> String {
    match value {
        v if v >= 1e6 => format!("{:.2}M", v / 1e6),
        v if v >= 1e3 => format!("{:.1}k", v / 1e3),
        v => format!("{v:.0}"),
    }
}

fn latency(ns: f64) -> String {
    match ns {
        v if v >= 1e6 => format!("{:.2} ms", v / 1e6),
        v if v >= 1e3 => format!("{:.1} µs", v / 1e3),
        v => format!("{v:.0} ns"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eta_never_draws_nothing() {
        assert!(
            live_progress(EtaMode::Never).is_none(),
            "expected no progress display with --eta=never"
        );
    }

    #[test]
    fn rates_per_direction_mean_and_p99_latency() {
        let board = LiveBoard::new([1]);
        let worker = board.worker(0, 0);
        for i in 0..2000 {
            let lat_ns = if i % 100 == 0 { 1_000_000 } else { 140_000 };
            worker.record_io(0, 4096, lat_ns);
        }
        let delta = worker.totals().since(&LiveTotals::default());
        // 20 of 2000 I/Os took 1 ms: the 99th percentile is the slowest of the fast ones.
        assert_eq!(
            describe(&delta, Duration::from_millis(500)),
            "read 4.0k IOPS 15.6 MiB/s  lat mean 148.6 µs p99≈147.5 µs"
        );
        let idle = describe(&LiveTotals::default(), Duration::from_secs(1));
        assert!(idle.contains("no I/O completed"), "{idle}");
    }

    #[test]
    fn timing_shows_eta_only_for_timed_jobs() {
        let mut line = JobLine {
            index: 0,
            name: "j".into(),
            planned: Some(Duration::from_secs(6)),
        };
        assert_eq!(timing(&line, Duration::from_secs(2)), "2.0s/6.0s ETA 4.0s");
        assert_eq!(timing(&line, Duration::from_secs(7)), "7.0s/6.0s ETA 0.0s");
        line.planned = None;
        assert_eq!(timing(&line, Duration::from_millis(1500)), "1.5s");
    }

    #[test]
    fn job_totals_sum_the_workers_of_one_job() {
        let board = LiveBoard::new([2, 1]);
        board.worker(0, 0).record_io(0, 4096, 10);
        board.worker(0, 1).record_io(1, 8192, 30);
        board.worker(1, 0).record_io(0, 1, 1);
        let t = job_totals(&board, 0);
        assert_eq!((t.ios, t.bytes, t.lat_sum_ns), ([1, 1], [4096, 8192], 40));
        assert_eq!(t.latencies.percentile_ns(100.0), Some(30));
    }
}
