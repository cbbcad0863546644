//! fio's command-line spellings (one dash or two, the value after `=` or as the next
//! word, set-flags that never take one) read as fio reads them, with fio as the oracle
//! for the job options it lists; and the fio drop-in's stderr, which fio's test harness
//! wants empty for a clean run.

use crate::fio_match::{fio, iolens_json};
use crate::support::{iolens, scratch, stderr};
use serde_json::Value;
use std::path::Path;

/// Each spelling from tutorials, and the same jobs written `--key=value`.
const SPELLINGS: &[(&str, &str)] = &[
    (
        "-name=x -ioengine=null -size=64k -rw=randread -iodepth 1",
        "--name=x --ioengine=null --size=64k --rw=randread --iodepth=1",
    ),
    (
        "--name x --ioengine null --size 64k --bs 8k",
        "--name=x --ioengine=null --size=64k --bs=8k",
    ),
    (
        "-ioengine=null -size 64k -name a -bs 8k -name=b -size=32k",
        "--ioengine=null --size=64k --name=a --bs=8k --name=b --size=32k",
    ),
    (
        "-name=x -ioengine=null -size=64k -thread -group_reporting -numjobs 2 -direct 1",
        "--name=x --ioengine=null --size=64k --thread --group_reporting --numjobs=2 --direct=1",
    ),
    (
        "-name=x -ioengine=null -size=64k -norandommap -rw randread -bs=4k",
        "--name=x --ioengine=null --size=64k --norandommap --rw=randread --bs=4k",
    ),
    (
        "-name=x -ioengine=null -size=64k -rw=randrw -rwmixread 70",
        "--name=x --ioengine=null --size=64k --rw=randrw --rwmixread=70",
    ),
    (
        "-name=x -filename=f -size=64k -rw=write -bs 16k",
        "--name=x --filename=f --size=64k --rw=write --bs=16k",
    ),
    (
        "-name=x -filename f -size=64k -rw read -ioengine psync -direct 0",
        "--name=x --filename=f --size=64k --rw=read --ioengine=psync --direct=0",
    ),
    (
        "-name=x -ioengine=null -size=64k -time_based -runtime 100ms",
        "--name=x --ioengine=null --size=64k --time_based --runtime=100ms",
    ),
    (
        "-name=x -ioengine=null -size=64k -name=y -stonewall -ioengine null -size 32k",
        "--name=x --ioengine=null --size=64k --name=y --stonewall --ioengine=null --size=32k",
    ),
    (
        "--name=x --ioengine=null --size=64k --exitall --refill_buffers --bs 4k",
        "--name=x --ioengine=null --size=64k --exitall --refill_buffers --bs=4k",
    ),
    (
        "-name=x -ioengine=null -size=64k --max-jobs=16 -zero_buffers -thread=1",
        "--name=x --ioengine=null --size=64k --zero_buffers --thread=1",
    ),
    ("-thread j.fio -bs 8k", "--thread j.fio --bs=8k"),
];

/// The global options and each job's name and options, as the JSON lists them.
fn listed_options(doc: &Value) -> (Value, Vec<(Value, Value)>) {
    let jobs = doc["jobs"].as_array().expect("a jobs array");
    let jobs = jobs
        .iter()
        .map(|j| (j["jobname"].clone(), j["job options"].clone()))
        .collect();
    (doc["global options"].clone(), jobs)
}

fn with_json(line: &str) -> Vec<&str> {
    let mut args: Vec<&str> = line.split(' ').collect();
    args.push("--output-format=json");
    args
}

fn listed_by_iolens(dir: &Path, line: &str) -> (Value, Vec<(Value, Value)>) {
    let (doc, code) = iolens_json(dir, &with_json(line));
    assert_eq!(
        code, 0,
        "expected `iolens run {line}` to succeed, got exit {code}: {doc}"
    );
    listed_options(&doc)
}

#[test]
fn every_spelling_fio_accepts_gives_fios_options() {
    let dir = scratch();
    std::fs::write(dir.path().join("j.fio"), "[j]\nioengine=null\nsize=64k\n").unwrap();
    for (spelling, canonical) in SPELLINGS {
        let seen = listed_by_iolens(dir.path(), spelling);
        assert_eq!(
            seen,
            listed_by_iolens(dir.path(), canonical),
            "expected `{spelling}` (left) to give the options of `{canonical}` (right)"
        );
        if let Some(fio_doc) = fio(dir.path(), &with_json(spelling)) {
            assert_eq!(
                seen,
                listed_options(&fio_doc),
                "expected iolens (left) to list the options fio (right) lists for `{spelling}`"
            );
        }
    }
}

#[test]
fn a_one_dash_option_is_an_option_not_a_job_file() {
    let dir = scratch();
    let target = dir.path().join("x");
    let filename = format!("-filename={}", target.display());
    let out = iolens(&[
        "run",
        "--no-history",
        "-name=a",
        &filename,
        "-size=64k",
        "-rw=write",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "expected -filename= to name the target, got: {}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::metadata(&target).map(|m| m.len()).ok(),
        Some(65536),
        "expected -filename= to name the 64 KiB file written"
    );
    let typo = iolens(&["run", "--no-history", "-name=a", "-sise=64k"]);
    assert_eq!(
        (typo.status.code(), stderr(&typo).as_str()),
        (
            Some(2),
            "iolens: command line argument 2: unknown option 'sise' (did you mean 'size'?)\n"
        ),
        "expected a misspelt one-dash option to be named as an option"
    );
}

/// `DIR/bin/fio`, the drop-in, with its history in DIR.
pub(crate) fn shim(dir: &Path) -> impl Fn(&[&str]) -> std::process::Output + '_ {
    let bin = dir.join("bin");
    let install = iolens(&["install-fio-shim", &bin.display().to_string()]);
    assert_eq!(install.status.code(), Some(0), "{}", stderr(&install));
    move |args: &[&str]| {
        crate::support::isolated(bin.join("fio"))
            .env("IOLENS_DB", dir.join("history.db"))
            .current_dir(dir)
            .args(args)
            .output()
            .expect("run the fio drop-in")
    }
}

#[test]
fn the_fio_drop_in_keeps_stderr_to_what_fio_prints() {
    let dir = scratch();
    let fio = shim(dir.path());
    // psync at iodepth 4 and an ignored option: `iolens run` warns about both.
    let job = [
        "-name=x",
        "-filename=f",
        "-size=64k",
        "-ioengine=psync",
        "-iodepth",
        "4",
        "-disk_util=0",
        "--max-jobs=16",
        "--output-format=json",
    ];
    let clean = fio(&job);
    assert_eq!(
        (clean.status.code(), stderr(&clean).as_str()),
        (Some(0), ""),
        "expected a clean run of the drop-in to succeed with nothing on stderr"
    );
    assert!(
        dir.path().join("history.db").exists(),
        "expected the drop-in's run to be saved in the history all the same"
    );
    let mut noted = job.to_vec();
    noted.push("--iolens-notes");
    let said = stderr(&fio(&noted));
    assert!(
        said.contains("iodepth=4 has no effect")
            && said.contains("disk_util=0: ignored")
            && said.contains("saved in the history as run"),
        "expected --iolens-notes to bring back the warnings and the history line, got: {said}"
    );
    let mut run = vec!["run"];
    run.extend(job);
    let said = stderr(
        &crate::support::command()
            .current_dir(dir.path())
            .args(&run)
            .output()
            .unwrap(),
    );
    assert!(
        said.contains("iodepth=4 has no effect") && said.contains("saved in the history as run"),
        "expected `iolens run` to print its notes as before, got: {said}"
    );
    let failed = fio(&["-name=x", "-size=64k", "-rw=wrong"]);
    let said = stderr(&failed);
    assert!(
        failed.status.code() == Some(2) && said.lines().count() == 1 && said.contains("rw=wrong"),
        "expected an error to still print its one line (exit 2), got {:?}: {said}",
        failed.status.code()
    );
}
