//! fio as the oracle for what the fio-format outputs count: the verify
//! read-back, group_reporting across sections, the terse percentile fields,
//! the steady-state window and "job options". Each case runs iolens on a small
//! job in a scratch directory and checks the figures fio 3.33 gives for it;
//! where fio is installed, it runs the same job and the two must agree.

use crate::support::{iolens, scratch, stderr, stdout};
use serde_json::Value;
use std::path::Path;

/// [read, write] × [io_bytes, total_ios] of one entry.
pub(crate) type Counts = [[u64; 2]; 2];

/// Runs fio with `args` in `dir`; None (and a printed reason) without fio.
pub(crate) fn fio(dir: &Path, args: &[&str]) -> Option<Value> {
    let out = match crate::support::isolated("fio")
        .args(args)
        .current_dir(dir)
        .output()
    {
        Ok(out) => out,
        Err(e) => {
            eprintln!("skipping the fio comparison: fio cannot run ({e})");
            return None;
        }
    };
    let text = String::from_utf8_lossy(&out.stdout);
    // fio prints its warnings ("fio: ...") before the document.
    let doc = &text[text.find('{').unwrap_or(0)..];
    let parsed = serde_json::from_str(doc)
        .unwrap_or_else(|e| panic!("fio {args:?} gave no JSON ({e}): {text}{}", stderr(&out)));
    Some(parsed)
}

/// Runs iolens `run` with `args` in `dir`; its JSON and exit code.
pub(crate) fn iolens_json(dir: &Path, args: &[&str]) -> (Value, i32) {
    let mut all = vec!["run", "--no-history"];
    all.extend_from_slice(args);
    let out = crate::support::command()
        .args(&all)
        .current_dir(dir)
        .output()
        .expect("run iolens");
    let doc = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "iolens {args:?} gave no JSON ({e}): {}{}",
            stdout(&out),
            stderr(&out)
        )
    });
    (doc, out.status.code().unwrap_or(-1))
}

/// Per entry: name, groupid and [read, write] × [io_bytes, total_ios]; fio's
/// entries that stand for no job (groupid -1, see docs/fio-compatibility.md) are left out.
pub(crate) fn entries(doc: &Value) -> Vec<(String, u64, Counts)> {
    let jobs = doc["jobs"].as_array().expect("a jobs array");
    jobs.iter()
        .filter(|j| j["groupid"] != u32::MAX)
        .map(|j| {
            let dir =
                |d: &str| [&j[d]["io_bytes"], &j[d]["total_ios"]].map(|v| v.as_u64().unwrap());
            (
                j["jobname"].as_str().unwrap_or_default().to_string(),
                j["groupid"].as_u64().unwrap(),
                [dir("read"), dir("write")],
            )
        })
        .collect()
}

/// `args` under iolens must give `expected` entries, and fio must agree.
fn counts_match(case: &str, args: &[&str], expected: &[(&str, u64, Counts)]) {
    let expected: Vec<(String, u64, Counts)> = expected
        .iter()
        .map(|&(name, group, dirs)| (name.to_string(), group, dirs))
        .collect();
    let dir = scratch();
    let mut with_format = args.to_vec();
    with_format.push("--output-format=json");
    let (doc, code) = iolens_json(dir.path(), &with_format);
    assert_eq!(code, 0, "{case}: iolens failed: {doc}");
    assert_eq!(
        entries(&doc),
        expected,
        "{case}: iolens entries (name, group, [[read bytes, ios], [write bytes, ios]]) differ from fio 3.33's"
    );
    // fio lays out its own target.
    let _ = std::fs::remove_file(dir.path().join("f"));
    if let Some(fio_doc) = fio(dir.path(), &with_format) {
        assert_eq!(
            entries(&fio_doc),
            expected,
            "{case}: the installed fio disagrees"
        );
    }
}

const VERIFY: [&str; 5] = [
    "--name=v",
    "--filename=f",
    "--size=64k",
    "--bs=4k",
    "--verify=crc32c",
];

fn verify_job(extra: &[&'static str]) -> Vec<&'static str> {
    VERIFY.iter().chain(extra).copied().collect()
}

#[test]
fn the_verify_read_back_counts_as_reads_as_in_fio() {
    const ALL: u64 = 64 << 10;
    let cases: [(&str, Vec<&str>, Counts); 6] = [
        ("write", verify_job(&["--rw=write"]), [[ALL, 16], [ALL, 16]]),
        (
            "randwrite",
            verify_job(&["--rw=randwrite"]),
            [[ALL, 16], [ALL, 16]],
        ),
        (
            "verify_backlog",
            verify_job(&["--rw=write", "--verify_backlog=4"]),
            [[ALL, 16], [ALL, 16]],
        ),
        (
            "one read per write, not per verify_interval",
            verify_job(&["--rw=write", "--bs=16k", "--verify_interval=4k"]),
            [[ALL, 4], [ALL, 4]],
        ),
        (
            "loops: read back after every pass",
            verify_job(&["--rw=write", "--loops=3"]),
            [[3 * ALL, 48], [3 * ALL, 48]],
        ),
        (
            "do_verify=0",
            verify_job(&["--rw=write", "--do_verify=0"]),
            [[0, 0], [ALL, 16]],
        ),
    ];
    for (case, args, dirs) in cases {
        counts_match(case, &args, &[("v", 0, dirs)]);
    }
}

#[test]
fn verify_read_back_shows_in_terse_and_normal_output() {
    let dir = scratch();
    let mut args = vec!["run", "--no-history", "--output-format=terse"];
    let target = dir.path().join("f");
    let filename = format!("--filename={}", target.display());
    args.extend(["--name=v", &filename, "--size=64k", "--bs=4k"]);
    args.extend(["--verify=crc32c", "--rw=write"]);
    // In the scratch dir: the job saves its verify state in the current directory.
    let run = |args: &[&str]| {
        let command = crate::support::command()
            .args(args)
            .current_dir(dir.path())
            .output();
        command.expect("run iolens")
    };
    let out = run(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    let terse = stdout(&out);
    let fields: Vec<&str> = terse.trim().split(';').collect();
    // read_kb (field 6) and write_kb (field 47), as fio 3.33 gives them.
    assert_eq!(
        (fields[5], fields[46]),
        ("64", "64"),
        "terse read and write KiB: expected fio's 64 and 64, got line {terse}"
    );
    args[2] = "--output-format=normal";
    let out = run(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("issued rwts: total=16,16,0,0"),
        "expected fio's 'issued rwts: total=16,16,0,0' (16 writes, 16 read back), got:\n{text}"
    );
}

#[test]
fn no_read_back_when_a_timed_job_runs_out_of_time_as_in_fio() {
    let dir = scratch();
    let args = verify_job(&[
        "--rw=write",
        "--time_based",
        "--runtime=200ms",
        "--output-format=json",
    ]);
    let (doc, code) = iolens_json(dir.path(), &args);
    assert_eq!(code, 0, "{doc}");
    let read = &doc["jobs"][0]["read"]["total_ios"];
    assert_eq!(
        read, 0,
        "fio starts no verify pass after a time_based write job; iolens read {read} back"
    );
    let writes = doc["jobs"][0]["write"]["total_ios"].as_u64().unwrap();
    assert!(writes > 0, "the job wrote nothing: {doc}");
}

#[test]
fn verify_only_accepts_a_layout_written_by_another_job_as_in_fio() {
    let dir = scratch();
    let layout = ["--name=layout", "--rw=write", "--do_verify=0"];
    let check = [
        "--name=check_it",
        "--rw=write",
        "--verify_only",
        "--stonewall",
    ];
    let common = ["--filename=f", "--size=64k", "--bs=4k", "--verify=crc32c"];
    let mut args: Vec<&str> = layout.iter().chain(&common).copied().collect();
    args.extend(check.iter().chain(&common));
    args.push("--output-format=json");
    let (doc, code) = iolens_json(dir.path(), &args);
    assert_eq!(
        code, 0,
        "a verify_only job under another name (and place) must accept the layout, as fio does: {doc}"
    );
    let checked = &doc["jobs"][1];
    let counts = |d: &str| {
        (
            checked[d]["io_bytes"].clone(),
            checked[d]["total_ios"].clone(),
        )
    };
    assert_eq!(
        (counts("read"), counts("write")),
        ((65536.into(), 16.into()), (65536.into(), 16.into())),
        "fio counts verify_only's dry-run writes and its reads: {checked}"
    );
    std::fs::remove_file(dir.path().join("f")).unwrap();
    if let Some(fio_doc) = fio(dir.path(), &args) {
        assert_eq!(
            entries(&fio_doc),
            entries(&doc),
            "the installed fio disagrees"
        );
        assert_eq!(fio_doc["jobs"][1]["error"], 0, "fio refused the layout");
    }
}

/// Three sections with group_reporting: a and b (2 workers) share group 0, c
/// is stonewalled into group 1.
const GROUPED: &str = "[global]\nioengine=null\nsize=1m\nbs=4k\ngroup_reporting\n\
    [a]\nrw=read\n[b]\nrw=write\nnumjobs=2\nbs=8k\n[c]\nrw=randread\nstonewall\n";

/// group_reporting only from b on: a's entry takes b's workers in (fio joins a
/// worker to the entry before it when its own job reports by group).
const HALF_GROUPED: &str = "[global]\nioengine=null\nsize=1m\nbs=4k\n\
    [a]\nrw=read\n[b]\nrw=write\ngroup_reporting\nnumjobs=2\n[c]\nrw=read\n";

#[test]
fn group_reporting_merges_the_sections_of_a_group_as_in_fio() {
    const M: u64 = 1 << 20;
    let cases = [
        (
            GROUPED,
            vec![
                ("a", 0, [[M, 256], [2 * M, 256]]),
                ("c", 1, [[M, 256], [0, 0]]),
            ],
        ),
        (
            HALF_GROUPED,
            vec![
                ("a", 0, [[M, 256], [2 * M, 512]]),
                ("c", 0, [[M, 256], [0, 0]]),
            ],
        ),
    ];
    for (text, expected) in cases {
        let dir = scratch();
        std::fs::write(dir.path().join("g.fio"), text).unwrap();
        let path = dir.path().join("g.fio");
        let path = path.to_str().unwrap();
        counts_match(text, &[path], &expected);
    }
}

#[test]
fn a_merged_entry_is_named_and_counted_as_in_fio_in_every_format() {
    let dir = scratch();
    let path = dir.path().join("g.fio");
    std::fs::write(&path, GROUPED).unwrap();
    let path = path.to_str().unwrap();
    let (doc, code) = iolens_json(dir.path(), &[path, "--output-format=json+"]);
    assert_eq!(code, 0, "{doc}");
    let a = &doc["jobs"][0];
    assert_eq!(
        a["job options"],
        serde_json::json!({"rw": "write", "numjobs": "2", "bs": "8k"}),
        "fio lists the last merged section's options under the first's name: {a}"
    );
    let bins: u64 = a["write"]["clat_ns"]["bins"]
        .as_object()
        .map_or(0, |b| b.values().map(|n| n.as_u64().unwrap()).sum());
    assert_eq!(
        bins, 256,
        "json+ write bins must hold both workers of b (256 I/Os): {}",
        a["write"]["clat_ns"]
    );
    let out = iolens(&["run", "--no-history", path, "--output-format=normal"]);
    let text = stdout(&out);
    assert!(
        text.contains("a: (groupid=0, jobs=3)") && text.contains("c: (groupid=1, jobs=1)"),
        "expected fio's headers 'a: (groupid=0, jobs=3)' and 'c: (groupid=1, jobs=1)':\n{text}"
    );
    assert_eq!(text.matches("(groupid=").count(), 2, "two entries:\n{text}");
    let out = iolens(&["run", "--no-history", path, "--output-format=terse"]);
    let terse = stdout(&out);
    let names: Vec<&str> = terse
        .lines()
        .map(|l| l.split(';').nth(2).unwrap())
        .collect();
    assert_eq!(
        names,
        ["a", "c"],
        "terse: one line per entry, as fio:\n{terse}"
    );
}

#[test]
fn terse_percentiles_come_from_lat_with_lat_percentiles_as_in_fio() {
    let dir = scratch();
    let args = [
        "--name=t",
        "--ioengine=null",
        "--size=1m",
        "--clat_percentiles=0",
        "--lat_percentiles=1",
        "--output-format=terse",
    ];
    let mut all = vec!["run", "--no-history"];
    all.extend(args);
    let out = iolens(&all);
    assert!(out.status.success(), "{}", stderr(&out));
    let line = stdout(&out);
    let first = line.split(';').nth(17).unwrap_or_default().to_string();
    assert!(
        first.starts_with("1.000000%="),
        "clat_percentiles=0 lat_percentiles=1: fio fills the read percentile fields from lat (1.000000%=...), iolens wrote {first:?}"
    );
    let fio_out = crate::support::isolated("fio")
        .args(args)
        .current_dir(dir.path())
        .output();
    match fio_out {
        Ok(out) => {
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            let fio_first = text.lines().last().unwrap_or_default().split(';').nth(17);
            assert_eq!(
                fio_first.map(|f| f.split('=').next()),
                Some(first.split('=').next()),
                "the installed fio fills another percentile: {text}"
            );
        }
        Err(e) => eprintln!("skipping the fio comparison: fio cannot run ({e})"),
    }
}

#[test]
fn steadystate_data_fills_the_window_with_zeros_as_in_fio() {
    let dir = scratch();
    let args = [
        "--name=s",
        "--ioengine=null",
        "--size=64k",
        "--rw=read",
        "--steadystate=iops:10%",
        "--ss_dur=3s",
        "--output-format=json",
    ];
    let (doc, code) = iolens_json(dir.path(), &args);
    assert_eq!(code, 0, "{doc}");
    let data = &doc["jobs"][0]["steadystate"]["data"];
    let expected =
        serde_json::json!({"bw_mean": 0, "iops_mean": 0, "iops": [0, 0, 0], "bw": [0, 0, 0]});
    assert_eq!(
        data, &expected,
        "a job that ended before its first steady-state sample: fio writes ss_dur zeros"
    );
    if let Some(fio_doc) = fio(dir.path(), &args) {
        assert_eq!(
            &fio_doc["jobs"][0]["steadystate"]["data"], &expected,
            "the installed fio disagrees"
        );
    }
}

#[test]
fn job_options_hold_the_name_given_as_an_option_as_in_fio() {
    let dir = scratch();
    let args = [
        "--name=x",
        "--ioengine=null",
        "--size=64k",
        "--thread",
        "--output-format=json",
    ];
    let (doc, code) = iolens_json(dir.path(), &args);
    assert_eq!(code, 0, "{doc}");
    let options = &doc["jobs"][0]["job options"];
    let keys: Vec<&String> = options.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        ["ioengine", "name", "size"],
        "fio lists the name among the options and leaves bare flags (thread) out: {options}"
    );
    let mut all = vec!["run", "--no-history"];
    all.extend(args);
    let text = stdout(&iolens(&all));
    let listed = &text[text.find("\"job options\"").expect("job options")..];
    assert!(
        listed.find("\"name\"") < listed.find("\"ioengine\""),
        "fio lists --name first, where it was given: {listed}"
    );
    assert_eq!(options["name"], "x");
    if let Some(fio_doc) = fio(dir.path(), &args) {
        assert_eq!(
            &fio_doc["jobs"][0]["job options"], options,
            "the installed fio disagrees"
        );
    }
}

/// What wrappers write: whole numbers as decimals (`size=1048576.0`,
/// `rwmixread=70.0`, as Python's str(float) gives them), on a target on no
/// block device (tmpfs). fio reads the numbers, and leaves `disk_util` out
/// of its JSON when there is no disk (a parser indexing `disk_util[0]` relies
/// on that); iolens the same.
#[test]
fn decimal_whole_numbers_are_read_and_no_disk_means_no_disk_util_as_in_fio() {
    if !Path::new("/dev/shm").is_dir() {
        eprintln!("skipped: no /dev/shm for a target on no block device");
        return;
    }
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let args = [
        "--name=d",
        "--filename=d.dat",
        "--size=1048576.0",
        "--rwmixread=70.0",
        "--rw=randrw",
        "--bs=4k",
        "--output-format=json",
    ];
    let moved = |doc: &Value| -> u64 {
        ["read", "write"]
            .iter()
            .map(|d| doc["jobs"][0][d]["io_bytes"].as_u64().unwrap())
            .sum()
    };
    let (doc, code) = iolens_json(dir.path(), &args);
    assert_eq!(code, 0);
    assert_eq!(moved(&doc), 1 << 20);
    assert!(doc.get("disk_util").is_none(), "{}", doc["disk_util"]);
    if let Some(fio) = fio(dir.path(), &args) {
        assert_eq!(moved(&fio), 1 << 20);
        assert!(fio.get("disk_util").is_none(), "{}", fio["disk_util"]);
    }
}

/// fio's JSON and terse lines carry its version as `fio-MAJOR.MINOR…`, which
/// parsers check; iolens' start the same way (`fio-3.33-iolens-…`).
#[test]
fn the_version_in_fios_formats_starts_with_fio_as_in_fio() {
    let dir = scratch();
    let args = ["--name=v", "--ioengine=null", "--size=1m"];
    let json_args = [&args[..], &["--output-format=json"]].concat();
    let terse_args = [&args[..], &["--output-format=terse"]].concat();
    let (doc, _) = iolens_json(dir.path(), &json_args);
    let version = doc["fio version"].as_str().unwrap();
    assert!(version.starts_with("fio-3.33-iolens-"), "{version}");
    let mut all = vec!["run", "--no-history"];
    all.extend_from_slice(&terse_args);
    let terse = stdout(&iolens(&all));
    assert_eq!(terse.split(';').nth(1), Some(version), "{terse}");
    if let Some(fio) = fio(dir.path(), &json_args) {
        let theirs = fio["fio version"].as_str().unwrap();
        assert!(theirs.starts_with("fio-"), "{theirs}");
    }
}
