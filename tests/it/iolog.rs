//! `write_iolog` and `read_iolog` against fio 3.33 as the oracle: the logs of
//! the same job, and the replay of one tool's log by the other.

use crate::fio_match::{fio, iolens_json};
use crate::fio_wholesize::iolens_refusal;
use crate::support::scratch;
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
    let (code, err) = iolens_refusal(
        dir.path(),
        &["--name=x", "--size=64k", "--write_iolog=no/such/dir/x.log"],
    );
    assert_eq!(code, 1, "expected exit 1, saw {code}: {err}");
    assert!(
        err.contains("write_iolog=no/such/dir/x.log: cannot open it: ENOENT"),
        "expected one line naming write_iolog and the cause, saw {err}"
    );
}

/// [read, write] × [io_bytes, total_ios] of the first job, and its syncs.
fn counts(doc: &serde_json::Value) -> ([[u64; 2]; 2], u64) {
    let job = &doc["jobs"][0];
    let dir = |d: &str| ["io_bytes", "total_ios"].map(|k| job[d][k].as_u64().unwrap_or(0));
    (
        [dir("read"), dir("write")],
        job["sync"]["total_ios"].as_u64().unwrap_or(0),
    )
}

/// The bytes of each file named in `names`, in `dir`.
fn contents(dir: &Path, names: &[&str]) -> Vec<Vec<u8>> {
    names
        .iter()
        .map(|n| {
            std::fs::read(dir.join(n))
                .unwrap_or_else(|e| panic!("expected the replay to leave {n}: {e}"))
        })
        .collect()
}

/// Replays `log` under iolens (with its own `write_iolog`) and, where it runs,
/// fio, each in a fresh scratch dir with `extra` options and a copy of the
/// `files` that exist beside the log; checks that both moved the same bytes
/// and left the same `files`; iolens' log of the replay.
fn replay_both(case: &str, log: &Path, extra: &[&str], files: &[&str]) -> (Log, serde_json::Value) {
    let own_dir = scratch();
    let fio_dir = scratch();
    let beside = log.parent().expect("the log is in a directory");
    for name in files {
        if beside.join(name).exists() {
            for dir in [&own_dir, &fio_dir] {
                std::fs::copy(beside.join(name), dir.path().join(name)).expect("copy a target");
            }
        }
    }
    let log_arg = format!("--read_iolog={}", log.display());
    let mut args = vec!["--name=replay", log_arg.as_str(), "--replay_no_stall=1"];
    args.extend_from_slice(extra);
    args.push("--output-format=json");
    let mut own = args.clone();
    own.push("--write_iolog=replayed.log");
    let (doc, code) = iolens_json(own_dir.path(), &own);
    assert_eq!(
        code, 0,
        "{case}: expected iolens' replay to succeed, saw exit {code}: {doc}"
    );
    let replayed = read_log(&own_dir.path().join("replayed.log"));
    if let Some(fio_doc) = fio(fio_dir.path(), &args) {
        assert_eq!(
            counts(&doc),
            counts(&fio_doc),
            "{case}: expected iolens' [read, write] [bytes, ios] and syncs (left) to be fio's"
        );
        assert!(
            contents(own_dir.path(), files) == contents(fio_dir.path(), files),
            "{case}: expected the files iolens' replay left to be byte for byte fio's"
        );
    }
    (replayed, doc)
}

/// A job under the given tool writing its log in `dir` as `name`.
fn logged_job(dir: &Path, by_fio: bool, name: &str) -> Option<Log> {
    let log = format!("--write_iolog={name}");
    let args = [
        "--name=src",
        "--nrfiles=2",
        "--size=256k",
        "--bssplit=4k/50:16k/30:64k/20",
        "--rw=randrw",
        "--randseed=3",
        "--fsync=5",
        "--output-format=json",
        log.as_str(),
    ];
    if by_fio {
        fio(dir, &args)?;
    } else {
        let (doc, code) = iolens_json(dir, &args);
        assert_eq!(
            code, 0,
            "expected the logged job to succeed, saw exit {code}: {doc}"
        );
    }
    Some(read_log(&dir.join(name)))
}

#[test]
fn a_log_written_by_fio_is_replayed_at_its_offsets() {
    let dir = scratch();
    let Some(original) = logged_job(dir.path(), true, "fio.log") else {
        return;
    };
    let files = ["src.0.0", "src.0.1"];
    let pattern = ["--buffer_pattern=0x5a"];
    let (replayed, _) = replay_both("fio's log", &dir.path().join("fio.log"), &pattern, &files);
    assert_eq!(
        replayed.ios, original.ios,
        "expected iolens to replay fio's (file, action, offset, length) lines in order"
    );
}

#[test]
fn a_log_written_by_iolens_is_replayed_by_fio_alike() {
    let dir = scratch();
    let original = logged_job(dir.path(), false, "iolens.log").expect("iolens writes its log");
    let ios = original.ios.iter().filter(|io| io.3 > 0).count();
    let syncs = original.ios.len() - ios;
    assert!(
        ios > 20 && syncs > 0,
        "expected a mixed log with syncs, saw {:?}",
        original.ios
    );
    let files = ["src.0.0", "src.0.1"];
    let pattern = ["--buffer_pattern=0xa5"];
    let (replayed, doc) = replay_both(
        "iolens' log",
        &dir.path().join("iolens.log"),
        &pattern,
        &files,
    );
    assert_eq!(
        replayed.ios, original.ios,
        "expected the replay to issue the logged lines in order"
    );
    let (_, replayed_syncs) = counts(&doc);
    assert_eq!(
        replayed_syncs, syncs as u64,
        "expected each logged sync replayed"
    );
}

/// A log with two files, each I/O kind and a sync.
fn mixed_log(dir: &Path, trim: bool) -> std::path::PathBuf {
    let log = dir.join("mixed.log");
    let trim = if trim { "8 b trim 0 4096\n" } else { "" };
    let text = format!(
        "fio version 3 iolog\n0 a add\n0 b add\n0 a open\n0 b open\n\
         5 a write 12288 4096\n6 b write 70000 8192\n7 a read 4096 4096\n{trim}\
         9 a sync 4096 0\n10 b write 131072 4096\n11 a close\n11 b close\n"
    );
    std::fs::write(&log, text).expect("write the log");
    log
}

fn line(file: &str, action: &str, offset: u64, len: u64) -> IoLine {
    (file.to_string(), action.to_string(), offset, len)
}

#[test]
fn replay_redirect_scale_and_align_place_the_ios_as_fio_does() {
    let dir = scratch();
    let log = mixed_log(dir.path(), false);
    let redirect = ["--replay_redirect=one", "--buffer_pattern=0x3c"];
    let (replayed, _) = replay_both("replay_redirect", &log, &redirect, &["one"]);
    let expected = [
        line("one", "write", 12288, 4096),
        line("one", "write", 70000, 8192),
        line("one", "read", 4096, 4096),
        line("one", "sync", 4096, 0),
        line("one", "write", 131072, 4096),
    ];
    assert_eq!(
        replayed.ios, expected,
        "replay_redirect: expected every line on one file (right)"
    );
    let placed = [
        "--replay_scale=2",
        "--replay_align=4096",
        "--buffer_pattern=0x3c",
    ];
    let (replayed, _) = replay_both("replay_scale, replay_align", &log, &placed, &["a", "b"]);
    let expected = [
        line("a", "write", 4096, 4096),
        line("b", "write", 32768, 8192),
        line("a", "read", 0, 4096),
        line("a", "sync", 0, 0),
        line("b", "write", 65536, 4096),
    ];
    assert_eq!(
        replayed.ios, expected,
        "replay_scale=2 replay_align=4k: expected offsets halved, then rounded down to 4k (right)"
    );
}

/// fio 3.33 runs out of memory on a log of huge trims beside small writes at a high
/// iodepth (it sized each buffer by the trims); fio fixed it (upstream 397f1338, its
/// suite's t0038): buffers are sized by the blocks that carry data.
#[test]
fn a_log_of_huge_trims_and_small_writes_needs_buffers_for_the_writes_only() {
    let dir = scratch();
    let mut log = String::from("fio version 3 iolog\n1 /dev/null add\n2 /dev/null open\n");
    for i in 0..10u64 {
        log += &format!("{} /dev/null trim {} 2147483648\n", 10 + i, i * 4096);
        log += &format!("{} /dev/null write {} 4096\n", 10 + i, i * 4096);
    }
    log += "30 /dev/null close\n";
    std::fs::write(dir.path().join("big-trims.log"), log).unwrap();
    let (doc, code) = iolens_json(
        dir.path(),
        &[
            "--name=t",
            "--read_iolog=big-trims.log",
            "--ioengine=null",
            "--iodepth=128",
            "--output-format=json",
        ],
    );
    assert_eq!(code, 0, "expected the replay to succeed, saw {code}: {doc}");
    let job = &doc["jobs"][0];
    let moved = ["write", "trim"].map(|d| job[d]["io_bytes"].as_u64());
    assert_eq!(
        moved,
        [Some(40960), Some(10 * 2147483648)],
        "expected every write and trim of the log replayed"
    );
}

#[test]
fn replay_skip_leaves_out_the_kinds_it_names() {
    // fio 3.33 honours replay_skip for blktrace input only; later fio (and iolens)
    // for text logs too (docs/fio-differences.md): no fio oracle here.
    let dir = scratch();
    let log = mixed_log(dir.path(), true);
    let cases: [(&str, Vec<IoLine>); 2] = [
        (
            "trim,sync",
            vec![
                line("a", "write", 12288, 4096),
                line("b", "write", 70000, 8192),
                line("a", "read", 4096, 4096),
                line("b", "write", 131072, 4096),
            ],
        ),
        (
            "read,write",
            vec![line("b", "trim", 0, 4096), line("a", "sync", 0, 0)],
        ),
    ];
    for (skip, expected) in cases {
        let run = scratch();
        let args = [
            "--name=replay".to_string(),
            format!("--read_iolog={}", log.display()),
            format!("--replay_skip={skip}"),
            "--write_iolog=replayed.log".to_string(),
            "--output-format=json".to_string(),
        ];
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (doc, code) = iolens_json(run.path(), &args);
        assert_eq!(
            code, 0,
            "replay_skip={skip}: expected success, saw exit {code}: {doc}"
        );
        let replayed = read_log(&run.path().join("replayed.log"));
        assert_eq!(
            replayed.ios, expected,
            "replay_skip={skip}: expected these lines (right)"
        );
    }
}

#[test]
fn a_bad_log_is_refused_in_one_line_naming_its_line_and_the_fix() {
    let dir = scratch();
    let logs = [
        (
            "undeclared.log",
            "fio version 3 iolog\n0 a add\n3 b write 0 4096\n",
            "read_iolog=undeclared.log: undeclared.log:3: file \"b\" has no add line above this one (fix the line or write the log again with write_iolog)",
        ),
        (
            "short.log",
            "fio version 2 iolog\na add\na write 4096\n",
            "short.log:3: write needs an offset and a length (fix the line",
        ),
        (
            "v1.log",
            "a write 0 4096\n",
            "v1.log:1: the first line is \"a write 0 4096\", not \"fio version 2 iolog\" or \"fio version 3 iolog\"",
        ),
        ("missing.log", "", "read_iolog=none.log: cannot open none.log: ENOENT"),
    ];
    for (name, text, expected) in logs {
        let log = if text.is_empty() {
            "none.log".to_string()
        } else {
            std::fs::write(dir.path().join(name), text).expect("write the log");
            name.to_string()
        };
        let arg = format!("--read_iolog={log}");
        let (code, err) = iolens_refusal(dir.path(), &["--name=r", &arg]);
        assert_eq!(
            code, 2,
            "{name}: expected exit 2 (a configuration error), saw {code:?}: {err}"
        );
        assert!(
            err.contains(expected) && err.trim_end().lines().count() == 1,
            "{name}: expected one line containing {expected:?}, saw {err}"
        );
    }
    let (code, err) = iolens_refusal(
        dir.path(),
        &["--name=r", "--read_iolog=short.log", "--replay_align=3000"],
    );
    assert!(
        code == 2 && err.contains("replay_align=3000: must be a power of two"),
        "expected replay_align=3000 refused, saw {code:?}: {err}"
    );
}

/// blktrace's record (48 bytes, this machine's byte order): a trace as
/// `blkparse -d` writes it, built here instead of captured.
fn trace_record(time_ns: u64, sector: u64, bytes: u32, action: u32, device: u32) -> Vec<u8> {
    let mut raw = Vec::with_capacity(48);
    raw.extend(0x6561_7407u32.to_ne_bytes());
    raw.extend(0u32.to_ne_bytes());
    raw.extend(time_ns.to_ne_bytes());
    raw.extend(sector.to_ne_bytes());
    raw.extend(bytes.to_ne_bytes());
    raw.extend(action.to_ne_bytes());
    raw.extend(1234u32.to_ne_bytes());
    raw.extend(device.to_ne_bytes());
    raw.extend([0u8; 8]);
    raw
}

/// The action word of a queue ('Q') event, a completion ('C') and a notification.
const QUEUE_READ: u32 = 1 | (1 << 4) << 16;
const QUEUE_WRITE: u32 = 1 | (1 << 4 | 1 << 1) << 16;
const QUEUE_FLUSH: u32 = 1 | (1 << 4 | 1 << 1 | 1 << 2) << 16;
const COMPLETE_WRITE: u32 = 8 | (1 << 7 | 1 << 1) << 16;
const NOTIFY: u32 = 2 | (1 << 10) << 16;

/// A trace of writes of several sizes, reads of what they wrote, a flush, and
/// the events replay leaves out, on `device`; with the lines a replay issues.
fn synthetic_trace(device: u32, name: &str) -> (Vec<u8>, Vec<IoLine>) {
    let mut trace = Vec::new();
    let mut lines = Vec::new();
    let mut t = 1_000_000u64;
    for (i, (sector, bytes)) in [
        (0u64, 4096u32),
        (8, 8192),
        (64, 65536),
        (24, 512),
        (200, 16384),
    ]
    .into_iter()
    .enumerate()
    {
        trace.extend(trace_record(t, sector, bytes, QUEUE_WRITE, device));
        trace.extend(trace_record(
            t + 50_000,
            sector,
            bytes,
            COMPLETE_WRITE,
            device,
        ));
        lines.push(line(name, "write", sector * 512, u64::from(bytes)));
        if i == 2 {
            let mut note = trace_record(t + 60_000, 0, 0, NOTIFY, device);
            note[46..48].copy_from_slice(&6u16.to_ne_bytes());
            note.extend(b"fio-ok");
            trace.extend(note);
            trace.extend(trace_record(t + 70_000, 0, 0, QUEUE_FLUSH, device));
            lines.push(line(name, "sync", 64 * 512, 0));
        }
        t += 100_000;
    }
    for (sector, bytes) in [(8u64, 4096u32), (64, 32768), (200, 16384)] {
        trace.extend(trace_record(t, sector, bytes, QUEUE_READ, device));
        lines.push(line(name, "read", sector * 512, u64::from(bytes)));
        t += 100_000;
    }
    (trace, lines)
}

#[test]
fn a_blktrace_trace_is_replayed_as_fio_replays_it() {
    let dir = scratch();
    let (trace, expected) = synthetic_trace(8 << 20, "t");
    std::fs::write(dir.path().join("trace.bin"), trace).expect("write the trace");
    let extra = ["--replay_redirect=t", "--buffer_pattern=0x77"];
    let (replayed, doc) = replay_both("blktrace", &dir.path().join("trace.bin"), &extra, &["t"]);
    assert_eq!(
        replayed.ios, expected,
        "expected the trace's queued writes, flush and reads at sector × 512 (right)"
    );
    let (bytes, syncs) = counts(&doc);
    assert_eq!(
        (bytes, syncs),
        ([[53248, 3], [94720, 5]], 1),
        "expected 3 reads and 5 writes of the trace's bytes and one flush"
    );
}

#[test]
fn a_blktrace_trace_of_a_loop_device_is_replayed_on_it() {
    let Some(dev) = crate::support::LoopDevice::create(1 << 20) else {
        return;
    };
    use std::os::unix::fs::MetadataExt;
    let rdev = std::fs::metadata(&dev.device)
        .expect("stat the loop device")
        .rdev();
    let (major, minor) = (
        ((rdev >> 8) & 0xfff) as u32,
        ((rdev & 0xff) | ((rdev >> 12) & 0xfff00)) as u32,
    );
    let dir = scratch();
    let (trace, expected) = synthetic_trace(major << 20 | minor, dev.path());
    std::fs::write(dir.path().join("trace.bin"), trace).expect("write the trace");
    let log_arg = format!("--read_iolog={}", dir.path().join("trace.bin").display());
    let args = [
        "--name=replay",
        log_arg.as_str(),
        "--replay_no_stall=1",
        "--buffer_pattern=0x77",
        "--output-format=json",
        "--write_iolog=replayed.log",
    ];
    let (doc, code) = iolens_json(dir.path(), &args);
    assert_eq!(
        code,
        0,
        "expected the replay on {} to succeed, saw exit {code}: {doc}",
        dev.path()
    );
    let replayed = read_log(&dir.path().join("replayed.log"));
    assert_eq!(
        replayed.ios, expected,
        "expected the trace replayed on the device its numbers name (right)"
    );
    let written = std::fs::read(dev.backing()).expect("read the loop device's backing file");
    assert!(
        written[..4096].iter().all(|&b| b == 0x77)
            && written[4096..8192].iter().all(|&b| b == 0x77),
        "expected the first two 4k blocks of the device written with the pattern"
    );
    std::fs::write(dev.backing(), vec![0u8; 1 << 20]).expect("zero the device again");
    if let Some(fio_doc) = fio(dir.path(), &args[..5]) {
        assert_eq!(
            counts(&doc),
            counts(&fio_doc),
            "expected iolens' [read, write] [bytes, ios] and syncs (left) to be fio's"
        );
        let fio_written = std::fs::read(dev.backing()).expect("read the backing file");
        assert!(
            written == fio_written,
            "expected iolens to leave the device as fio's replay of the trace does"
        );
    }
}

#[test]
fn the_logged_times_are_kept_and_scaled() {
    // Two writes 300 ms apart in the log: the replay takes at least that
    // long, and at replay_time_scale=50 (half the rate) at least twice that.
    let dir = scratch();
    std::fs::write(
        dir.path().join("slow.log"),
        "fio version 3 iolog\n0 t add\n0 t open\n0 t write 0 4096\n300000 t write 4096 4096\n300000 t close\n",
    )
    .expect("write the log");
    for (scale, at_least_ms) in [("100", 300), ("50", 600)] {
        let arg = format!("--replay_time_scale={scale}");
        let (doc, code) = iolens_json(
            dir.path(),
            &[
                "--name=r",
                "--read_iolog=slow.log",
                &arg,
                "--output-format=json",
            ],
        );
        assert_eq!(
            code, 0,
            "expected the replay to succeed, saw exit {code}: {doc}"
        );
        let runtime_ms = doc["jobs"][0]["write"]["runtime"].as_u64().unwrap_or(0);
        assert!(
            runtime_ms >= at_least_ms,
            "replay_time_scale={scale}: expected the second write at least {at_least_ms} ms after the first, saw a {runtime_ms} ms run"
        );
    }
}

#[test]
fn merged_blktrace_traces_are_replayed_in_time_order() {
    // fio 3.33's merge reads no trace (fixed in later fio): iolens merges, and
    // fio replays the merged trace as the oracle.
    let dir = scratch();
    let trace = |events: &[(u64, u64)]| -> Vec<u8> {
        events
            .iter()
            .flat_map(|&(time_ms, sector)| {
                trace_record(time_ms * 1_000_000, sector, 4096, QUEUE_WRITE, 8 << 20)
            })
            .collect()
    };
    std::fs::write(dir.path().join("a.bin"), trace(&[(0, 0), (2, 8), (4, 16)]))
        .expect("write a trace");
    std::fs::write(dir.path().join("b.bin"), trace(&[(1, 100), (3, 108)])).expect("write a trace");
    let args = [
        "--name=merge",
        "--read_iolog=a.bin:b.bin",
        "--merge_blktrace_file=merged.bin",
        "--merge_blktrace_scalars=100:50",
        "--merge_blktrace_iters=2:1",
        "--replay_redirect=t",
        "--replay_no_stall=1",
        "--output-format=json",
        "--write_iolog=replayed.log",
    ];
    let (doc, code) = iolens_json(dir.path(), &args);
    assert_eq!(
        code, 0,
        "expected the merged replay to succeed, saw exit {code}: {doc}"
    );
    let sectors: Vec<u64> = read_log(&dir.path().join("replayed.log"))
        .ios
        .iter()
        .map(|io| io.2 / 512)
        .collect();
    assert_eq!(
        sectors,
        [0, 100, 108, 8, 16, 0, 8, 16],
        "expected b's writes at half their times between a's, then a's second pass"
    );
    let (replayed, _) = replay_both(
        "merged trace",
        &dir.path().join("merged.bin"),
        &["--replay_redirect=t", "--buffer_pattern=0x21"],
        &["t"],
    );
    let offsets: Vec<u64> = replayed.ios.iter().map(|io| io.2 / 512).collect();
    assert_eq!(
        offsets, sectors,
        "expected the merged trace to replay alike on its own"
    );
    let (code, err) = iolens_refusal(
        dir.path(),
        &[
            "--name=m",
            "--read_iolog=a.bin:b.bin",
            "--merge_blktrace_file=m.bin",
            "--merge_blktrace_iters=2",
        ],
    );
    assert!(
        code == 2
            && err.contains(
                "merge_blktrace_iters=2: gives 1 values for the 2 traces read_iolog lists"
            ),
        "expected a list of the wrong length refused, saw {code}: {err}"
    );
}

#[test]
fn readonly_refuses_a_replay_that_writes_and_runs_its_reads_alone() {
    let dir = scratch();
    let log = mixed_log(dir.path(), false);
    for name in ["a", "b"] {
        std::fs::write(dir.path().join(name), vec![1u8; 256 << 10]).expect("write a target");
    }
    let log_arg = format!("--read_iolog={}", log.display());
    let (code, err) = iolens_refusal(dir.path(), &["--readonly", "--name=r", &log_arg]);
    assert!(
        code == 2
            && err.contains(
                "replays writes or trims, which --readonly forbids; add replay_skip=write,trim"
            ),
        "expected the writing replay refused with the fix, saw {code}: {err}"
    );
    let (doc, code) = iolens_json(
        dir.path(),
        &[
            "--readonly",
            "--name=r",
            &log_arg,
            "--replay_skip=write,trim",
            "--output-format=json",
        ],
    );
    assert_eq!(
        code, 0,
        "expected the reads replayed, saw exit {code}: {doc}"
    );
    assert_eq!(
        counts(&doc),
        ([[4096, 1], [0, 0]], 1),
        "expected the log's one read and its sync, and no write"
    );
}
