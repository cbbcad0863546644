//! The sampler, the page-cache guard and the environment, seen through the
//! native JSON of real runs.

use crate::support::{iolens, json, scratch, stdout};

fn u64s(v: &serde_json::Value) -> Vec<u64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect()
}

#[test]
fn a_buffered_read_shows_the_file_entering_the_page_cache() {
    let dir = scratch();
    let f = dir.path().join("cold");
    let out = iolens(&[
        "run",
        "--name=r",
        &format!("--filename={}", f.display()),
        "--size=8m",
        "--rw=read",
        "--bs=64k",
        "--rate=16m",
        "--thread",
        "--observe-interval=50ms",
        "--output-format=iolens-json",
    ]);
    let report = json(&out);
    let obs = &report["observations"];
    let t = u64s(&obs["t_ns"]);
    assert!(t.len() >= 5, "{t:?}");
    assert!(t.windows(2).all(|w| w[0] < w[1]), "{t:?}");

    // invalidate=1 (the default) dropped what laying out the file left cached.
    let guard = &obs["cache_guards"][0];
    assert_eq!(guard["purged"], true, "{guard}");
    assert_eq!(guard["pages_after"], 0, "{guard}");

    let target = &obs["targets"][0];
    if target["method"] != "unavailable" {
        let cached: Vec<u64> = target["cache_series"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|p| p["cached"].as_u64())
            .collect();
        let pages = (8 << 20) / obs["page_size_bytes"].as_u64().unwrap();
        assert_eq!(*cached.last().unwrap(), pages, "{cached:?}");
        assert!(cached.iter().any(|&c| c < pages), "{cached:?}");
    }
    let read: u64 = obs["jobs"][0]["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["bytes"][0].as_u64().unwrap())
        .sum();
    assert_eq!(read, 8 << 20);
    assert_ne!(obs["workers"][0]["tid"], 0);
    assert!(!report["environment"]["kernel_release"]
        .as_str()
        .unwrap()
        .is_empty());
    eprintln!(
        "sampler CPU: {} us over {} ms",
        obs["sampler_cpu_ns"].as_u64().unwrap() / 1000,
        t.last().unwrap() / 1_000_000
    );
}

#[test]
fn the_normal_report_summarises_the_system_and_fio_json_stays_fio_shaped() {
    let dir = scratch();
    let f = dir.path().join("w");
    let args = [
        "run".to_string(),
        "--name=w".into(),
        format!("--filename={}", f.display()),
        "--size=1m".into(),
        "--rw=write".into(),
    ];
    let mut normal: Vec<&str> = args.iter().map(String::as_str).collect();
    let text = stdout(&iolens(&normal));
    assert!(text.contains("System during the run"), "{text}");
    assert!(text.contains("before job 'w'"), "{text}");
    normal.push("--output-format=json");
    let fio = json(&iolens(&normal));
    assert!(fio.get("observations").is_none());
    assert!(fio.get("environment").is_none());
}

#[test]
fn worker_processes_are_sampled_like_threads() {
    let dir = scratch();
    let f = dir.path().join("p");
    let out = iolens(&[
        "run",
        "--name=p",
        &format!("--filename={}", f.display()),
        "--size=4m",
        "--rw=read",
        "--bs=64k",
        "--rate=16m",
        "--numjobs=2",
        "--observe-interval=50ms",
        "--output-format=iolens-json",
    ]);
    let report = json(&out);
    let obs = &report["observations"];
    let workers = obs["workers"].as_array().unwrap();
    assert_eq!(workers.len(), 2);
    for worker in workers {
        assert_ne!(worker["tid"], 0, "{worker}");
        assert!(worker["cpu_ns"].as_u64().unwrap() > 0, "{worker}");
    }
    assert_ne!(workers[0]["tid"], workers[1]["tid"]);

    // Each process wrote its own slot of the shared board: every byte both read shows up.
    let intervals = obs["jobs"][0]["intervals"].as_array().unwrap();
    let ios: Vec<u64> = intervals
        .iter()
        .map(|i| i["ios"][0].as_u64().unwrap())
        .collect();
    assert!(ios.iter().filter(|&&n| n > 0).count() >= 3, "{ios:?}");
    assert_eq!(
        ios.iter().sum::<u64>(),
        2 * (4 << 20) / (64 << 10),
        "{ios:?}"
    );
    let read: u64 = intervals
        .iter()
        .map(|i| i["bytes"][0].as_u64().unwrap())
        .sum();
    assert_eq!(read, 2 * (4 << 20));
    assert!(intervals
        .iter()
        .any(|i| i["lat_max_ns"].as_u64().unwrap() > 0));
    let notes = obs["notes"].to_string();
    assert!(!notes.contains("processes"), "{notes}");
}

/// The sampler starts before the cache guard drops what an earlier writer left
/// cached: that first sample is no part of the direct job's run.
#[test]
fn a_direct_job_s_cache_line_starts_after_the_guard_dropped_the_cache() {
    let dir = scratch();
    let f = dir.path().join("warm");
    // Written through the page cache just before (and synced, so they can be
    // dropped): 128 MiB cached take the guard long enough to drop that the
    // sampler's first sample sees them.
    let mut file = std::fs::File::create(&f).unwrap();
    std::io::Write::write_all(&mut file, &vec![7u8; 128 << 20]).unwrap();
    file.sync_all().unwrap();
    drop(file);
    let out = iolens(&[
        "run",
        "--no-history",
        "--name=d",
        &format!("--filename={}", f.display()),
        "--size=128m",
        "--bs=1m",
        "--rw=read",
        "--direct=1",
        "--ioengine=libaio",
        "--iodepth=4",
    ]);
    let text = stdout(&out);
    assert!(out.status.success(), "expected success, saw:\n{text}");
    if text.contains("page cache not watched") {
        eprintln!("skipped: the page cache cannot be counted here");
        return;
    }
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("page cache "))
        .unwrap_or_else(|| panic!("expected a page cache line in\n{text}"));
    assert!(
        line.contains(": 0 -> max 0 -> 0 pages cached"),
        "expected no cached pages from the job's start on (the guard's line keeps the earlier count), saw {line:?} in\n{text}"
    );
    assert!(
        text.contains("before job 'd'") && text.contains("dropped, 0 left"),
        "expected the guard's line with the pages it dropped in\n{text}"
    );
}

/// Laying out a file writes it through the page cache; iolens drops what it
/// wrote again (as fio does), so a first buffered read goes to the device,
/// also with invalidate=0, which keeps only what was cached before.
#[test]
fn the_layout_leaves_no_pages_of_its_own_in_the_page_cache() {
    let dir = scratch();
    let fresh = dir.path().join("fresh");
    let job = |f: &std::path::Path, format: &str| {
        iolens(&[
            "run",
            "--no-history",
            "--name=r",
            &format!("--filename={}", f.display()),
            "--size=8m",
            "--bs=64k",
            "--rw=read",
            "--invalidate=0",
            &format!("--output-format={format}"),
        ])
    };
    let report = json(&job(&fresh, "iolens-json"));
    let obs = &report["observations"];
    let layout = &obs["layouts"][0];
    assert_eq!(
        (&layout["from"], &layout["to"], &layout["error"]),
        (&0.into(), &(8u64 << 20).into(), &serde_json::Value::Null),
        "expected the 8 MiB laid out and dropped, saw {layout}"
    );
    let guard = &obs["cache_guards"][0];
    if guard["pages_before"].is_null() {
        eprintln!("skipped: the page cache cannot be counted here");
        return;
    }
    assert_eq!(
        guard["pages_before"], 0,
        "expected no page of the fresh file cached at the job's start, saw {guard}"
    );
    let read = report["jobs"][0]["dirs"][0]["io_bytes"].as_u64().unwrap();
    assert_eq!(read, 8 << 20, "expected the whole file read");

    // Half of the file exists and is cached; the layout adds the other half.
    let half = dir.path().join("half");
    let mut file = std::fs::File::create(&half).unwrap();
    std::io::Write::write_all(&mut file, &vec![3u8; 4 << 20]).unwrap();
    file.sync_all().unwrap();
    drop(file);
    let out = job(&half, "normal");
    let text = stdout(&out);
    assert!(out.status.success(), "expected success, saw:\n{text}");
    let pages = (4u64 << 20) / obs["page_size_bytes"].as_u64().unwrap();
    assert!(
        text.contains(&format!(
            "laid out {}: wrote 4.0 MiB, then dropped it from the page cache",
            half.display()
        )),
        "expected the layout's line in\n{text}"
    );
    assert!(
        text.contains(&format!("had {pages} pages cached; kept (invalidate=0)")),
        "expected the {pages} pages cached before iolens touched the file to stay, in\n{text}"
    );
}

/// One CPU wait per job, the same in the native JSON, the system block and
/// (when the machine was busy enough) the cpu-starvation finding.
#[test]
fn cpu_wait_is_one_number_in_every_report() {
    let dir = scratch();
    let db = dir.path().join("h.db");
    let db_flag = format!("--db={}", db.display());
    let out = iolens(&[
        "run",
        &db_flag,
        "--name=c",
        &format!("--filename={}", dir.path().join("c").display()),
        "--size=8m",
        "--bs=64k",
        "--rw=read",
        "--rate=16m",
        "--observe-interval=50ms",
    ]);
    assert!(out.status.success(), "{}", crate::support::stderr(&out));
    let report = json(&iolens(&[
        "show",
        &db_flag,
        "1",
        "--output-format=iolens-json",
    ]));
    let wait = &report["observations"]["jobs"][0]["cpu_wait"];
    let pct = wait["pct"]
        .as_f64()
        .unwrap_or_else(|| panic!("expected a CPU wait in the native JSON, saw {wait}"));
    let (delay, worker) = (
        wait["run_delay_ns"].as_f64().unwrap(),
        wait["worker_ns"].as_f64().unwrap(),
    );
    assert!(
        worker > 0.0 && (pct - delay * 100.0 / worker).abs() < 1e-9,
        "expected pct = run_delay_ns / worker_ns, saw {wait}"
    );
    let text = stdout(&iolens(&["show", &db_flag, "1"]));
    let said = format!("CPU wait {pct:.1}%");
    let line = text
        .lines()
        .find(|l| l.contains("job 'c': workers on CPU"))
        .unwrap_or_else(|| panic!("expected the job's CPU line in\n{text}"));
    assert!(
        line.contains(&said),
        "expected {said:?} in the system block, saw {line:?}"
    );
    if let Some(finding) = text.lines().find(|l| l.contains("cpu-starvation")) {
        assert!(
            finding.contains(&format!("{pct:.1}%")),
            "expected the finding to give the same {pct:.1}%, saw {finding:?}"
        );
    }
}

/// What the sampler keeps at most per series (`observe::rollup::CAP`).
const SAMPLES_KEPT_AT_MOST: usize = 3600;

#[test]
fn a_long_run_keeps_its_observations_bounded_and_its_totals_exact() {
    // 40 s at 10 ms is 4000 samples, past what is kept: the older ones are rolled up.
    let out = iolens(&[
        "run",
        "--no-history",
        "--name=n",
        "--ioengine=null",
        "--rw=read",
        "--bs=4k",
        "--size=1g",
        "--time_based",
        "--runtime=40s",
        "--observe-interval=10ms",
        "--output-format=iolens-json",
    ]);
    let report = json(&out);
    let obs = &report["observations"];
    let times = u64s(&obs["t_ns"]);
    assert!(
        times.len() < SAMPLES_KEPT_AT_MOST,
        "expected the samples of a 40 s run at 10 ms rolled up below {SAMPLES_KEPT_AT_MOST}, kept {}",
        times.len()
    );
    assert!(times.windows(2).all(|w| w[0] < w[1]));
    assert!(
        *times.last().unwrap() >= 40_000_000_000,
        "the last sample ends the run"
    );
    let intervals = obs["jobs"][0]["intervals"].as_array().unwrap();
    assert_eq!(intervals.len(), times.len());
    assert_eq!(obs["memory_series"].as_array().unwrap().len(), times.len());
    // Rolled-up intervals add up: the sampler's I/Os are the job's, to the last one.
    let sampled: u64 = intervals
        .iter()
        .map(|i| i["ios"][0].as_u64().unwrap())
        .sum();
    assert_eq!(
        sampled,
        report["jobs"][0]["dirs"][0]["total_ios"].as_u64().unwrap()
    );
}
