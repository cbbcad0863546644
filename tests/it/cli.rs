//! Command-line behaviour: errors are one line, name the option, and exit 2.

use crate::support::{iolens, scratch, stderr, stdout};

#[test]
fn a_typo_in_an_option_suggests_the_right_one() {
    let out = iolens(&["run", "--name=a", "--size=1m", "--threads"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("thread"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(stdout(&out).is_empty());
}

#[test]
fn a_job_without_size_or_filename_is_a_usage_error() {
    let out = iolens(&["run", "--name=a", "--rw=read"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("size"), "{}", stderr(&out));
}

#[test]
fn misaligned_direct_io_is_refused_before_any_io() {
    let dir = scratch();
    let f = dir.path().join("f");
    let out = iolens(&[
        "run",
        "--name=a",
        &format!("--filename={}", f.display()),
        "--size=1m",
        "--bs=1000",
        "--direct=1",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("bs=1000") && err.contains("multiple"), "{err}");
}

#[test]
fn unknown_output_format_is_a_usage_error() {
    let out = iolens(&["run", "--output-format=xml", "--name=a", "--size=1m"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--output-format=xml"));
}

#[test]
fn normal_output_looks_like_fio() {
    let dir = scratch();
    let f = dir.path().join("f");
    let out = iolens(&[
        "run",
        "--name=job1",
        &format!("--filename={}", f.display()),
        "--size=2m",
        "--rw=randread",
        "--ioengine=psync",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    for needle in [
        "job1: (groupid=0",
        "read: IOPS=",
        "clat",
        "Run status group 0",
        "cpu",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
    }
}

#[test]
fn a_read_job_never_reads_holes_of_a_file_it_lays_out() {
    let dir = scratch();
    let f = dir.path().join("laid-out");
    let out = iolens(&[
        "run",
        "--name=r",
        &format!("--filename={}", f.display()),
        "--size=4m",
        "--rw=read",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let data = std::fs::read(&f).unwrap();
    assert_eq!(data.len(), 4 << 20);
    assert!(data.iter().filter(|&&b| b == 0).count() < data.len() / 100);
}

#[test]
fn reading_an_existing_sparse_file_warns() {
    let dir = scratch();
    let f = dir.path().join("sparse");
    std::fs::File::create(&f).unwrap().set_len(4 << 20).unwrap();
    let out = iolens(&[
        "run",
        "--name=r",
        &format!("--filename={}", f.display()),
        "--rw=read",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("holes"), "{}", stderr(&out));
}

#[test]
fn run_help_lists_every_own_flag_the_readme_lists() {
    let help = stdout(&iolens(&["run", "--help"]));
    let in_help: Vec<&str> = help
        .lines()
        .filter_map(|l| l.strip_prefix("      --"))
        .map(|l| l.split([' ', '[']).next().unwrap())
        .filter(|name| *name != "help")
        .collect();
    let readme = include_str!("../../docs/usage.md");
    let table: String = readme
        .split("iolens' own flags (anywhere among the options;")
        .nth(1)
        .expect("README has the table of run's own flags")
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .collect::<Vec<_>>()
        .join("\n");
    for name in &in_help {
        let boundary = |c: char| !(c.is_ascii_alphanumeric() || c == '-');
        let documented = table
            .match_indices(&format!("`--{name}"))
            .any(|(i, m)| table[i + m.len()..].starts_with(boundary));
        assert!(
            documented,
            "expected `--{name}` (in run --help) in the README's table:\n{table}"
        );
    }
    for flag in ["--html", "--io-timeout", "--repeat", "--db", "--section"] {
        assert!(
            in_help.contains(&&flag[2..]),
            "expected {flag} in run --help, found {in_help:?}"
        );
    }
    let rows = table.lines().count() - 2;
    assert!(
        in_help.len() >= rows,
        "expected run --help to list at least one flag per README row ({rows}), found {in_help:?}"
    );
}

#[test]
fn own_flags_work_after_job_options() {
    let dir = scratch();
    let out = iolens(&[
        "run",
        "--name=late",
        "--ioengine=null",
        "--size=1m",
        "--output-format",
        "json",
        "--no-history",
        &format!("--html={}", dir.path().join("r.html").display()),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("expected fio JSON on stdout ({e}), got:\n{}", stdout(&out)));
    assert_eq!(report["jobs"][0]["jobname"], "late", "{report}");
    assert!(
        dir.path().join("r.html").exists(),
        "expected --html after the job options to write the page"
    );
}

#[test]
fn repeat_refuses_fios_formats() {
    let out = iolens(&[
        "run",
        "--no-history",
        "--repeat=2",
        "--output-format=terse",
        "--name=m",
        "--ioengine=null",
        "--size=64k",
    ]);
    crate::support::assert_failed_saying(
        &out,
        2,
        "--repeat writes normal or iolens-json output (fio's formats have no place for repetitions)",
    );
}
