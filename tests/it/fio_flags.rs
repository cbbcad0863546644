//! Every flag `fio --help` lists is one iolens knows: it acts on it, accepts and
//! ignores it, or refuses it saying why (never "unknown option"); and the
//! "did you mean" of an unknown option names only close names.

use crate::support::{command, isolated, scratch, stderr};
use std::path::Path;

/// What iolens does with a flag.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Outcome {
    /// Exit 0, as fio.
    Accepted,
    /// Exit 2 with a reason that names the flag (fio's network mode, self-tests,
    /// triggers; `--inflate-log` here for its missing file).
    Refused,
}
use Outcome::*;

/// Each flag of fio 3.33's `--help`, with arguments that suit a small null job.
const HELP_FLAGS: &[(&str, &[&str], Outcome)] = &[
    ("debug", &["--debug=parse"], Accepted),
    ("parse-only", &["--parse-only"], Accepted),
    ("merge-blktrace-only", &["--merge-blktrace-only"], Accepted),
    ("output", &["--output=report.txt"], Accepted),
    ("bandwidth-log", &["--bandwidth-log"], Accepted),
    ("minimal", &["--minimal"], Accepted),
    ("output-format", &["--output-format=json"], Accepted),
    ("terse-version", &["--terse-version=3"], Accepted),
    ("version", &["--version"], Accepted),
    ("help", &["--help"], Accepted),
    ("cpuclock-test", &["--cpuclock-test"], Refused),
    ("crctest", &["--crctest=crc32c"], Refused),
    ("cmdhelp", &["--cmdhelp=bs"], Accepted),
    ("enghelp", &["--enghelp=io_uring"], Accepted),
    ("showcmd", &["--showcmd"], Accepted),
    ("eta", &["--eta=never"], Accepted),
    ("eta-newline", &["--eta-newline=1"], Accepted),
    ("status-interval", &["--status-interval=1"], Accepted),
    ("readonly", &["--readonly"], Accepted),
    ("section", &["--section=x", "x.fio"], Accepted),
    ("alloc-size", &["--alloc-size=1024"], Accepted),
    ("warnings-fatal", &["--warnings-fatal"], Accepted),
    ("max-jobs", &["--max-jobs=4"], Accepted),
    ("server", &["--server"], Refused),
    ("daemonize", &["--daemonize=fio.pid"], Refused),
    ("client", &["--client=localhost"], Refused),
    ("remote-config", &["--remote-config=x.fio"], Refused),
    ("idle-prof", &["--idle-prof=system"], Accepted),
    ("inflate-log", &["--inflate-log=missing.log.fz"], Refused),
    ("trigger-file", &["--trigger-file=t"], Refused),
    ("trigger-timeout", &["--trigger-timeout=10"], Refused),
    ("trigger", &["--trigger=true"], Refused),
    ("trigger-remote", &["--trigger-remote=true"], Refused),
    ("aux-path", &["--aux-path=."], Accepted),
];

const JOB: &[&str] = &[
    "--name=x",
    "--ioengine=null",
    "--size=64k",
    "--output-format=terse",
];

fn run(
    mut program: std::process::Command,
    dir: &Path,
    extra: &[&str],
) -> std::io::Result<std::process::Output> {
    program.args(JOB).args(extra).current_dir(dir).output()
}

fn iolens_run(dir: &Path, extra: &[&str]) -> std::process::Output {
    let mut iolens = command();
    iolens.args(["run", "--no-history"]);
    run(iolens, dir, extra).expect("run iolens")
}

/// The flags `fio --help` lists; None without fio.
fn fio_help_flags() -> Option<Vec<String>> {
    let out = isolated("fio").arg("--help").output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let flags = text
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("--"))
        .map(|l| {
            l.chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect()
        })
        .collect();
    Some(flags)
}

#[test]
fn every_flag_of_fios_help_is_known() {
    if let Some(listed) = fio_help_flags() {
        for flag in &listed {
            assert!(
                HELP_FLAGS.iter().any(|(name, _, _)| name == flag),
                "fio --help lists --{flag}, which this test does not try"
            );
        }
    }
    let dir = scratch();
    std::fs::write(dir.path().join("x.fio"), "[x]\nioengine=null\nsize=64k\n").unwrap();
    for &(name, extra, outcome) in HELP_FLAGS {
        let ours = iolens_run(dir.path(), extra);
        let said = stderr(&ours);
        assert!(
            !said.contains("unknown option"),
            "--{name}: iolens does not know it: {said}"
        );
        match outcome {
            Accepted => {
                assert_eq!(ours.status.code(), Some(0), "--{name}: {said}");
                // fio as the oracle, but never for a flag that would start a server
                if let Ok(theirs) = run(isolated("fio"), dir.path(), extra) {
                    assert!(theirs.status.success(), "--{name}: fio did not accept it");
                }
            }
            Refused => {
                assert_eq!(ours.status.code(), Some(2), "--{name}: {said}");
                assert!(
                    said.contains(name),
                    "--{name}: the refusal names it: {said}"
                );
            }
        }
    }
}

#[test]
fn fios_short_version_flag_and_the_version_line() {
    let dir = scratch();
    for flag in ["-v", "--version"] {
        let out = command()
            .args(["run", flag])
            .current_dir(dir.path())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.starts_with("fio-3.33-iolens-"),
            "{flag}: {text}{}",
            stderr(&out)
        );
    }
}

#[test]
fn showcmd_turns_a_job_file_into_fios_command_line() {
    let dir = scratch();
    let job = "[global]\nrw=randread\nsize=1m\n\n[a]\nfilename=f.dat\nbs=8k\n\n\
               [b]\nstonewall\ndescription=two words\nnumjobs=2\n";
    std::fs::write(dir.path().join("j.fio"), job).unwrap();
    let out = command()
        .args(["run", "--showcmd", "j.fio"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let ours = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        ours,
        "fio --rw=randread --size=1m --name=a --bs=8k --filename=f.dat --name=b --stonewall \
         --description=\"two words\" --numjobs=2 \n",
        "{}",
        stderr(&out)
    );
    if let Ok(theirs) = isolated("fio")
        .args(["--showcmd", "j.fio"])
        .current_dir(dir.path())
        .output()
    {
        assert_eq!(
            ours,
            String::from_utf8_lossy(&theirs.stdout),
            "fio's --showcmd"
        );
    }
}

#[test]
fn enghelp_lists_engines_and_their_options() {
    let ask = |flag: &str| {
        let out = command().args(["run", flag]).output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr(&out),
        )
    };
    let (code, list, _) = ask("--enghelp");
    assert_eq!(code, Some(0));
    assert!(
        list.starts_with("Available IO engines:\n") && list.contains("\tio_uring\n"),
        "{list}"
    );
    let (_, own, _) = ask("--enghelp=io_uring");
    assert!(own.lines().any(|l| l.starts_with("hipri ")), "{own}");
    let (_, one, _) = ask("--enghelp=io_uring,hipri");
    assert!(one.contains("hipri:") && one.contains("type:"), "{one}");
    let (code, _, said) = ask("--enghelp=nosuch");
    assert_eq!(code, Some(2), "{said}");
}

#[test]
fn did_you_mean_names_close_options_only() {
    let dir = scratch();
    let unknown = |flag: &str| {
        let out = iolens_run(dir.path(), &[flag]);
        assert_eq!(out.status.code(), Some(2));
        stderr(&out)
    };
    let said = unknown("--blocksiz=4k");
    assert!(said.contains("(did you mean 'blocksize'?)"), "{said}");
    for far in ["--zzzqqq=1", "--alloc-sizes=1", "--eta-newlines=1"] {
        let said = unknown(far);
        assert!(
            said.contains("unknown option") && !said.contains("did you mean"),
            "{far}: {said}"
        );
    }
}

#[test]
fn ignored_flags_say_so_and_warnings_fatal_stops_before_the_run() {
    let dir = scratch();
    let out = iolens_run(dir.path(), &["--eta-newline=2", "--alloc-size=1024"]);
    let said = stderr(&out);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("--eta-newline is accepted and ignored")
            && said.contains("--alloc-size is accepted and ignored"),
        "{said}"
    );
    let out = command()
        .args(["run", "--no-history", "--warnings-fatal"])
        .args(["--name=x", "--ioengine=psync", "--iodepth=4", "--size=64k"])
        .arg("--filename=w.dat")
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("--warnings-fatal"),
        "{}",
        stderr(&out)
    );
    assert!(
        !dir.path().join("w.dat").exists(),
        "expected nothing to run"
    );
}
