//! Per-I/O priorities (`cmdprio_percentage`, `cmdprio_class`, `cmdprio`) against fio 3.33:
//! the same job under both tools must report the same priorities under fio's keys and
//! lines, each with its share of the I/Os within binomial noise.

use crate::fio_match::{fio, iolens_json};
use crate::support::{assert_failed_saying, iolens, isolated, scratch, stdout};
use serde_json::Value;
use std::path::Path;

/// 30 % of the reads at best effort level 5, 70 % of the writes at idle level 1 (classes
/// anyone may use, so the job runs without privileges too).
const JOB: [&str; 11] = [
    "--name=t",
    "--filename=f",
    "--size=4m",
    "--bs=4k",
    "--rw=randrw",
    "--ioengine=io_uring",
    "--iodepth=4",
    "--cmdprio_percentage=30,70",
    "--cmdprio_class=2,3",
    "--cmdprio=5,1",
    "--randrepeat=0",
];

/// Per direction: the share (percent) expected at cmdprio's priority and that priority.
const EXPECTED: [(&str, f64, (u64, u64)); 2] = [("read", 30.0, (2, 5)), ("write", 70.0, (3, 1))];

fn job(extra: &[&'static str]) -> Vec<&'static str> {
    JOB.iter().chain(extra).copied().collect()
}

/// One direction's `prios`: (prioclass, prio, the latency's key, its keys, N).
fn prios(doc: &Value, ddir: &str) -> Vec<(u64, u64, String, Vec<String>, u64)> {
    let list = doc["jobs"][0][ddir]["prios"]
        .as_array()
        .unwrap_or_else(|| panic!("{ddir}: expected a prios array, saw {doc}"));
    list.iter()
        .map(|p| {
            let entry = p.as_object().expect("a prios entry is an object");
            let (key, lat) = entry
                .iter()
                .find(|(k, _)| k.ends_with("lat_ns"))
                .unwrap_or_else(|| panic!("{ddir}: expected clat_ns or lat_ns in {p}"));
            let keys = lat.as_object().unwrap().keys().cloned().collect();
            (
                p["prioclass"].as_u64().unwrap(),
                p["prio"].as_u64().unwrap(),
                key.clone(),
                keys,
                lat["N"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// The two priorities of each direction, the job's own first, split within 5 σ of a
/// binomial draw; `tool` names who reported them.
fn check_split(tool: &str, doc: &Value, lat_key: &str) {
    for (ddir, percent, high) in EXPECTED {
        let got = prios(doc, ddir);
        let heads: Vec<(u64, u64, &str)> = got.iter().map(|p| (p.0, p.1, p.2.as_str())).collect();
        assert_eq!(
            heads,
            [(0, 0, lat_key), (high.0, high.1, lat_key)],
            "{tool} {ddir}: expected the job's own priority 0/0 then cmdprio's {high:?}, both as {lat_key}"
        );
        let total = doc["jobs"][0][ddir]["total_ios"].as_u64().unwrap();
        let n: u64 = got.iter().map(|p| p.4).sum();
        assert_eq!(
            n, total,
            "{tool} {ddir}: expected the priorities' N to add up to total_ios"
        );
        let expected = total as f64 * percent / 100.0;
        let sigma = (expected * (1.0 - percent / 100.0)).sqrt();
        let at_high = got[1].4 as f64;
        assert!(
            (at_high - expected).abs() < 5.0 * sigma,
            "{tool} {ddir}: expected about {expected:.0} of {total} I/Os at {high:?}, saw {at_high}"
        );
    }
}

fn compare_with_fio(extra: &[&'static str], lat_key: &str) {
    let dir = scratch();
    let args = job(&[extra, &["--output-format=json"]].concat());
    let (doc, code) = iolens_json(dir.path(), &args);
    assert_eq!(code, 0, "iolens failed: {doc}");
    check_split("iolens", &doc, lat_key);
    let _ = std::fs::remove_file(dir.path().join("f"));
    let Some(fio_doc) = fio(dir.path(), &args) else {
        return;
    };
    check_split("fio", &fio_doc, lat_key);
    for (ddir, ..) in EXPECTED {
        let keys = |doc: &Value| -> Vec<(u64, u64, String, Vec<String>)> {
            prios(doc, ddir)
                .into_iter()
                .map(|(c, l, k, keys, _)| (c, l, k, keys))
                .collect()
        };
        assert_eq!(
            keys(&doc),
            keys(&fio_doc),
            "{ddir}: expected iolens's prios entries and their keys to be fio's"
        );
    }
}

#[test]
fn the_json_reports_each_priority_as_fio_does() {
    compare_with_fio(&[], "clat_ns");
}

#[test]
fn with_lat_percentiles_the_priorities_keep_total_latency_as_in_fio() {
    compare_with_fio(&["--lat_percentiles=1"], "lat_ns");
}

/// `cmdprio_bssplit`: 40 % of the 4k reads at 2/5, every 16k read at 3/1, in both tools.
#[test]
fn bssplit_gives_each_block_size_its_priorities_as_fio_does() {
    let dir = scratch();
    let args = [
        "--name=t",
        "--filename=f",
        "--size=8m",
        "--bssplit=4k/50:16k/50",
        "--rw=randread",
        // no random map: it would cut blocks short, and a cut block has a size of its own
        "--norandommap=1",
        "--ioengine=libaio",
        "--iodepth=4",
        "--cmdprio_bssplit=16k/100/3/1:4k/40/2/5",
        "--output-format=json",
    ];
    let check = |tool: &str, doc: &Value| {
        let read = &doc["jobs"][0]["read"];
        let (bytes, total) = (
            read["io_bytes"].as_u64().unwrap(),
            read["total_ios"].as_u64().unwrap(),
        );
        // 4k and 16k reads add up to the bytes, but for the job's last read, which may be
        // cut to fit size= (then it is neither size): the count of 16k reads is this ± 2
        let large = (bytes - 4096 * total) as f64 / (12 * 1024) as f64;
        let small = total as f64 - large;
        let got = prios(doc, "read");
        let heads: Vec<(u64, u64)> = got.iter().map(|p| (p.0, p.1)).collect();
        assert_eq!(
            heads,
            [(0, 0), (2, 5), (3, 1)],
            "{tool}: expected the own priority, then 4k's 2/5, then 16k's 3/1"
        );
        assert!(
            (got[2].4 as f64 - large).abs() <= 2.0,
            "{tool}: expected every 16k read (about {large:.1}) at 3/1, saw {}",
            got[2].4
        );
        let expected = small * 0.4;
        let sigma = (expected * 0.6).sqrt();
        assert!(
            (got[1].4 as f64 - expected).abs() < 5.0 * sigma,
            "{tool}: expected about {expected:.0} of {small:.0} 4k reads at 2/5, saw {}",
            got[1].4
        );
    };
    let (doc, code) = iolens_json(dir.path(), &args);
    assert_eq!(code, 0, "iolens failed: {doc}");
    check("iolens", &doc);
    let _ = std::fs::remove_file(dir.path().join("f"));
    if let Some(fio_doc) = fio(dir.path(), &args) {
        check("fio", &fio_doc);
    }
}

/// Line heads of the per-priority lines: `    clat prio 2/5 (usec)` → `    clat prio 2/5`.
fn prio_lines(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.contains(" prio "))
        .map(|l| l[..l.find(" (").unwrap_or(l.len())].to_string())
        .collect()
}

fn fio_text(dir: &Path, args: &[&str]) -> Option<String> {
    let out = isolated("fio").args(args).current_dir(dir).output().ok()?;
    Some(stdout(&out))
}

#[test]
fn the_text_report_has_fios_lines_per_priority() {
    let dir = scratch();
    let args = job(&["--output-format=normal"]);
    let mut run = vec!["run", "--no-history"];
    run.extend_from_slice(&args);
    let out = crate::support::command()
        .args(&run)
        .current_dir(dir.path())
        .output()
        .expect("run iolens");
    let text = stdout(&out);
    let expected: Vec<String> = ["0/0", "2/5", "0/0", "2/5", "0/0", "3/1", "0/0", "3/1"]
        .iter()
        .map(|p| format!("    clat prio {p}"))
        .collect();
    assert_eq!(
        prio_lines(&text),
        expected,
        "expected a summary line then a percentile block per priority and direction:\n{text}"
    );
    assert!(
        text.contains("% of IOs) percentiles ("),
        "expected each priority's percentile block to say its share of the I/Os:\n{text}"
    );
    let _ = std::fs::remove_file(dir.path().join("f"));
    if let Some(fio_out) = fio_text(dir.path(), &args) {
        assert_eq!(
            prio_lines(&fio_out),
            expected,
            "expected fio's per-priority lines to be these:\n{fio_out}"
        );
    }
}

#[test]
fn engines_without_per_io_priorities_refuse_the_options_as_fio_does() {
    let dir = scratch();
    let file = dir.path().join("f");
    let filename = format!("--filename={}", file.display());
    let args = [
        "--name=t",
        filename.as_str(),
        "--size=64k",
        "--ioengine=psync",
        "--cmdprio_percentage=50",
    ];
    let mut run = vec!["run", "--no-history"];
    run.extend_from_slice(&args);
    assert_failed_saying(&iolens(&run), 2, "ioengine=psync sends no priority");
    if let Ok(out) = isolated("fio").args(args).current_dir(dir.path()).output() {
        assert!(
            !out.status.success(),
            "expected fio to refuse cmdprio_percentage with psync too, saw exit {:?}",
            out.status.code()
        );
    }
    let _ = std::fs::remove_file(&file);
}
