//! The clients as tests: programs people drive fio with — fio-plot's `bench-fio` and `fio-plot`
//! (PyPI), cdmpy (PyPI), fio's own tools/ scripts as Debian ships them, and KDiskMark's command
//! lines and JSON reads — run once with fio 3.33 and once with iolens installed as `fio` (the
//! shim first in PATH), and what they produce is compared: exit codes, the files written, JSON
//! keys, CSV/log columns and row counts, values within noise.
//!
//! The Python clients come from PyPI into a virtual environment under the build's temporary
//! directory (`tests/clients/venv`, made once and kept; `IOLENS_CLIENTS_VENV` names another).
//! A client that cannot be installed, a missing fio 3.33 or gnuplot skips its test with the
//! reason on stderr. Every difference a test finds is listed in its failure message.

use crate::support::{isolated, scratch};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::fmt::Debug;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

macro_rules! need {
    ($found:expr) => {
        match $found {
            Ok(found) => found,
            Err(why) => {
                eprintln!("skipped: {why}");
                return;
            }
        }
    };
}

/// A scratch directory for one client test, kept (and named on stderr) when
/// `IOLENS_CLIENTS_KEEP` is set, to look at what both sides wrote.
fn root() -> tempfile::TempDir {
    let mut root = scratch();
    if std::env::var_os("IOLENS_CLIENTS_KEEP").is_some() {
        root.disable_cleanup(true);
        eprintln!("kept: {}", root.path().display());
    }
    root
}

fn clients_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients")
}

/// A fio on the PATH that is fio 3.33 itself (not a shim).
fn real_fio() -> Result<PathBuf, String> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join("fio"))
        .find(|fio| {
            fio.is_file()
                && isolated(fio)
                    .arg("--version")
                    .output()
                    .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "fio-3.33")
        })
        .ok_or_else(|| "no fio 3.33 on the PATH (apt-get install fio)".to_string())
}

/// The virtual environment with fio-plot, cdmpy and pandas, made on first use.
fn venv() -> Result<&'static Path, String> {
    static VENV: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    VENV.get_or_init(|| {
        let dir = std::env::var_os("IOLENS_CLIENTS_VENV")
            .map(PathBuf::from)
            .unwrap_or_else(|| Path::new(env!("CARGO_TARGET_TMPDIR")).join("clients-venv"));
        let out = isolated("sh")
            .arg(clients_dir().join("venv"))
            .arg(&dir)
            .output()
            .map_err(|e| format!("cannot run tests/clients/venv: {e}"))?;
        if !out.status.success() {
            let why = String::from_utf8_lossy(&out.stderr);
            let tail: Vec<&str> = why.lines().rev().take(5).collect();
            return Err(format!(
                "the Python clients (fio-plot, cdmpy from PyPI) could not be installed into {}: {}",
                dir.display(),
                tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
            ));
        }
        Ok(dir)
    })
    .as_ref()
    .map(PathBuf::as_path)
    .map_err(Clone::clone)
}

fn gnuplot() -> Result<(), String> {
    let found = Command::new("gnuplot")
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success());
    found
        .then_some(())
        .ok_or_else(|| "gnuplot not installed (apt-get install gnuplot-nox)".to_string())
}

/// One side of the comparison: a directory of its own and a `fio` first in its PATH.
struct Side {
    name: &'static str,
    dir: PathBuf,
    bin: PathBuf,
}

/// fio 3.33 and iolens as `fio`, each with a directory under `root`.
fn sides(root: &Path) -> Result<[Side; 2], String> {
    let fio = real_fio()?;
    let make = |name: &'static str| {
        let dir = root.join(name);
        std::fs::create_dir_all(dir.join("tmp")).unwrap();
        Side {
            name,
            bin: dir.join("bin"),
            dir,
        }
    };
    let (real, ours) = (make("fio"), make("iolens"));
    std::fs::create_dir_all(&real.bin).unwrap();
    std::os::unix::fs::symlink(&fio, real.bin.join("fio")).unwrap();
    let install = crate::support::iolens(&["install-fio-shim", &ours.bin.display().to_string()]);
    assert!(
        install.status.success(),
        "{}",
        crate::support::stderr(&install)
    );
    Ok([real, ours])
}

impl Side {
    /// `program` run as a client runs it: this side's `fio` first in PATH, HOME and TMPDIR
    /// in scratch directories, charts drawn without a display.
    fn command(&self, program: impl AsRef<OsStr>) -> Command {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let paths = std::iter::once(self.bin.clone()).chain(std::env::split_paths(&path));
        let mut command = isolated(program);
        command
            .env("PATH", std::env::join_paths(paths).unwrap())
            .env("IOLENS_DB", self.dir.join("history.db"))
            .env("TMPDIR", self.dir.join("tmp"))
            .env("BENCH_FIO_JOB_DIR", self.dir.join("tmp"))
            .env("MPLBACKEND", "Agg")
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .current_dir(&self.dir);
        command
    }

    fn run(&self, program: impl AsRef<OsStr>, args: &[&str]) -> Output {
        let program = program.as_ref().to_owned();
        self.command(&program)
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("run {program:?}: {e}"))
    }
}

/// What a run left for the comparison, with its stdout and stderr for the message.
struct Ran {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl From<Output> for Ran {
    fn from(out: Output) -> Ran {
        Ran {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(6)..].join(" ⏎ ")
}

/// The differences found between fio's side and iolens' side, all reported at once.
#[derive(Default)]
struct Diffs(Vec<String>);

impl Diffs {
    fn same<T: PartialEq + Debug>(&mut self, what: &str, fio: T, iolens: T) {
        if fio != iolens {
            self.0
                .push(format!("{what}: fio {fio:?}, iolens {iolens:?}"));
        }
    }

    fn check(&mut self, ok: bool, what: impl FnOnce() -> String) {
        if !ok {
            self.0.push(what());
        }
    }

    /// Same exit code; fio's own run must succeed (else the test itself is wrong).
    fn exits(&mut self, what: &str, fio: &Ran, iolens: &Ran) -> bool {
        assert_eq!(
            fio.code,
            Some(0),
            "{what} fails with fio 3.33 itself: {} {}",
            tail(&fio.stdout),
            tail(&fio.stderr)
        );
        let same = fio.code == iolens.code;
        self.check(same, || {
            format!(
                "{what}: exit code fio {:?}, iolens {:?}; iolens' stdout: {}; stderr: {}",
                fio.code,
                iolens.code,
                tail(&iolens.stdout),
                tail(&iolens.stderr)
            )
        });
        same
    }

    /// A client that fio 3.33's own output breaks: iolens' output must break it the same way
    /// (same exit code, same last line of the error).
    fn same_outcome(&mut self, what: &str, fio: &Ran, iolens: &Ran) -> bool {
        if fio.code == Some(0) {
            return self.exits(what, fio, iolens);
        }
        eprintln!(
            "note: {what} fails on fio 3.33's own output: {}",
            tail(&fio.stderr)
        );
        let last = |r: &Ran| r.stderr.lines().last().unwrap_or("").to_string();
        self.same(&format!("{what}: exit code"), fio.code, iolens.code);
        self.same(&format!("{what}: error"), last(fio), last(iolens));
        false
    }

    /// The two documents have the same keys everywhere, and the same number of jobs.
    fn json_keys(&mut self, what: &str, fio: &Value, iolens: &Value) {
        match (fio, iolens) {
            (Value::Object(a), Value::Object(b)) => {
                let (ka, kb): (BTreeSet<&String>, BTreeSet<&String>) =
                    (a.keys().collect(), b.keys().collect());
                let only_fio: Vec<_> = ka.difference(&kb).collect();
                // iolens' documented additions ("iolens": findings, "cpu_ns_per_io") are keys
                // no fio client reads.
                let only_iolens: Vec<_> = kb
                    .difference(&ka)
                    .filter(|k| !matches!(k.as_str(), "iolens" | "cpu_ns_per_io"))
                    .collect();
                self.check(only_fio.is_empty() && only_iolens.is_empty(), || {
                    format!(
                        "{what}: keys only fio has {only_fio:?}, only iolens has {only_iolens:?}"
                    )
                });
                for key in ka.intersection(&kb) {
                    self.json_keys(&format!("{what}.{key}"), &a[*key], &b[*key]);
                }
            }
            (Value::Array(a), Value::Array(b)) => {
                if what.ends_with(".jobs") || what.ends_with(".disk_util") {
                    self.same(&format!("{what} length"), a.len(), b.len());
                }
                for (i, (x, y)) in a.iter().zip(b).enumerate() {
                    self.json_keys(&format!("{what}[{i}]"), x, y);
                }
            }
            (a, b) => {
                let kind = |v: &Value| match v {
                    Value::Null => "null",
                    Value::Bool(_) => "bool",
                    Value::Number(n) if n.is_f64() => "float",
                    Value::Number(_) => "integer",
                    Value::String(_) => "string",
                    _ => "container",
                };
                // fio prints whole numbers as integers and fractions as floats; a JSON reader
                // that takes an int (KDiskMark's toInt) gets 0 from a float, so the kind counts.
                self.check(
                    kind(a) == kind(b) || matches!((kind(a), kind(b)), ("float", "integer")),
                    || {
                        format!(
                            "{what}: fio has a {} ({a}), iolens a {} ({b})",
                            kind(a),
                            kind(b)
                        )
                    },
                );
            }
        }
    }

    /// Two measurements of the same workload agree within `factor` (noise on a shared host).
    fn assert_none(self, client: &str) {
        assert!(
            self.0.is_empty(),
            "{client} with iolens as fio differs from fio 3.33 ({} differences):\n  - {}",
            self.0.len(),
            self.0.join("\n  - ")
        );
    }
}

/// A JSON document as `path = value` lines, to list where two shapes differ.
fn flatten(doc: Option<&Value>) -> BTreeSet<String> {
    fn walk(path: String, value: &Value, lines: &mut BTreeSet<String>) {
        match value {
            Value::Object(map) => {
                for (key, item) in map {
                    walk(format!("{path}.{key}"), item, lines);
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    walk(format!("{path}[{i}]"), item, lines);
                }
            }
            // iolens' documented additions, which fio-plot carries along unread.
            _ if path.contains(".iolens.") || path.ends_with(".cpu_ns_per_io") => {}
            leaf => {
                lines.insert(format!("{path} = {leaf}"));
            }
        }
    }
    let mut lines = BTreeSet::new();
    match doc {
        Some(doc) => walk(String::new(), doc, &mut lines),
        None => {
            lines.insert("(no data: fio-plot wrote no shape)".to_string());
        }
    }
    lines
}

/// Every file under `dir`, as paths relative to it.
fn files(dir: &Path) -> BTreeSet<String> {
    fn walk(base: &Path, dir: &Path, found: &mut BTreeSet<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(base, &path, found);
            } else {
                found.insert(path.strip_prefix(base).unwrap().display().to_string());
            }
        }
    }
    let mut found = BTreeSet::new();
    walk(dir, dir, &mut found);
    found
}

fn read_json(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{} is not JSON: {e}", path.display()))
}

/// Rows and the column counts seen in a fio log or a CSV (`sep`-separated).
fn table(path: &Path, sep: &str) -> (usize, BTreeSet<usize>) {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let rows: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let cols = rows.iter().map(|r| r.split(sep).count()).collect();
    (rows.len(), cols)
}

/// The two sides' files must be the same list.
fn same_files(diffs: &mut Diffs, what: &str, fio: &BTreeSet<String>, iolens: &BTreeSet<String>) {
    let only_fio: Vec<_> = fio.difference(iolens).collect();
    let only_iolens: Vec<_> = iolens.difference(fio).collect();
    diffs.check(only_fio.is_empty() && only_iolens.is_empty(), || {
        format!("{what}: files only fio wrote {only_fio:?}, only iolens wrote {only_iolens:?}")
    });
}

/// How late (ms) a job on a machine busy with other work may end.
const LATE_MS: u64 = 50;

/// The time (ms, first column) of a fio log's last row.
fn last_time(path: &Path) -> Option<u64> {
    let text = std::fs::read_to_string(path).ok()?;
    let last = text.lines().rfind(|l| !l.trim().is_empty())?;
    last.split(',').next()?.trim().parse().ok()
}

/// Compares the fio logs two sides wrote under the same names: the same columns, a row count
/// within one (fio itself writes 3 or 4 averaged rows in a 1 s run, by where the last
/// interval ends), and no row later than fio's last row or the 1 s runtime (give or take
/// `LATE_MS`, as a busy machine ends a job late).
fn same_logs(diffs: &mut Diffs, what: &str, fio: &Path, iolens: &Path, names: &BTreeSet<String>) {
    for name in names.iter().filter(|n| n.ends_with(".log")) {
        let (a, b) = (table(&fio.join(name), ","), table(&iolens.join(name), ","));
        diffs.same(&format!("{what} {name} columns"), &a.1, &b.1);
        diffs.check(a.0.abs_diff(b.0) <= 1, || {
            format!("{what} {name} rows: fio {}, iolens {}", a.0, b.0)
        });
        let (x, y) = (last_time(&fio.join(name)), last_time(&iolens.join(name)));
        diffs.check(y <= x.max(Some(1000)).map(|ms| ms + LATE_MS), || {
            format!("{what} {name} last row at ms: fio {x:?}, iolens {y:?}")
        });
    }
}

/// A bench-fio target file of `size` bytes in the side's directory.
fn bench_target(side: &Side, size: usize) -> PathBuf {
    let target = side.dir.join("target.dat");
    std::fs::write(&target, vec![0u8; size]).unwrap();
    target
}

/// bench-fio with `args` on `target`, its job file kept in the side's scratch directory
/// (tests/clients/bench_fio_here.py).
fn bench_fio(side: &Side, venv: &Path, target: &Path, args: &[&str]) -> Ran {
    let target = target.display().to_string();
    let out = side.dir.join("out").display().to_string();
    let script = clients_dir()
        .join("bench_fio_here.py")
        .display()
        .to_string();
    let mut all = vec![
        script.as_str(),
        "--target",
        &target,
        "--type",
        "file",
        "--output",
        &out,
    ];
    all.extend_from_slice(args);
    side.run(venv.join("bin/python"), &all).into()
}

/// Compares the JSON documents bench-fio left (same names on both sides).
fn same_bench_json(diffs: &mut Diffs, names: &BTreeSet<String>, fio: &Path, iolens: &Path) {
    for name in names.iter().filter(|n| n.ends_with(".json")) {
        let (a, b) = match (read_json(&fio.join(name)), read_json(&iolens.join(name))) {
            (Ok(a), Ok(b)) => (a, b),
            (a, b) => {
                diffs.check(a.is_ok(), || format!("fio's {name}: {:?}", a.err()));
                diffs.check(b.is_ok(), || format!("iolens' {name}: {:?}", b.err()));
                continue;
            }
        };
        diffs.json_keys(name, &a, &b);
        let (ja, jb) = (&a["jobs"][0], &b["jobs"][0]);
        // The options name each side's own directory.
        let options = |j: &Value, dir: &Path| {
            let side = dir.ancestors().nth(2).unwrap().display().to_string();
            j["job options"].to_string().replace(&side, "SIDE")
        };
        diffs.same(
            &format!("{name} job options"),
            options(ja, fio),
            options(jb, iolens),
        );
        let ss = ["ss", "duration"];
        for key in ss {
            diffs.same(
                &format!("{name} steadystate.{key}"),
                &ja["steadystate"][key],
                &jb["steadystate"][key],
            );
        }
        for series in ["iops", "bw"] {
            let len = |j: &Value| j["steadystate"]["data"][series].as_array().map(Vec::len);
            diffs.same(
                &format!("{name} steadystate.data.{series} samples"),
                len(ja),
                len(jb),
            );
        }
        for ddir in ["read", "write"] {
            let io = |j: &Value| j[ddir]["io_bytes"].as_u64().unwrap_or(0);
            // speeds on a shared machine are not compared: both moved data or neither
            diffs.same(&format!("{name} {ddir} moved data"), io(ja) > 0, io(jb) > 0);
        }
    }
}

/// Runs bench-fio with `args` on both sides (a 4 MiB target file each) and compares exit
/// codes, the files written under the output directory, the JSON documents and the logs.
/// Returns each side's output directory for the target, and whether both runs succeeded.
fn bench_fio_both(
    diffs: &mut Diffs,
    venv: &Path,
    sides: &[Side; 2],
    what: &str,
    args: &[&str],
) -> ([PathBuf; 2], bool) {
    let run = |side: &Side| {
        let target = bench_target(side, 4 << 20);
        let ran = bench_fio(side, venv, &target, args);
        (ran, side.dir.join("out").join(target.file_name().unwrap()))
    };
    let ((fio, fio_out), (ours, our_out)) = (run(&sides[0]), run(&sides[1]));
    let ok = diffs.exits(what, &fio, &ours);
    let (a, b) = (files(&fio_out), files(&our_out));
    same_files(diffs, &format!("{what}: output"), &a, &b);
    let both: BTreeSet<String> = a.intersection(&b).cloned().collect();
    same_bench_json(diffs, &both, &fio_out, &our_out);
    same_logs(diffs, what, &fio_out, &our_out, &both);
    ([fio_out, our_out], ok)
}

#[test]
fn bench_fio_matrix_then_fio_plot_charts() {
    let venv = need!(venv());
    let root = root();
    let sides = need!(sides(root.path()));
    let mut diffs = Diffs::default();
    let what = "bench-fio (randread, iodepth 1 4, numjobs 1 2, time based)";
    let args = [
        "--size",
        "4M",
        "--mode",
        "randread",
        "--block-size",
        "4k",
        "--iodepth",
        "1",
        "4",
        "--numjobs",
        "1",
        "2",
        "--runtime",
        "1",
        "--time-based",
        "--loginterval",
        "250",
        "--quiet",
    ];
    let (outs, ok) = bench_fio_both(&mut diffs, venv, &sides, what, &args);
    if !ok {
        diffs.assert_none("bench-fio (fio-plot not run: bench-fio failed with iolens)");
        return;
    }

    // fio-plot on each side's output: 2D by queue depth and by jobs, 3D, latency histogram,
    // and the log-based line chart.
    let charts: [(&str, &[&str]); 5] = [
        (
            "2d-iodepth",
            &["-l", "-r", "randread", "-d", "1", "4", "-n", "1"],
        ),
        (
            "2d-numjobs",
            &["-N", "-r", "randread", "-d", "1", "-n", "1", "2"],
        ),
        (
            "3d",
            &["-L", "-t", "iops", "-r", "randread", "-M", "4", "-J", "2"],
        ),
        ("histogram", &["-H", "-r", "randread", "-d", "4", "-n", "2"]),
        (
            "log",
            &[
                "-g", "-t", "bw", "iops", "lat", "-r", "randread", "-d", "1", "4", "-n", "1", "2",
            ],
        ),
    ];
    let script = clients_dir()
        .join("fio_plot_shape.py")
        .display()
        .to_string();
    for (kind, args) in charts {
        let mut results = Vec::new();
        for (side, out) in sides.iter().zip(&outs) {
            let charts = side.dir.join(format!("charts-{kind}"));
            std::fs::create_dir_all(&charts).unwrap();
            let shape = side.dir.join(format!("shape-{kind}.json"));
            let input = out.join("4k").display().to_string();
            let mut all = vec![script.as_str(), "-i", &input, "-T", "clients"];
            all.extend_from_slice(args);
            let ran: Ran = side
                .command(venv.join("bin/python"))
                .args(&all)
                .env("FIO_PLOT_SHAPE", &shape)
                .current_dir(&charts)
                .output()
                .unwrap()
                .into();
            let pngs = files(&charts)
                .iter()
                .filter(|f| f.ends_with(".png"))
                .count();
            results.push((ran, pngs, read_json(&shape).ok()));
        }
        let what = format!("fio-plot {kind} ({})", args.join(" "));
        let ((fio, fio_pngs, fio_shape), (ours, our_pngs, our_shape)) = (&results[0], &results[1]);
        if diffs.exits(&what, fio, ours) {
            diffs.same(&format!("{what}: charts written"), fio_pngs, our_pngs);
            let (a, b) = (flatten(fio_shape.as_ref()), flatten(our_shape.as_ref()));
            let only_fio: Vec<_> = a.difference(&b).take(12).collect();
            let only_iolens: Vec<_> = b.difference(&a).take(12).collect();
            diffs.check(only_fio.is_empty() && only_iolens.is_empty(), || {
                format!(
                    "{what}: the data it parsed differs; only from fio: {only_fio:?}, \
                     only from iolens: {only_iolens:?}"
                )
            });
        }
    }
    diffs.assert_none("bench-fio / fio-plot");
}

#[test]
fn bench_fio_with_steady_state_detection() {
    let venv = need!(venv());
    let root = root();
    let sides = need!(sides(root.path()));
    let mut diffs = Diffs::default();
    let what = "bench-fio --ss iops:10% --ss-dur 1 --ss-ramp 0";
    let args = [
        "--size",
        "4M",
        "--mode",
        "randread",
        "--iodepth",
        "1",
        "--numjobs",
        "1",
        "--runtime",
        "1",
        "--time-based",
        "--ss",
        "iops:10%",
        "--ss-dur",
        "1",
        "--ss-ramp",
        "0",
        "--loginterval",
        "250",
        "--quiet",
    ];
    bench_fio_both(&mut diffs, venv, &sides, what, &args);
    diffs.assert_none("bench-fio --ss");
}

#[test]
fn bench_fio_preconditions_the_target_then_benchmarks_it() {
    let venv = need!(venv());
    let root = root();
    let sides = need!(sides(root.path()));
    let mut diffs = Diffs::default();
    let what = "bench-fio --precondition (randwrite)";
    let args = [
        "--size",
        "2M",
        "--mode",
        "randwrite",
        "--iodepth",
        "1",
        "--numjobs",
        "1",
        "--runtime",
        "1",
        "--precondition",
        "--destructive",
        "--quiet",
    ];
    let ([fio_out, our_out], _) = bench_fio_both(&mut diffs, venv, &sides, what, &args);
    // The precondition writes the whole 4 MiB file twice (loops=2), the benchmark its 2 MiB:
    // sizes, not times, so the same bytes on both sides.
    for name in files(&fio_out).iter().filter(|n| n.ends_with(".json")) {
        let bytes = |dir: &Path| {
            read_json(&dir.join(name))
                .ok()
                .map(|d| d["jobs"][0]["write"]["io_bytes"].clone())
        };
        diffs.same(
            &format!("{name} write.io_bytes"),
            bytes(&fio_out),
            bytes(&our_out),
        );
    }
    diffs.assert_none("bench-fio --precondition");
}

/// cdmpy's table: each row's name and its numbers.
fn cdm_table(stdout: &str) -> Vec<(String, Vec<f64>)> {
    stdout
        .lines()
        .filter(|l| l.starts_with('|') && !l.starts_with("|Name") && !l.starts_with("|---"))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split('|').collect();
            let numbers = cells[1..]
                .iter()
                .map(|c| c.trim().parse().unwrap_or(f64::NAN))
                .collect();
            (cells[0].trim().to_string(), numbers)
        })
        .collect()
}

#[test]
fn cdmpy_runs_its_crystaldiskmark_suite() {
    let venv = need!(venv());
    let root = root();
    let sides = need!(sides(root.path()));
    let mut diffs = Diffs::default();
    let mut runs = Vec::new();
    for side in &sides {
        let target = side.dir.join("target");
        let cwd = side.dir.join("cwd");
        std::fs::create_dir_all(&target).unwrap();
        std::fs::create_dir_all(&cwd).unwrap();
        // The preset suite (SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T8, RND4K Q1T1), once, on a
        // 1 MiB file, with the mixed test.
        let ran: Ran = side
            .command(venv.join("bin/cdm"))
            .args([target.to_str().unwrap(), "-n", "1", "-s", "1m", "-x"])
            .current_dir(&cwd)
            .output()
            .unwrap()
            .into();
        runs.push((ran, files(&target), files(&cwd)));
    }
    let ((fio, fio_target, fio_cwd), (ours, our_target, our_cwd)) = (&runs[0], &runs[1]);
    diffs.exits("cdm -n 1 -s 1m -x", fio, ours);
    // cdm removes its `.fio_testmark` from the target directory; nothing may be left there
    // nor in the directory it ran from (filename= is relative to directory=).
    diffs.same("files left in the target directory", fio_target, our_target);
    diffs.same("files left in cdm's working directory", fio_cwd, our_cwd);
    let commands = |out: &str| -> Vec<String> {
        out.lines()
            .filter(|l| l.starts_with("$ fio"))
            .map(|l| l.split(" /").next().unwrap().to_string())
            .collect()
    };
    diffs.same(
        "fio command lines",
        commands(&fio.stdout),
        commands(&ours.stdout),
    );
    let (a, b) = (cdm_table(&fio.stdout), cdm_table(&ours.stdout));
    let shape = |t: &[(String, Vec<f64>)]| {
        t.iter()
            .map(|(n, v)| (n.clone(), v.len()))
            .collect::<Vec<_>>()
    };
    diffs.same("table rows (name, columns)", shape(&a), shape(&b));
    for (table, side) in [(&a, "fio"), (&b, "iolens")] {
        let mut bandwidth = None;
        for (name, values) in table.iter() {
            diffs.check(values.iter().all(|v| v.is_finite() && *v > 0.0), || {
                format!(
                    "{side}: row {name:?} has a value that is not a positive number: {values:?}"
                )
            });
            // A random row's IOPS times 4 KiB is its MB/s (both from one job's counts).
            if name.starts_with("RND") {
                bandwidth = Some(values.clone());
            } else if name.starts_with(". IOPS") {
                if let Some(mbs) = bandwidth.take() {
                    for (iops, mbs) in values.iter().zip(&mbs) {
                        let expect = iops * 4096.0 / 1e6;
                        diffs.check((expect - mbs).abs() <= 0.02 * mbs.max(0.01) + 0.01, || {
                            format!("{side}: {iops} IOPS of 4 KiB is {expect:.2} MB/s, the table says {mbs}")
                        });
                    }
                }
            }
        }
    }
    diffs.assert_none("cdmpy");
}

/// One job run by both sides, with fio's averaged logs, a histogram log and json+.
fn tools_job(side: &Side) -> Ran {
    let filename = side.dir.join("data").display().to_string();
    side.run(
        "fio",
        &[
            "--name=tools",
            &format!("--filename={filename}"),
            "--size=4m",
            "--rw=randrw",
            "--bs=4k",
            "--ioengine=psync",
            "--time_based",
            // not a whole number of windows: fio stops a job as its runtime ends, and
            // samples a window ending just then only when its helper thread is quicker
            "--runtime=1100ms",
            "--log_avg_msec=250",
            "--write_bw_log=logs/tools",
            "--write_iops_log=logs/tools",
            "--write_lat_log=logs/tools",
            "--write_hist_log=logs/tools",
            "--log_hist_msec=250",
            "--output-format=json+",
            "--output=plus.json",
        ],
    )
    .into()
}

#[test]
fn fios_own_tools_read_both_outputs() {
    let root = root();
    let sides = need!(sides(root.path()));
    let mut diffs = Diffs::default();
    for side in &sides {
        std::fs::create_dir_all(side.dir.join("logs")).unwrap();
    }
    let (fio, ours) = (tools_job(&sides[0]), tools_job(&sides[1]));
    diffs.exits(
        "the job (randrw, averaged logs, hist log, json+)",
        &fio,
        &ours,
    );
    let logs = |side: &Side| side.dir.join("logs");
    let names = files(&logs(&sides[0]));
    same_files(&mut diffs, "logs", &names, &files(&logs(&sides[1])));
    same_logs(
        &mut diffs,
        "the job",
        &logs(&sides[0]),
        &logs(&sides[1]),
        &names,
    );

    // fio_jsonplus_clat2csv: the same columns (the rows are the latency bins each run filled).
    let clat2csv = "/usr/bin/fio_jsonplus_clat2csv";
    if Path::new(clat2csv).exists() {
        let runs: Vec<Ran> = sides
            .iter()
            .map(|s| {
                s.run("python3", &[clat2csv, "plus.json", "clat.csv"])
                    .into()
            })
            .collect();
        if diffs.exits("fio_jsonplus_clat2csv", &runs[0], &runs[1]) {
            let header = |s: &Side| {
                std::fs::read_to_string(s.dir.join("clat_job0.csv"))
                    .ok()
                    .and_then(|t| t.lines().next().map(str::to_string))
            };
            diffs.same(
                "fio_jsonplus_clat2csv header",
                header(&sides[0]),
                header(&sides[1]),
            );
            let (a, b) = (
                table(&sides[0].dir.join("clat_job0.csv"), ", "),
                table(&sides[1].dir.join("clat_job0.csv"), ", "),
            );
            diffs.same("fio_jsonplus_clat2csv columns", a.1, b.1);
        }
    } else {
        eprintln!("skipped fio_jsonplus_clat2csv: {clat2csv} not installed (Debian package fio)");
    }

    // fiologparser.py and fiologparser_hist.py: Debian ships them gzipped under doc/.
    let doc = Path::new("/usr/share/doc/fio");
    let unzip = |side: &Side, name: &str| -> Option<PathBuf> {
        let out = Command::new("gzip")
            .arg("-dc")
            .arg(doc.join(format!("{name}.gz")))
            .output()
            .ok()?;
        out.status.success().then_some(())?;
        let script = side.dir.join(name);
        std::fs::write(&script, out.stdout).ok()?;
        Some(script)
    };
    for (args, what) in [
        (&["-s"][..], "fiologparser.py -s (sum per interval)"),
        (&["-a"][..], "fiologparser.py -a (average per interval)"),
        (&["-A"][..], "fiologparser.py -A (all stats)"),
    ] {
        let mut outputs = Vec::new();
        for side in &sides {
            let Some(script) = unzip(side, "fiologparser.py") else {
                eprintln!("skipped fiologparser.py: not in {}", doc.display());
                break;
            };
            let mut all = vec![script.to_str().unwrap().to_string()];
            all.extend(args.iter().map(|a| a.to_string()));
            all.push("logs/tools_bw.1.log".into());
            let all: Vec<&str> = all.iter().map(String::as_str).collect();
            outputs.push(Ran::from(side.run("python3", &all)));
        }
        if let [fio, ours] = &outputs[..] {
            if diffs.same_outcome(what, fio, ours) {
                let rows = |r: &Ran| {
                    (
                        r.stdout.lines().count(),
                        r.stdout
                            .lines()
                            .map(|l| l.split(',').count())
                            .collect::<BTreeSet<_>>(),
                    )
                };
                diffs.same(&format!("{what}: rows and columns"), rows(fio), rows(ours));
            }
        }
    }
    match venv() {
        Ok(venv) => {
            let mut outputs = Vec::new();
            for side in &sides {
                let Some(script) = unzip(side, "fiologparser_hist.py") else {
                    eprintln!("skipped fiologparser_hist.py: not in {}", doc.display());
                    break;
                };
                let python = venv.join("bin/python");
                let args = [
                    script.to_str().unwrap(),
                    "-i",
                    "250",
                    "logs/tools_clat_hist.1.log",
                ];
                outputs.push(Ran::from(side.run(&python, &args)));
            }
            if let [fio, ours] = &outputs[..] {
                let what = "fiologparser_hist.py -i 250";
                if diffs.exits(what, fio, ours) {
                    let lines = |r: &Ran| r.stdout.lines().map(str::to_string).collect::<Vec<_>>();
                    let (a, b) = (lines(fio), lines(ours));
                    diffs.same(&format!("{what}: header"), a.first(), b.first());
                    diffs.same(&format!("{what}: rows"), a.len(), b.len());
                    let times = |l: &[String]| {
                        l.iter()
                            .skip(1)
                            .map(|r| r.split(',').next().unwrap_or("").trim().to_string())
                            .collect::<Vec<_>>()
                    };
                    diffs.same(&format!("{what}: interval end times"), times(&a), times(&b));
                }
            }
        }
        Err(why) => eprintln!("skipped fiologparser_hist.py (needs pandas): {why}"),
    }

    // fio2gnuplot and fio_generate_plots draw with gnuplot.
    match gnuplot() {
        Ok(()) => {
            let what = "fio2gnuplot -b -g";
            let runs: Vec<(Ran, BTreeSet<String>, Option<String>)> = sides
                .iter()
                .map(|side| {
                    let out = side.dir.join("gnuplot");
                    std::fs::create_dir_all(&out).unwrap();
                    let ran: Ran = side
                        .command("fio2gnuplot")
                        .args(["-b", "-g", "-k", "-d", out.to_str().unwrap()])
                        .current_dir(logs(side))
                        .output()
                        .unwrap()
                        .into();
                    let global = files(&out).into_iter().find(|f| f.ends_with(".global"));
                    let counts = global
                        .and_then(|g| std::fs::read_to_string(out.join(g)).ok())
                        .map(|t| {
                            t.lines()
                                .filter(|l| {
                                    l.starts_with("values_count") || l.starts_with("disks_count")
                                })
                                .collect::<Vec<_>>()
                                .join(" ")
                        });
                    (ran, files(&out), counts)
                })
                .collect();
            if diffs.exits(what, &runs[0].0, &runs[1].0) {
                same_files(&mut diffs, what, &runs[0].1, &runs[1].1);
                diffs.same(
                    &format!("{what}: samples counted (.global)"),
                    &runs[0].2,
                    &runs[1].2,
                );
            }
            let what = "fio_generate_plots";
            let runs: Vec<(Ran, BTreeSet<String>)> = sides
                .iter()
                .map(|side| {
                    let ran: Ran = side
                        .command("fio_generate_plots")
                        .arg("clients")
                        .current_dir(logs(side))
                        .output()
                        .unwrap()
                        .into();
                    let svgs = files(&logs(side))
                        .into_iter()
                        .filter(|f| f.ends_with(".svg"))
                        .collect();
                    (ran, svgs)
                })
                .collect();
            if diffs.exits(what, &runs[0].0, &runs[1].0) {
                same_files(&mut diffs, what, &runs[0].1, &runs[1].1);
            }
        }
        Err(why) => eprintln!("skipped fio2gnuplot and fio_generate_plots: {why}"),
    }
    diffs.assert_none("fio's tools/ scripts");
}

/// KDiskMark's reading of one result (src/benchmark.cpp, Benchmark::parseResult): the first
/// job's `error` as an int, then per direction `bw` as an int (KiB/s, /1000 to "MB"), `iops`
/// as a double and `clat_ns.mean` as a double (/1000 to µs). Qt's toInt() gives 0 for a
/// value that is not an integer, so a float `bw` reads as 0.
fn kdiskmark_parse(doc: &Value) -> Result<BTreeMap<&'static str, [f64; 3]>, String> {
    let job = doc["jobs"]
        .as_array()
        .and_then(|j| j.first())
        .ok_or("Bad FIO output.")?;
    if job["error"].as_i64() != Some(0) {
        return Err(format!("error {}", job["error"]));
    }
    let mut parsed = BTreeMap::new();
    for ddir in ["read", "write"] {
        let d = &job[ddir];
        let bw = d["bw"].as_i64().unwrap_or(0) as f64 / 1000.0;
        let iops = d["iops"].as_f64().unwrap_or(0.0);
        let lat = d["clat_ns"]["mean"].as_f64().unwrap_or(0.0) / 1000.0;
        parsed.insert(ddir, [bw, iops, lat]);
    }
    Ok(parsed)
}

#[test]
fn kdiskmarks_command_lines_and_json_reads() {
    let root = root();
    let sides = need!(sides(root.path()));
    let mut diffs = Diffs::default();
    // Benchmark::Benchmark: `fio --version`, simplified, must start with "fio-".
    for side in &sides {
        let version = String::from_utf8_lossy(&side.run("fio", &["--version"]).stdout)
            .trim()
            .to_string();
        diffs.check(version.starts_with("fio-"), || {
            format!("{}: fio --version says {version:?}", side.name)
        });
    }
    // Helper::prepareBenchmarkFile: a QTemporaryFile kdiskmark-XXXXXX.tmp, then create_only.
    // 64 I/Os of 1 MiB at least: the mixed tests draw each direction at random (70/30)
    let size_mb = 64;
    let file = |side: &Side| side.dir.join("kdiskmark-AbC123.tmp");
    let mut prepared = Vec::new();
    for side in &sides {
        std::fs::write(file(side), b"").unwrap();
        let ran: Ran = side
            .run(
                "fio",
                &[
                    "--output-format=json",
                    "--create_only=1",
                    &format!("--filename={}", file(side).display()),
                    &format!("--size={size_mb}m"),
                    "--zero_buffers=0",
                    "--name=prepare",
                ],
            )
            .into();
        let len = std::fs::metadata(file(side)).map(|m| m.len()).ok();
        prepared.push((ran, len));
    }
    diffs.exits(
        "KDiskMark's prepare (--create_only=1)",
        &prepared[0].0,
        &prepared[1].0,
    );
    diffs.same("the prepared file's size", prepared[0].1, prepared[1].1);
    diffs.same(
        "stderr of prepare",
        &prepared[0].0.stderr,
        &prepared[1].0.stderr,
    );
    let prepare_json = |r: &Ran| {
        serde_json::from_str::<Value>(&r.stdout)
            .map_err(|e| e.to_string())
            .map(|_| ())
    };
    diffs.same(
        "prepare's stdout is JSON",
        prepare_json(&prepared[0].0),
        prepare_json(&prepared[1].0),
    );

    // Helper::startBenchmarkTest with the default profile's tests (SEQ1M Q8T1, SEQ1M Q1T1,
    // RND4K Q32T16, RND4K Q1T1), read, write and mix, at small settings (64 MiB, 1 s).
    let tests: [(u32, u32, u32, &[&str]); 4] = [
        (1024, 8, 1, &["read", "write", "rw"]),
        (1024, 1, 1, &["read", "write"]),
        (4, 32, 16, &["randread", "randwrite", "randrw"]),
        (4, 1, 1, &["randread", "randwrite"]),
    ];
    for (bs, qd, threads, modes) in tests {
        for rw in modes {
            let what = format!("KDiskMark {rw} bs={bs}k Q{qd}T{threads}");
            let mut results = Vec::new();
            for side in &sides {
                let args = [
                    "--output-format=json".to_string(),
                    "--ioengine=libaio".into(),
                    "--randrepeat=0".into(),
                    "--refill_buffers=0".into(),
                    "--end_fsync=1".into(),
                    "--direct=1".into(),
                    "--rwmixread=70".into(),
                    format!("--filename={}", file(side).display()),
                    format!("--name={rw}"),
                    format!("--size={size_mb}m"),
                    "--zero_buffers=0".into(),
                    format!("--bs={bs}k"),
                    "--runtime=1".into(),
                    format!("--rw={rw}"),
                    format!("--iodepth={qd}"),
                    format!("--numjobs={threads}"),
                    "--group_reporting".into(),
                ];
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                let ran = Ran::from(side.run("fio", &args));
                let doc = serde_json::from_str::<Value>(&ran.stdout).unwrap_or(Value::Null);
                results.push((ran, doc));
            }
            let ((fio, fio_doc), (ours, our_doc)) = (&results[0], &results[1]);
            if !diffs.exits(&what, fio, ours) {
                continue;
            }
            diffs.same(&format!("{what}: stderr"), &fio.stderr, &ours.stderr);
            diffs.same(
                &format!("{what}: jobs (group_reporting)"),
                fio_doc["jobs"].as_array().map(Vec::len),
                our_doc["jobs"].as_array().map(Vec::len),
            );
            diffs.json_keys(&what, fio_doc, our_doc);
            match (kdiskmark_parse(fio_doc), kdiskmark_parse(our_doc)) {
                (Ok(a), Ok(b)) => {
                    for ddir in ["read", "write"] {
                        let (x, y) = (a[ddir], b[ddir]);
                        for (i, field) in ["bw (MB)", "IOPS", "latency (µs)"].iter().enumerate() {
                            let used = x[i] != 0.0;
                            diffs.same(
                                &format!("{what}: {ddir} {field} is read as nonzero"),
                                used,
                                y[i] != 0.0,
                            );
                        }
                        // Speeds on a shared machine are not compared; each side's
                        // bandwidth must be its own IOPS times the block (KiB/s, as an int).
                        for (side, [mb, iops, _]) in [("fio", x), ("iolens", y)] {
                            let expect = iops * f64::from(bs);
                            diffs.check((mb * 1000.0 - expect).abs() <= 0.02 * expect + 1.0, || {
                                format!("{what}: {side}'s {ddir} bw {mb} MB is not {iops} IOPS x {bs} KiB")
                            });
                        }
                    }
                }
                (a, b) => diffs.same(&format!("{what}: parse"), a.map(|_| ()), b.map(|_| ())),
            }
        }
    }
    diffs.assert_none("KDiskMark");
}
