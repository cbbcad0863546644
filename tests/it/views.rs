//! The findings in every text view (`run`, `show`, `quick`, `compare`) in the
//! one findings format, and `compare`'s CPU cost of each side (seed 001).

use crate::support::{iolens_ok, scratch, stdout};
use iolens::format_value;
use std::path::Path;
use std::process::Output;

/// A read of `file` (run's own flags after the job options).
fn read(file: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "run".to_string(),
        "--name=r".into(),
        format!("--filename={}", file.display()),
        "--rw=read".into(),
        "--thread".into(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    iolens_ok(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

fn sparse(dir: &Path, name: &str, size: u64) -> std::path::PathBuf {
    let f = dir.join(name);
    std::fs::File::create(&f).unwrap().set_len(size).unwrap();
    f
}

/// A file with data in every block, written by iolens.
fn written(dir: &Path, name: &str, size: &str) -> std::path::PathBuf {
    let f = dir.join(name);
    iolens_ok(&[
        "run",
        "--name=w",
        &format!("--filename={}", f.display()),
        &format!("--size={size}"),
        "--rw=write",
        "--thread",
        "--no-history",
    ]);
    f
}

const HOLES: &str = "(read-from-holes)\n";
const HOLES_TITLE: &str = "  [WARNING] job 'r' read ";

/// Whether `text` has a block starting with `header` that holds `finding`
/// (other findings the machine gave, such as tool-bound, may come first).
fn block_holds(text: &str, header: &str, finding: &str) -> bool {
    text.split_once(header)
        .is_some_and(|(_, block)| block.contains(finding))
}

#[test]
fn run_show_and_compare_print_the_findings_of_single_and_repeated_runs() {
    let dir = scratch();
    let db = format!("--db={}", dir.path().join("history.db").display());
    let holes = sparse(dir.path(), "sparse", 1 << 20);

    let run = stdout(&read(&holes, &[&db]));
    assert!(
        block_holds(&run, "\nFindings:\n", HOLES_TITLE) && run.contains(HOLES),
        "expected run's findings block with read-from-holes, saw:\n{run}"
    );
    let shown = stdout(&iolens_ok(&["show", "1", &db]));
    assert!(
        block_holds(&shown, "\nFindings:\n", HOLES_TITLE)
            && shown.contains(HOLES)
            && !shown.contains("repetitions"),
        "expected show of a single run to print its findings and no repetitions, saw:\n{shown}"
    );

    let repeated = stdout(&read(&holes, &[&db, "--repeat", "3"]));
    assert!(
        repeated.contains("  read-from-holes in repetitions #1, #2, #3\n")
            && block_holds(&repeated, "\nFindings:\n", HOLES_TITLE)
            && repeated.matches(HOLES).count() == 1,
        "expected --repeat's line naming the repetitions, then the finding in full once, saw:\n{repeated}"
    );
    let repetition = stdout(&iolens_ok(&["show", "3", &db]));
    let line = "  read-from-holes in repetitions #1, #2, #3\n";
    assert!(
        repetition.contains(HOLES)
            && repetition.contains("run 3 is one of the 3 repetitions of one --repeat run")
            && block_holds(&repetition, "\nfindings of the repetitions\n", line),
        "expected show of a repetition to print its findings, then the batch's line {line:?}, saw:\n{repetition}"
    );
    let terse = stdout(&iolens_ok(&["show", "3", &db, "--output-format=terse"]));
    assert!(
        terse.lines().count() == 1 && terse.starts_with("3;"),
        "expected show's terse output to stay fio's one line, saw:\n{terse}"
    );

    let full = written(dir.path(), "full", "1m");
    let clean = stdout(&read(&full, &[&db]));
    assert!(
        !clean.contains("read-from-holes"),
        "expected no read-from-holes finding for a written file, saw:\n{clean}"
    );
    let compared = stdout(&iolens_ok(&["compare", "5", "2", &db]));
    assert!(
        block_holds(&compared, "Findings of B (run 2, 3 runs):\n", HOLES_TITLE),
        "expected B's findings block to hold read-from-holes, saw:\n{compared}"
    );
    for expected in [
        "(read-from-holes)\n      - ",
        "      in all 3 runs\n",
        "\nFound on one side only (it may explain the difference):\n",
        "  read-from-holes: only B had it (all 3 runs)\n",
    ] {
        assert!(
            compared.contains(expected),
            "expected compare to contain {expected:?}, saw:\n{compared}"
        );
    }
    assert_eq!(
        compared.matches("(read-from-holes)").count(),
        1,
        "expected read-from-holes once, in B's block only, saw:\n{compared}"
    );
}

#[test]
fn quick_prints_the_findings_of_its_target_and_none_of_a_laid_out_file() {
    let dir = scratch();
    let holes = sparse(dir.path(), "sparse", 8 << 20);
    let quick = |target: &Path, extra: &[&str]| {
        let target = target.display().to_string();
        let mut args = vec![
            "quick",
            &target,
            "--read-only",
            "--duration=200ms",
            "--ramp=0",
            "--no-history",
        ];
        args.extend(extra);
        stdout(&iolens_ok(&args))
    };
    let text = quick(&holes, &[]);
    assert!(
        text.contains("\nFindings:\n  [WARNING] ") && text.contains(HOLES),
        "expected quick's table followed by the findings block with read-from-holes, saw:\n{text}"
    );
    let repeated = quick(&holes, &["--repeat=2"]);
    assert!(
        repeated.contains("  read-from-holes in repetitions #1, #2\n")
            && repeated.contains("\nFindings:\n  [WARNING] ")
            && repeated.contains("  [WARNING] job 'SEQ1M-Q8T1-read' read "),
        "expected quick --repeat to name the repetitions with the finding and show it in full, saw:\n{repeated}"
    );
    let clean = quick(dir.path(), &[]);
    assert!(
        clean.contains("RND4K-Q1T1-read") && !clean.contains("read-from-holes"),
        "expected quick on a laid-out file to have no read-from-holes finding, saw:\n{clean}"
    );
}

/// (user+sys CPU per MiB, CPU per I/O) of the only job of an iolens-json result, ns.
fn cpu_of(result: &Path) -> (f64, f64) {
    let text = std::fs::read_to_string(result).unwrap();
    let report: serde_json::Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("expected an iolens-json result ({e}), saw: {text}"));
    let job = &report["jobs"][0];
    let cpu_ns = job["cpu"]["usr_ns"].as_u64().unwrap() + job["cpu"]["sys_ns"].as_u64().unwrap();
    let bytes: u64 = job["dirs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["io_bytes"].as_u64().unwrap())
        .sum();
    let per_io = job["cpu"]["cpu_ns_per_io"].as_f64().unwrap();
    (cpu_ns as f64 / (bytes as f64 / (1 << 20) as f64), per_io)
}

fn ratio(a: f64, b: f64) -> String {
    if a > 0.0 {
        format!("x{:.2}", b / a)
    } else {
        "x-".into()
    }
}

/// Seed 001: a warm buffered read and a direct read of the same job, compared
/// as single runs: the CPU cost of each with the ratio, and the cache finding
/// that only the buffered run had.
#[test]
fn compare_of_a_buffered_and_a_direct_run_shows_their_cpu_cost_and_findings() {
    let dir = scratch();
    let file = written(dir.path(), "data", "16m");
    let result = |direct: &str| {
        let path = dir.path().join(format!("direct{direct}.json"));
        read(
            &file,
            &[
                "--size=16m",
                "--bs=4k",
                &format!("--direct={direct}"),
                // Buffered: keep the pages the layout left, a warm cache.
                if direct == "0" {
                    "--invalidate=0"
                } else {
                    "--invalidate=1"
                },
                "--time_based",
                "--runtime=1s",
                "--no-history",
                "--output-format=iolens-json",
                &format!("--output={}", path.display()),
            ],
        );
        path
    };
    let (buffered, direct) = (result("0"), result("1"));
    let text = stdout(&iolens_ok(&[
        "compare",
        &buffered.display().to_string(),
        &direct.display().to_string(),
    ]));
    let (a, b) = (cpu_of(&buffered), cpu_of(&direct));
    let line = format!(
        "  job r: CPU per MiB {} → {} ({}), CPU per I/O {} → {} ({})\n",
        format_value(a.0, "ns"),
        format_value(b.0, "ns"),
        ratio(a.0, b.0),
        format_value(a.1, "ns"),
        format_value(b.1, "ns"),
        ratio(a.1, b.1)
    );
    assert!(
        text.contains("\nCPU cost (user+sys CPU time; B/A):\n") && text.contains(&line),
        "expected the CPU cost block with {line:?} from the two results, saw:\n{text}"
    );
    assert!(
        a.0 > 0.0 && b.0 > 0.0,
        "expected both runs to have used measurable CPU, saw {a:?} and {b:?}"
    );
    assert!(
        text.contains("Findings of A (")
            && text.contains("(served-from-cache)\n")
            && text.contains("  served-from-cache: only A had it\n"),
        "expected the warm buffered run's served-from-cache finding on A's side only, saw:\n{text}"
    );
}

/// `ab` prints the comparison of its two arms with the findings of each.
#[test]
fn ab_names_the_finding_only_one_arm_had() {
    let dir = scratch();
    let arm = |file: &Path| format!("--name=r --filename={} --rw=read --thread", file.display());
    let (holes, full) = (
        sparse(dir.path(), "sparse", 1 << 20),
        written(dir.path(), "full", "1m"),
    );
    let text = stdout(&iolens_ok(&[
        "ab",
        &arm(&holes),
        &arm(&full),
        "--pairs=1",
        "--no-history",
    ]));
    assert!(
        text.contains("\nFindings of A (A `")
            && text.contains("  read-from-holes: only A had it\n"),
        "expected A's findings block and read-from-holes named as A's only, saw:\n{text}"
    );
}
