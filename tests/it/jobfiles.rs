//! Job files, show-jobs, --parse-only, --cmdhelp and the fio drop-in, through the binary.
//! Expected groups and option values were taken from fio 3.33 on the same job files.

use crate::support::{iolens, json, scratch, stderr, stdout};
use std::path::Path;
use std::process::Command;

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

const TWO_JOBS: &str = "[global]\nioengine=null\nsize=1m\nruntime=1\n[first]\n[second]\n";

#[test]
fn each_job_file_is_its_own_stonewalled_group() {
    let dir = scratch();
    let a = write(dir.path(), "a.fio", TWO_JOBS);
    let b = write(dir.path(), "b.fio", TWO_JOBS);
    let report = json(&iolens(&["run", &a, &b, "--output-format=json"]));
    let groups: Vec<(String, u64)> = report["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            (
                j["jobname"].as_str().unwrap().to_string(),
                j["groupid"].as_u64().unwrap(),
            )
        })
        .collect();
    let expected = [("first", 0), ("second", 0), ("first", 1), ("second", 1)];
    assert_eq!(groups, expected.map(|(n, g)| (n.to_string(), g)));
}

#[test]
fn show_jobs_names_where_each_value_came_from() {
    let dir = scratch();
    let file = write(
        dir.path(),
        "s.fio",
        "[global]\nbs=8k ; comment\n[job]\nsize=1m\n",
    );
    let out = iolens(&["show-jobs", &file, "--iodepth=4"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let line = |name: &str| {
        text.lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .unwrap_or_default()
    };
    assert_eq!(line("bs"), format!("bs 8k [global] {file}:2"));
    assert_eq!(line("size"), format!("size 1m [job] {file}:4"));
    assert_eq!(line("iodepth"), "iodepth 4 command line");
    assert_eq!(line("rw"), "rw read default");
}

#[test]
fn parse_only_and_section_run_nothing_but_the_named_jobs() {
    let dir = scratch();
    let file = write(dir.path(), "p.fio", TWO_JOBS);
    let out = iolens(&["run", "--parse-only", "--section=second", &file]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with("job 1 'second'") && !text.contains("'first'"),
        "{text}"
    );
    let out = iolens(&["run", "--parse-only", "--section=third", &file]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--section=third"), "{}", stderr(&out));
}

#[test]
fn an_unset_variable_is_an_error_naming_it_and_the_line() {
    let dir = scratch();
    let file = write(
        dir.path(),
        "e.fio",
        "[j]\nioengine=null\nsize=${IOLENS_IT_UNSET}\n",
    );
    let out = iolens(&["run", "--parse-only", &file]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains(&format!("{file}:3")) && err.contains("'IOLENS_IT_UNSET'"),
        "{err}"
    );
    let set = crate::support::command()
        .args(["run", "--parse-only", &file])
        .env("IOLENS_IT_UNSET", "2m")
        .output()
        .unwrap();
    assert!(stdout(&set).contains("2m"), "{}", stderr(&set));
}

#[test]
fn lenient_mode_accepts_what_fio_accepts_with_warnings() {
    let dir = scratch();
    let file = write(dir.path(), "l.fio", "[j]\nioengine=null\nsize=1m\nbs=4q\n");
    let strict = iolens(&["run", "--parse-only", &file]);
    assert_eq!(strict.status.code(), Some(2));
    assert!(stderr(&strict).contains("bs=4q"), "{}", stderr(&strict));
    let lenient = iolens(&["run", "--parse-only", "--fio-compat=lenient", &file]);
    assert_eq!(lenient.status.code(), Some(0), "{}", stderr(&lenient));
    assert!(stderr(&lenient).contains("warning") && stderr(&lenient).contains("read as 4"));
}

#[test]
fn cmdhelp_lists_options_and_describes_one() {
    let all = iolens(&["run", "--cmdhelp"]);
    assert!(
        stdout(&all).lines().any(|l| l.starts_with("iodepth ")),
        "{}",
        stdout(&all)
    );
    let one = iolens(&["run", "--cmdhelp=blocksize"]);
    assert!(stdout(&one).contains("bs:") && stdout(&one).contains("default: 4k"));
    let typo = iolens(&["run", "--cmdhelp=iodepht"]);
    assert_eq!(typo.status.code(), Some(2));
    assert!(
        stderr(&typo).contains("did you mean 'iodepth'"),
        "{}",
        stderr(&typo)
    );
}

#[test]
fn the_fio_shim_runs_job_files_and_answers_version() {
    let dir = scratch();
    // The directory does not exist yet: install-fio-shim creates it.
    let bin = dir.path().join("new/bin");
    let install = iolens(&["install-fio-shim", &bin.display().to_string()]);
    assert_eq!(
        install.status.code(),
        Some(0),
        "expected install-fio-shim to create {} and succeed: {}",
        bin.display(),
        stderr(&install)
    );
    let fio = bin.join("fio");
    let version = Command::new(&fio).arg("--version").output().unwrap();
    assert!(
        stdout(&version).starts_with("fio-3.33-iolens-"),
        "{}",
        stdout(&version)
    );
    let file = write(dir.path(), "f.fio", TWO_JOBS);
    let run = crate::support::isolated(&fio)
        .args([file.as_str(), "--output-format=json"])
        .output()
        .unwrap();
    assert_eq!(json(&run)["jobs"].as_array().unwrap().len(), 2);
    let again = iolens(&["install-fio-shim", &bin.display().to_string()]);
    assert_eq!(again.status.code(), Some(2));
    assert!(stderr(&again).contains("--force"), "{}", stderr(&again));
}

#[test]
fn the_fio_shim_refuses_a_bad_flag_in_one_line() {
    let dir = scratch();
    let bin = dir.path().join("bin");
    let install = iolens(&["install-fio-shim", &bin.display().to_string()]);
    assert_eq!(install.status.code(), Some(0), "{}", stderr(&install));
    let fio = |args: &[&str]| {
        crate::support::isolated(bin.join("fio"))
            .args(args)
            .output()
            .unwrap()
    };
    for (args, expected) in [
        (
            &["--name=a", "--size=1m", "--repeat=0"][..],
            "iolens: --repeat=0: give at least one repetition\n",
        ),
        (
            &["--name=a", "--repeat"][..],
            "iolens: a value is required for '--repeat <N>' but none was supplied (see --help)\n",
        ),
    ] {
        let out = fio(args);
        assert_eq!(
            (out.status.code(), stderr(&out).as_str()),
            (Some(2), expected),
            "expected `fio {}` to exit 2 with one line naming the flag",
            args.join(" ")
        );
    }
    let help = fio(&["--help"]);
    assert!(
        help.status.code() == Some(0) && stdout(&help).contains("Usage: iolens run"),
        "expected `fio --help` to print run's help, got: {}",
        stdout(&help)
    );
}
