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
}
