//! `write_iolog` and `read_iolog` against fio 3.33 as the oracle: the logs of
//! the same job, and the replay of one tool's log by the other.

use crate::fio_match::{fio, iolens_json};
use crate::support::{command, scratch, stderr};
use std::collections::BTreeMap;
use std::path::Path;

/// One I/O line of a log: (file, action, offset, length).
type IoLine = (String, String, u64, u64);

/// A version 3 log read back: its header, its I/O lines in order, and how
/// often each (file, action) file line appears.
struct Log {
    header: String,
    ios: Vec<IoLine>,
    file_lines: BTreeMap<(String, String), usize>,
}

fn read_log(path: &Path) -> Log {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("expected a log at {}: {e}", path.display()));
    let mut lines = text.lines();
    let header = lines.next().unwrap_or_default().to_string();
    let mut log = Log {
        header,
        ios: Vec::new(),
        file_lines: BTreeMap::new(),
    };
    for line in lines {
        let f: Vec<&str> = line.split_whitespace().collect();
        match f.as_slice() {
            [_, file, action] => {
                *log.file_lines
                    .entry((file.to_string(), action.to_string()))
                    .or_default() += 1
            }
            [_, file, action, offset, len] => log.ios.push((
                file.to_string(),
                action.to_string(),
                offset.parse().expect("an offset"),
                len.parse().expect("a length"),
            )),
            _ => panic!("expected a v3 log line, saw {line:?}"),
        }
    }
    log
}

/// Runs `args` under iolens and fio in one scratch dir, each with its own
/// `write_iolog`; both logs, or None when fio cannot run.
fn both_logs(args: &[&str]) -> (Log, Option<Log>) {
    let dir = scratch();
    let mut own = args.to_vec();
    own.extend(["--output-format=json", "--write_iolog=iolens.log"]);
    let (doc, code) = iolens_json(dir.path(), &own);
    assert_eq!(
        code, 0,
        "{args:?}: expected iolens to succeed, saw exit {code}: {doc}"
    );
    let iolens = read_log(&dir.path().join("iolens.log"));
    let mut theirs = args.to_vec();
    theirs.extend(["--output-format=json", "--write_iolog=fio.log"]);
    let fio_log = fio(dir.path(), &theirs).map(|_| read_log(&dir.path().join("fio.log")));
    (iolens, fio_log)
}

#[test]
fn write_iolog_logs_a_sequential_job_as_fio_does() {
    let args = [
        "--name=b",
        "--nrfiles=2",
        "--size=128k",
        "--bs=16k",
        "--rw=write",
    ];
    let (iolens, fio) = both_logs(&args);
    assert_eq!(
        iolens.header, "fio version 3 iolog",
        "expected fio 3.33's header"
    );
    assert_eq!(
        iolens.ios.len(),
        8,
        "expected 8 writes, saw {:?}",
        iolens.ios
    );
    let Some(fio) = fio else { return };
    assert_eq!(iolens.header, fio.header, "expected fio's header line");
    assert_eq!(
        iolens.ios, fio.ios,
        "expected iolens' (file, action, offset, length) lines (left) to be fio's"
    );
    assert_eq!(
        iolens.file_lines, fio.file_lines,
        "expected iolens' add/open/close lines (left) to be fio's"
    );
}

#[test]
fn write_iolog_logs_fsyncs_as_fio_does() {
    let args = [
        "--name=s",
        "--filename=s",
        "--size=64k",
        "--bs=8k",
        "--rw=write",
        "--fsync=3",
    ];
    let (iolens, fio) = both_logs(&args);
    let syncs: Vec<&IoLine> = iolens.ios.iter().filter(|io| io.1 == "sync").collect();
    assert_eq!(
        syncs,
        [
            &("s".to_string(), "sync".to_string(), 16384, 0),
            &("s".to_string(), "sync".to_string(), 40960, 0)
        ],
        "expected a sync after every third write, with the offset before it"
    );
    if let Some(fio) = fio {
        assert_eq!(
            iolens.ios, fio.ios,
            "expected iolens' lines (left) to be fio's"
        );
    }
}

#[test]
fn write_iolog_of_a_random_job_holds_fios_blocks() {
    // The random streams differ (docs/fio-differences.md); with the random map
    // both read every block once, so the sorted lines are the same.
    let dir = scratch();
    std::fs::write(dir.path().join("r"), vec![7u8; 256 << 10]).expect("write the target");
    let args = [
        "--name=r",
        "--filename=r",
        "--bs=8k",
        "--rw=randread",
        "--randseed=7",
    ];
    let mut own = args.to_vec();
    own.extend(["--output-format=json", "--write_iolog=iolens.log"]);
    let (doc, code) = iolens_json(dir.path(), &own);
    assert_eq!(
        code, 0,
        "expected iolens to succeed, saw exit {code}: {doc}"
    );
    let mut iolens = read_log(&dir.path().join("iolens.log")).ios;
    let in_order: Vec<u64> = (0..32).map(|i| i * 8192).collect();
    let issued: Vec<u64> = iolens.iter().map(|io| io.2).collect();
    assert_ne!(
        issued, in_order,
        "expected a random order, saw the blocks in order"
    );
    iolens.sort();
    let expected: Vec<IoLine> = in_order
        .iter()
        .map(|&o| ("r".into(), "read".into(), o, 8192))
        .collect();
    assert_eq!(iolens, expected, "expected every 8k block read once");
    let mut theirs = args.to_vec();
    theirs.extend(["--output-format=json", "--write_iolog=fio.log"]);
    if fio(dir.path(), &theirs).is_some() {
        let mut fio_ios = read_log(&dir.path().join("fio.log")).ios;
        fio_ios.sort();
        assert_eq!(
            iolens, fio_ios,
            "expected the sorted lines (left) to be fio's"
        );
    }
}

#[test]
fn an_unwritable_write_iolog_fails_the_job_in_one_line() {
    let dir = scratch();
    let out = command()
        .args([
            "run",
            "--no-history",
            "--name=x",
            "--size=64k",
            "--write_iolog=no/such/dir/x.log",
        ])
        .current_dir(dir.path())
        .output()
        .expect("run iolens");
    let err = stderr(&out);
    assert_eq!(
        out.status.code(),
        Some(1),
        "expected exit 1, saw {:?}: {err}",
        out.status
    );
    assert!(
        err.contains("write_iolog=no/such/dir/x.log: cannot open it: ENOENT"),
        "expected one line naming write_iolog and the cause, saw {err}"
    );
}
