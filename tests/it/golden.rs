//! Golden outputs: every report format of a set of jobs, with what depends on
//! the machine's speed or state masked, compared with the files in
//! `tests/it/golden/`. They pin the formats while the code behind them moves;
//! a change to a format shows here as a diff to review.
//!
//! Masked: every timing number (latencies, bandwidth, IOPS, runtimes, CPU), dates,
//! the latency-distribution lines whose buckets depend on the machine, and the
//! observations (kept as their shape: keys and nesting). Kept: the layout, labels,
//! job options, and every count the job decides (I/Os, bytes, groups, errors).
//! `IOLENS_BLESS=1 cargo test --test it golden` rewrites the files after a
//! reviewed, intended change.

use crate::support::{command, scratch, stderr};
use serde_json::Value;
use std::path::Path;

/// Numeric keys whose values the job decides, kept in the JSON formats.
const COUNT_KEYS: &[&str] = &[
    "io_bytes",
    "io_kbytes",
    "total_ios",
    "short_ios",
    "drop_ios",
    "groupid",
    "error",
    "errno",
    "workers",
    "schema_version",
    "N",
    "samples",
    "read_back_ios",
    "read_back_bytes",
    "id",
    "significant_figures",
    "verified_blocks",
    "bad_blocks_total",
];

/// Subtrees of iolens' own JSON that describe the machine or the moment:
/// pinned as their shape only.
const SHAPE_ONLY_KEYS: &[&str] = &["observations", "environment", "disks", "disk_util"];

/// Subtrees whose presence depends on what the machine showed (findings, its
/// cgroups) or whose keys are latencies (histogram bins): masked whole.
const MASKED_KEYS: &[&str] = &[
    "findings",
    "bins",
    "command_line",
    "cgroup",
    "cgroup_series",
    "cgroup_io",
];

/// Keys present only when the machine showed something (other processes'
/// I/O during the run): left out of the comparison.
const MACHINE_ONLY_KEYS: &[&str] = &["other_processes"];

const FORMATS: &[(&str, &str)] = &[
    ("normal", "txt"),
    ("json", "json"),
    ("json+", "plus.json"),
    ("terse", "terse"),
    ("iolens-json", "iolens.json"),
];

#[test]
fn golden_null_random_read() {
    check_all_formats(
        "null_randread",
        &[
            "--name=a",
            "--ioengine=null",
            "--rw=randread",
            "--bs=4k",
            "--size=16m",
        ],
        None,
    );
}

#[test]
fn golden_null_mixed_groups() {
    let job = "[global]\nioengine=null\nsize=8m\n\n\
               [mix]\nrw=randrw\nrwmixread=70\nbsrange=4k-16k\nnumjobs=2\ngroup_reporting\n\n\
               [seq]\nstonewall\nrw=write\nbs=64k\niodepth=4\n";
    check_all_formats("null_mixed_groups", &[], Some(job));
}

#[test]
fn golden_file_write_verify() {
    let job = "[wv]\nfilename=$DIR/wv.dat\nioengine=psync\nrw=write\nbs=4k\nsize=1m\n\
               verify=crc32c\n";
    check_all_formats("file_write_verify", &[], Some(job));
}

#[test]
fn golden_file_read_passes() {
    let job = "[global]\nfilename=$DIR/rp.dat\nioengine=sync\nbs=16k\n\n\
               [passes]\nrw=read\nsize=2m\nio_size=5m\n\n\
               [capped]\nstonewall\nrw=randread\nsize=2m\nnumber_ios=100\nloops=2\n";
    check_all_formats("file_read_passes", &[], Some(job));
}

/// Runs the job once per format and compares each masked output with its file.
fn check_all_formats(name: &str, args: &[&str], job_file: Option<&str>) {
    let dir = scratch();
    let dir_text = dir.path().to_str().expect("UTF-8 scratch path");
    let mut job_args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    if let Some(text) = job_file {
        let path = dir.path().join(format!("{name}.fio"));
        std::fs::write(&path, text.replace("$DIR", dir_text)).expect("write the job file");
        job_args.push(path.to_str().unwrap().to_string());
    }
    let mut mismatches = Vec::new();
    for (format, extension) in FORMATS {
        let out = command()
            .current_dir(dir.path())
            .arg("run")
            .arg("--no-history")
            .arg(format!("--output-format={format}"))
            .args(&job_args)
            .output()
            .expect("run iolens");
        assert!(
            out.status.success(),
            "{name} --output-format={format}: iolens failed ({:?}): {}",
            out.status.code(),
            stderr(&out)
        );
        let text = String::from_utf8(out.stdout)
            .expect("UTF-8 output")
            .replace(dir_text, "$DIR");
        let masked = mask(format, &text);
        let file = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/it/golden")
            .join(format!("{name}.{extension}"));
        if std::env::var_os("IOLENS_BLESS").is_some() {
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(&file, &masked).expect("write the golden file");
            continue;
        }
        let expected = std::fs::read_to_string(&file)
            .unwrap_or_else(|e| panic!("{}: {e} (IOLENS_BLESS=1 writes it)", file.display()));
        if expected != masked {
            mismatches.push(format!(
                "{}: the {format} output changed\n{}",
                file.display(),
                first_difference(&expected, &masked)
            ));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n\n"));
}

fn mask(format: &str, text: &str) -> String {
    match format {
        "normal" => mask_text(text),
        "terse" => text.lines().map(mask_terse_line).collect(),
        _ => {
            let mut value: Value = serde_json::from_str(text)
                .unwrap_or_else(|e| panic!("--output-format={format} is not JSON: {e}\n{text}"));
            mask_json(&mut value);
            serde_json::to_string_pretty(&value).unwrap() + "\n"
        }
    }
}

/// The first line where two texts differ, both versions.
fn first_difference(expected: &str, seen: &str) -> String {
    let mut seen_lines = seen.lines();
    for (number, want) in expected.lines().enumerate() {
        let got = seen_lines.next().unwrap_or("<end of output>");
        if want != got {
            return format!(
                "line {}:\n  expected: {want}\n  seen:     {got}",
                number + 1
            );
        }
    }
    let extra = seen_lines.next().unwrap_or("");
    format!("the output has more lines than expected, first: {extra}")
}

/// fio's human layout: numbers with their units become `#`, runs of spaces one
/// space; the observations block after the jobs depends on the machine and is cut.
fn mask_text(text: &str) -> String {
    let jobs = text.split("\nSystem during the run").next().unwrap_or(text);
    let mut out = String::new();
    for line in jobs.lines() {
        if is_latency_distribution(line) || is_interval_samples(line) {
            continue;
        }
        let line = mask_date(line)
            .replace("(nsec)", "(Xsec)")
            .replace("(usec)", "(Xsec)")
            .replace("(msec)", "(Xsec)");
        let masked = mask_numbers(&line);
        out.push_str(&masked.split_whitespace().collect::<Vec<_>>().join(" "));
        out.push('\n');
    }
    out
}

/// `lat (usec)   : 10=7.57%, 20=62.48%`: which buckets appear depends on the machine.
fn is_latency_distribution(line: &str) -> bool {
    let trimmed = line.trim_start();
    ["lat (nsec)", "lat (usec)", "lat (msec)"]
        .iter()
        .any(|head| trimmed.starts_with(head) && trimmed[head.len()..].starts_with(' '))
}

/// `bw (  KiB/s): min=…, samples=3` and `iops : …`: printed once the job lasted a
/// sampling interval, which a loaded machine makes it do.
fn is_interval_samples(line: &str) -> bool {
    let trimmed = line.trim_start();
    (trimmed.starts_with("bw (") || trimmed.starts_with("iops ")) && line.contains("samples=")
}

/// fio's job header ends with the start time: `err= 0: pid=7: Mon Nov 23 19:08:15 2026`.
fn mask_date(line: &str) -> String {
    match line
        .find("err=")
        .and_then(|at| line[at..].rfind(": ").map(|c| at + c))
    {
        Some(colon) if line[colon + 2..].split_whitespace().count() == 5 => {
            format!("{}: <date>", &line[..colon])
        }
        _ => line.to_string(),
    }
}

/// A number that starts a token (not inside a word such as a job name), with
/// its decimal part and any unit letters after it, becomes `#`.
fn mask_numbers(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let starts_token = i == 0 || !chars[i - 1].is_ascii_alphanumeric();
        if chars[i].is_ascii_digit() && starts_token {
            while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.') {
                i += 1;
            }
            while i < chars.len() && (chars[i].is_ascii_alphabetic() || chars[i] == '%') {
                i += 1;
            }
            if chars[i..].starts_with(&['/', 's']) {
                i += 2;
            }
            // fio pads numbers to a width (`[    9]`, `avg= 13.06`): the padding goes too.
            let padded = out.trim_end_matches(' ');
            if padded.ends_with(['[', '=', '(']) {
                out.truncate(padded.len());
            }
            out.push('#');
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

/// Fields of fio's terse v3 job part: version, tool, name, group, error, then
/// read and write (41 each), CPU (5), depths (7), latency buckets (10 + 12).
/// The disks appended after them depend on the machine and are cut.
const TERSE_JOB_FIELDS: usize = 5 + 41 * 2 + 5 + 7 + 10 + 12;
/// Total KiB of read and of write: decided by the job.
const TERSE_KIB_FIELDS: [usize; 2] = [5, 5 + 41];

fn mask_terse_line(line: &str) -> String {
    let fields: Vec<&str> = line.split(';').collect();
    let masked: Vec<String> = fields
        .iter()
        .take(TERSE_JOB_FIELDS)
        .enumerate()
        .map(|(index, field)| {
            // Percentile fields are `99.000000%=146`: the value is the masked part.
            let (label, value) = match field.split_once('=') {
                Some((label, value)) => (format!("{label}="), value),
                None => (String::new(), *field),
            };
            let numeric = value.trim_end_matches('%').parse::<f64>().is_ok();
            if index < 5 || TERSE_KIB_FIELDS.contains(&index) || !numeric {
                field.to_string()
            } else {
                format!("{label}#")
            }
        })
        .collect();
    format!(
        "{} ({} fields)\n",
        masked.join(";"),
        fields.len().min(TERSE_JOB_FIELDS)
    )
}

fn mask_json(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, child) in map.iter_mut() {
                if MASKED_KEYS.contains(&key.as_str()) {
                    *child = Value::String("<masked>".into());
                } else if SHAPE_ONLY_KEYS.contains(&key.as_str()) {
                    *child = shape(child);
                } else if key.ends_with("_samples") && child.is_object() {
                    // Per-interval bandwidth/IOPS samples: how many intervals a
                    // run lasted is the machine's doing, even their count.
                    mask_all_numbers(child);
                } else if child.is_number() {
                    if !COUNT_KEYS.contains(&key.as_str()) {
                        *child = Value::String("#".into());
                    }
                } else if key == "time" || key.starts_with("timestamp") || key.ends_with("_unix_ms")
                {
                    *child = Value::String("<time>".into());
                } else {
                    mask_json(child);
                }
            }
        }
        Value::Array(items) => {
            for item in items.iter_mut() {
                if item.is_number() {
                    *item = Value::String("#".into());
                } else {
                    mask_json(item);
                }
            }
        }
        _ => {}
    }
}

fn mask_all_numbers(value: &mut Value) {
    match value {
        Value::Number(_) => *value = Value::String("#".into()),
        Value::Object(map) => map.values_mut().for_each(mask_all_numbers),
        Value::Array(items) => items.iter_mut().for_each(mask_all_numbers),
        _ => {}
    }
}

/// Keys and nesting only: scalars become their kind; arrays `[..]`, since how
/// many samples, devices or waits the machine showed is not the job's doing.
fn shape(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(key, _)| !MASKED_KEYS.contains(&key.as_str()))
                .filter(|(key, _)| !MACHINE_ONLY_KEYS.contains(&key.as_str()))
                .map(|(key, child)| (key.clone(), shape(child)))
                .collect(),
        ),
        Value::Array(_) => Value::String("[..]".into()),
        Value::Bool(_) => Value::String("bool".into()),
        _ => Value::String("_".into()),
    }
}

#[cfg(test)]
mod masking {
    use super::*;

    #[test]
    fn numbers_with_units_are_masked_words_are_not() {
        assert_eq!(
            mask_numbers("rr1: read: IOPS=7835k, BW=29.9GiB/s (32.1GB/s)(16.0MiB/1msec)"),
            "rr1: read: IOPS=#, BW=# (#)(#/#)"
        );
        assert_eq!(
            mask_numbers("| 1.00th=[    9], avg= 13.06, run=1-1msec"),
            "| #=[#], avg=#, run=#-#"
        );
    }

    #[test]
    fn the_start_time_is_masked() {
        assert_eq!(
            mask_date("a: (groupid=0, jobs=1): err= 0: pid=77: Mon Nov 23 19:08:15 2026"),
            "a: (groupid=0, jobs=1): err= 0: pid=77: <date>"
        );
    }
}
