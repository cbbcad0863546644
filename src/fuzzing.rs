//! What the fuzz targets drive with arbitrary input: each function is a whole
//! path through the code (read, resolve, write back), so the fuzz targets reach
//! it through these few functions while the crate's modules stay private.

use crate::job::front::expr::{MissingEnv, SystemValues};
use crate::job::front::jobfile::{read_job_file, Context};
use crate::model::RunReport;
use crate::units::{self, KbBase, TimeUnit};
use std::path::Path;

/// Read the job file at `path` and resolve its jobs, as `iolens run FILE` does
/// (`${FUZZ}` stands for `4k`); errors are expected, panics and hangs are bugs.
pub fn job_file(path: &Path) {
    let env = |name: &str| (name == "FUZZ").then(|| "4k".to_string());
    let cx = Context {
        system: SystemValues {
            ncpus: 2,
            mb_memory: 1024,
            pagesize: 4096,
        },
        missing_env: MissingEnv::Error,
        env: &env,
    };
    if let Ok(parsed) = read_job_file(path, &cx) {
        let _ = crate::job::resolve_layered(&parsed.jobs);
    }
}

/// `text` through the value grammar (sizes, times, percentages, ranges, bssplit,
/// arithmetic) and, split at white space, the fio-style command line.
pub fn values(text: &str) {
    for base in [KbBase::Compat1024, KbBase::Si1000] {
        let _ = units::parse_size(text, base);
        let _ = units::parse_count(text, base);
        let _ = units::parse_range(text, base);
        let _ = units::parse_bssplit(text, base);
    }
    let _ = units::parse_time(text, TimeUnit::Micros);
    let _ = units::parse_percent(text);
    let _ = units::parse_bool(text);
    let _ = units::parse_float_list(text);
    let _ = units::split_per_direction(text);
    let _ = crate::job::front::expr::evaluate(text);
    let args: Vec<String> = text.split_whitespace().map(str::to_string).collect();
    if let Ok((global, jobs)) = crate::job::front::cli_args::parse_fio_args(&args) {
        let _ = crate::job::resolve(&global, &jobs);
    }
}

/// `data` read as a native JSON report; one that reads must write out and read
/// back again (a panic here is the bug the fuzzer looks for).
pub fn report_round_trip(data: &[u8]) {
    if let Ok(report) = serde_json::from_slice::<RunReport>(data) {
        let text = serde_json::to_string(&report).expect("a parsed report serialises");
        serde_json::from_str::<RunReport>(&text).expect("a written report reads back");
    }
}

/// Every option of the table that takes a value of its kind (not free text: names, paths
/// and commands are left out, so a fuzzed run writes and runs nothing outside its
/// directory), with the values worth trying for it: its example (first) and default, every
/// word of a choice, and the kind's edge values (0, huge, negative, malformed).
pub fn option_values() -> Vec<(&'static str, Vec<String>)> {
    use crate::job::options::{Kind, OPTIONS};
    let words = |list: &[&str]| list.iter().map(|w| w.to_string()).collect::<Vec<_>>();
    OPTIONS
        .iter()
        .filter(|def| def.kind != Kind::Text)
        .map(|def| {
            let mut values = match def.kind {
                Kind::Text => Vec::new(),
                Kind::Bool => words(&["0", "1", "2", "yes"]),
                Kind::Count | Kind::CountPerDirection => words(&[
                    "0",
                    "1",
                    "3",
                    "64",
                    "4k",
                    "1m",
                    "4294967295",
                    "4294967296",
                    "18446744073709551615",
                    "-1",
                    "1,2",
                    "x",
                ]),
                Kind::Percent => words(&["0", "1", "50", "100", "101", "-1", "0.5"]),
                Kind::Size | Kind::SizePerDirection => words(&[
                    "0",
                    "1",
                    "511",
                    "512",
                    "4k",
                    "64k",
                    "1m",
                    "1g",
                    "1p",
                    "16e",
                    "18446744073709551615",
                    "4k,8k",
                    ",,4k",
                    "-4k",
                    "(2^62)",
                ]),
                Kind::SizeOrPercent => words(&[
                    "0", "1", "4k", "1m", "1g", "1p", "0%", "50%", "100%", "101%",
                ]),
                Kind::Time(_) => words(&[
                    "0",
                    "1",
                    "1us",
                    "1ms",
                    "1s",
                    "1h",
                    "50000d",
                    "18446744073709551615",
                    "-1",
                ]),
                Kind::RangePerDirection => words(&[
                    "1k-4k",
                    "4k-1k",
                    "0-0",
                    "512-1m,4k-8k",
                    "1-18446744073709551615",
                ]),
                Kind::SplitPerDirection => words(&[
                    "4k/50:64k/50",
                    "4k/100",
                    "1m/10:4k/90",
                    "4k/0",
                    "0/100",
                    "4k/101",
                ]),
                Kind::FloatList => words(&["50:99", "0", "100:100", "1e308", "nan"]),
                Kind::Choice(choices) => words(choices),
            };
            values.insert(0, def.example.to_string());
            values.extend(def.default.map(str::to_string));
            (def.name, values)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fuzz entry points take any input without panicking, as the fuzzer needs.
    #[test]
    fn each_entry_point_takes_odd_input() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("job.fio");
        std::fs::write(&path, "[x]\nbs=${FUZZ}\nsize=((1+2)*\n").unwrap();
        job_file(&path);
        values("--name=x --bs=4k:8k --size=1g%");
        report_round_trip(b"{\"version\": 1}");
        report_round_trip(b"not json");
    }

    #[test]
    fn option_values_cover_every_option_but_free_text_with_its_example() {
        let options = option_values();
        let (bs, values) = options.iter().find(|(name, _)| *name == "bs").unwrap();
        assert_eq!((*bs, values[0].as_str()), ("bs", "4k"));
        assert!(values.contains(&"4k".to_string()) && values.contains(&"16e".to_string()));
        assert!(options.iter().all(|(name, _)| *name != "filename"));
        let rw = &options.iter().find(|(name, _)| *name == "rw").unwrap().1;
        assert!(rw.contains(&"randtrim".to_string()));
    }
}
