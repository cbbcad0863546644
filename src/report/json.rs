//! iolens' native JSON: the model as it is (a run's `RunReport`, `--repeat`'s
//! `RepeatReport`), every field named by the model (units in the names). Stable
//! per `SCHEMA_VERSION`.

use serde::Serialize;

pub(in crate::report) fn render(document: &impl Serialize) -> String {
    serde_json::to_string_pretty(document).expect("the model serializes to JSON")
}

/// The same document on one line.
pub(in crate::report) fn render_line(document: &impl Serialize) -> String {
    serde_json::to_string(document).expect("the model serializes to JSON")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::RunReport;
    use crate::model::{GroupReport, JobReport, LatSummary, SCHEMA_VERSION};

    #[test]
    fn round_trips_through_json() {
        let mut job = JobReport {
            name: "seq-read".into(),
            groupid: 1,
            workers: 4,
            error: Some("read at offset 4096: Input/output error (os error 5)".into()),
            errno: 5,
            options: vec![("bs".into(), "128k".into())],
            runtime_ns: 2_000_000_123,
            ..Default::default()
        };
        job.dirs[0].io_bytes = 1 << 33;
        job.dirs[0].clat = Some(LatSummary {
            min_ns: 1,
            max_ns: u64::MAX,
            mean_ns: 1234.5,
            stddev_ns: 0.25,
            samples: 3,
            percentiles: vec![(99.99, 1128)],
            bins: Default::default(),
        });
        job.depth.level_pct[3] = 12.5;
        let report = RunReport {
            schema_version: SCHEMA_VERSION,
            tool_version: "0.1.0".into(),
            started_unix_ms: 1_700_000_000_000,
            command_line: vec!["run".into(), "--name=x".into()],
            global_options: vec![("direct".into(), "1".into())],
            jobs: vec![job],
            groups: vec![GroupReport {
                id: 1,
                dirs: Default::default(),
                mixed: None,
            }],
            interrupted: true,
            ..Default::default()
        };
        let text = render(&report);
        let back: RunReport = serde_json::from_str(&text).unwrap();
        // The model has no PartialEq; equal JSON renderings mean equal values.
        assert_eq!(render(&back), text);
        assert_eq!(back.jobs[0].dirs[0].clat, report.jobs[0].dirs[0].clat);
        assert!(back.interrupted);
    }
}
