//! The bad-input corpus (tests/bad_input/MANIFEST): every broken job file and
//! command line exits 2 with one line naming what is wrong: no panic, no hang.

use crate::support::scratch;
use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Generous for a loaded 2-core machine; a correct case takes milliseconds.
const TIMEOUT: Duration = Duration::from_secs(20);

struct Case {
    name: String,
    fragment: String,
    args: Vec<String>,
}

fn cases(dir: &Path, tmp: &Path) -> Vec<Case> {
    let manifest = std::fs::read_to_string(dir.join("MANIFEST")).unwrap();
    manifest
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|line| {
            let fields: Vec<&str> = line.splitn(3, " | ").collect();
            assert_eq!(fields.len(), 3, "bad manifest line: {line}");
            let expand = |s: &str| {
                s.replace("{dir}", &dir.display().to_string())
                    .replace("{tmp}", &tmp.display().to_string())
            };
            Case {
                name: fields[0].to_string(),
                fragment: expand(fields[1]),
                args: fields[2].split_whitespace().map(expand).collect(),
            }
        })
        .collect()
}

/// Run iolens with `args` in `cwd` with a deadline; (exit code, stderr). A hang fails the test.
fn run(name: &str, args: &[impl AsRef<OsStr>], cwd: &Path) -> (Option<i32>, String) {
    run_command(name, crate::support::command(), args, cwd)
}

/// `run` with `command` (iolens, maybe under limits).
fn run_command(
    name: &str,
    mut command: Command,
    args: &[impl AsRef<OsStr>],
    cwd: &Path,
) -> (Option<i32>, String) {
    let mut child = command
        .current_dir(cwd)
        .args(args)
        .env_remove("IOLENS_SURELY_UNSET_VAR")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        stderr.read_to_string(&mut text).unwrap();
        text
    });
    let deadline = Instant::now() + TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{name}: still running after {TIMEOUT:?} (a hang)");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    (status.code(), reader.join().unwrap())
}

#[test]
fn every_broken_input_exits_2_with_one_clear_line() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad_input");
    let tmp = scratch();
    let huge = format!("[job]\nfilename=x\nsize=1m\nbs={}\n", "9".repeat(1 << 20));
    std::fs::write(tmp.path().join("huge-line.fio"), huge).unwrap();
    let cases = cases(&dir, tmp.path());
    assert!(cases.len() >= 60, "the corpus shrank to {}", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let args = ["run", "--no-history"].map(String::from);
        let args: Vec<&String> = args.iter().chain(&case.args).collect();
        let (code, stderr) = run(&case.name, &args, tmp.path());
        let lines: Vec<&str> = stderr.lines().collect();
        let problem = if code != Some(2) {
            Some(format!("exit {code:?}"))
        } else if lines.len() != 1 {
            Some(format!("{} lines", lines.len()))
        } else if !stderr.contains(&case.fragment) {
            Some(format!("no '{}'", case.fragment))
        } else if stderr.len() > 400 {
            Some(format!("a {}-byte line", stderr.len()))
        } else {
            None
        };
        if let Some(problem) = problem {
            let shown: String = stderr.chars().take(400).collect();
            failures.push(format!("{}: {problem}: {shown}", case.name));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn an_argument_that_is_not_utf8_is_named_in_one_line() {
    let tmp = scratch();
    let text = |s: &str| OsString::from(s);
    let bytes = |b: &[u8]| OsStr::from_bytes(b).to_os_string();
    let cases = [
        (vec![text("run"), bytes(b"\xff")], "argument 2", "\"\\xFF\""),
        (
            vec![
                text("run"),
                text("--no-history"),
                bytes(b"--name=\xff"),
                text("--ioengine=null"),
                text("--size=1m"),
            ],
            "argument 3",
            "\"--name=\\xFF\"",
        ),
        (
            vec![text("show-jobs"), bytes(b"job-\xfe.fio")],
            "argument 2",
            "\"job-\\xFE.fio\"",
        ),
    ];
    for (args, place, shown) in cases {
        let name = format!("{args:?}");
        let (code, stderr) = run(&name, &args, tmp.path());
        assert_eq!(code, Some(2), "{name}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{name}: {stderr}");
        assert!(
            stderr.contains(&format!("{place} is not UTF-8 text: {shown}")),
            "{name}: {stderr}"
        );
    }
}

/// A job file without an end (`/dev/zero`, directly or through `include`) is refused after a
/// few MiB, naming the file, instead of being read until the memory runs out (the run is
/// held to 1 GiB of address space so a regression fails alone).
#[test]
fn a_job_file_without_an_end_is_refused_after_a_few_mib() {
    let tmp = scratch();
    std::fs::write(tmp.path().join("inc.fio"), "[job]\ninclude /dev/zero\n").unwrap();
    let cases = [
        (
            vec!["/dev/zero"],
            "/dev/zero: cannot read the job file: it holds more than 4 MiB",
        ),
        (
            vec!["inc.fio"],
            "/dev/zero: cannot read the job file: it holds more than 4 MiB, which no job file \
             does (is it the right file?) (included at inc.fio:2)",
        ),
    ];
    for (args, fragment) in cases {
        let Some(command) = crate::support::limited(&["--as=1073741824"]) else {
            return;
        };
        let args = [vec!["run", "--no-history"], args].concat();
        let (code, stderr) = run_command(fragment, command, &args, tmp.path());
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(fragment), "{args:?}: {stderr}");
    }
}

/// 100000 nested parentheses: in a job file's arithmetic they are refused at a depth limit
/// (they overflowed the parser's stack), and on the command line (where values are not
/// arithmetic) the one line shows the value's start and length, not 100 KB.
#[test]
fn deeply_nested_parentheses_give_one_short_line() {
    let tmp = scratch();
    let deep = format!("{}1)", "(".repeat(60_000));
    std::fs::write(
        tmp.path().join("deep.fio"),
        format!("[job]\nioengine=null\nsize=1m\nbs={deep}\n"),
    )
    .unwrap();
    let wide = format!("--bs={}1)", "(".repeat(100_000));
    let cases = [
        (
            vec!["deep.fio".to_string()],
            "deep.fio:4: bs=((((",
            "… (60002 bytes): more than 100 parentheses, signs or powers nested",
        ),
        (
            vec!["--name=j".into(), "--ioengine=null".into(), wide],
            "argument 3: bs=((((",
            "… (100002 bytes)' is not a whole number",
        ),
    ];
    for (args, start, rest) in cases {
        let args = [vec!["run".into(), "--no-history".into()], args].concat();
        let (code, stderr) = run(start, &args, tmp.path());
        assert_eq!(code, Some(2), "{start}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{start}: {stderr}");
        assert!(stderr.contains(start) && stderr.contains(rest), "{stderr}");
        assert!(stderr.len() < 400, "a {}-byte line", stderr.len());
    }
}
