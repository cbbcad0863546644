//! A job's configuration as runs are compared by: its options (the job's over
//! the globals) with the name of a temporary target replaced by its directory.
//! `compare` lists the differences of these, and the history stores their
//! fingerprint so that `history --trend` follows only like-for-like runs.

use crate::model::{JobReport, RunReport};
use std::collections::BTreeMap;
use std::path::Path;

/// How the test files iolens creates and removes itself (`quick`'s) are named.
pub(crate) const TEMPORARY_TARGET_PREFIX: &str = ".iolens-quick-";

/// A file iolens created for one run and removed after it: its random name
/// says nothing about the configuration.
pub(crate) fn is_temporary_target(path: &str) -> bool {
    Path::new(path)
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with(TEMPORARY_TARGET_PREFIX))
}

/// Option name → value for `job` of `report`, as compared across runs.
pub(crate) fn job_configuration(report: &RunReport, job: &JobReport) -> BTreeMap<String, String> {
    report
        .global_options
        .iter()
        .chain(&job.options)
        .map(|(k, v)| (k.clone(), comparable_value(k, v)))
        .collect()
}

fn comparable_value(option: &str, value: &str) -> String {
    match option {
        "filename" => comparable_path(value),
        _ => value.to_string(),
    }
}

/// `path` as runs are compared by: a temporary target becomes its directory
/// and "(temporary file)", any other path stays as it is.
pub(crate) fn comparable_path(path: &str) -> String {
    if !is_temporary_target(path) {
        return path.to_string();
    }
    match Path::new(path).parent() {
        Some(dir) if !dir.as_os_str().is_empty() => {
            format!("{}/(temporary file)", dir.display())
        }
        _ => "(temporary file)".into(),
    }
}

/// A stable 16-hex-digit fingerprint of a configuration.
pub(crate) fn fingerprint(configuration: &BTreeMap<String, String>) -> String {
    let text: String = configuration
        .iter()
        .map(|(k, v)| format!("{k}={v}\n"))
        .collect();
    format!("{:016x}", fnv1a(text.as_bytes()))
}

/// FNV-1a: a stable 64-bit hash (std's hasher may change between Rust releases,
/// and fingerprints must match across iolens builds).
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::run_report;

    #[test]
    fn a_temporary_targets_name_is_not_part_of_the_configuration() {
        let with_target = |path: &str, bs: &str| {
            let mut r = run_report(&[("j", 100.0)]);
            r.global_options = vec![("filename".into(), path.into())];
            r.jobs[0].options = vec![("bs".into(), bs.into())];
            r
        };
        let config = |r: &RunReport| job_configuration(r, &r.jobs[0]);
        let a = with_target("/mnt/d/.iolens-quick-3m0CGM", "4k");
        let b = with_target("/mnt/d/.iolens-quick-Zx81Qa", "4k");
        assert_eq!(
            config(&a),
            config(&b),
            "expected two temporary files in one directory to be one configuration"
        );
        assert_eq!(config(&a)["filename"], "/mnt/d/(temporary file)");
        let elsewhere = with_target("/mnt/e/.iolens-quick-3m0CGM", "4k");
        let bigger = with_target("/mnt/d/.iolens-quick-3m0CGM", "64k");
        let kept = with_target("/mnt/d/data", "4k");
        for other in [&elsewhere, &bigger, &kept] {
            assert_ne!(
                fingerprint(&config(&a)),
                fingerprint(&config(other)),
                "expected another directory, bs or a kept file to be another configuration: {:?}",
                config(other)
            );
        }
    }
}
