//! `--fio-compat=lenient`: accept what fio silently accepts, rewriting the value the way fio
//! reads it and warning about each one. Strict mode (the default) reports these as errors.

use crate::job::options::{Kind, OptionDef};
use crate::job::raw::{LayeredJob, RawJob};
use crate::units::{self, KbBase, UnitError};

/// Rewrites every value fio would read differently from its text; one warning each.
pub(crate) fn relax(jobs: &mut [LayeredJob]) -> Vec<String> {
    let mut warnings = Vec::new();
    for layered in jobs.iter_mut() {
        relax_layer(&mut layered.global, &mut warnings);
        relax_layer(&mut layered.job, &mut warnings);
    }
    // A global layer is shared by several jobs: say each thing once.
    warnings.dedup();
    warnings
}

fn relax_layer(layer: &mut RawJob, warnings: &mut Vec<String>) {
    let rewrites: Vec<_> = layer
        .options()
        .iter()
        .filter_map(|option| {
            let (value, why) = relaxed(option.def, &option.value)?;
            Some((option.def, value, why, option.source.clone()))
        })
        .collect();
    for (def, value, why, source) in rewrites {
        let original = &layer.get(def).expect("just read").value;
        warnings.push(format!(
            "{source}: {}={original}: read as {value} ({why}, as fio does; strict mode rejects it)",
            def.name
        ));
        layer
            .set(def, Some(&value), source)
            .expect("a relaxed value is never empty");
    }
}

/// The value fio would effectively use, and why, when it differs from the text.
fn relaxed(def: &OptionDef, text: &str) -> Option<(String, &'static str)> {
    let per_side = |fix: fn(&str) -> Option<(String, &'static str)>| {
        let mut why = None;
        let sides: Vec<String> = text
            .split(',')
            .map(|side| match fix(side.trim()) {
                Some((fixed, reason)) => {
                    why = Some(reason);
                    fixed
                }
                None => side.to_string(),
            })
            .collect();
        why.map(|why| (sides.join(","), why))
    };
    match def.kind {
        Kind::SizeOrPercent if text.trim_end().ends_with('%') => None,
        Kind::Size | Kind::Count | Kind::SizeOrPercent => number_without_suffix(text),
        Kind::SizePerDirection | Kind::CountPerDirection => per_side(number_without_suffix),
        Kind::RangePerDirection => per_side(ordered_range),
        _ => None,
    }
}

/// `4q` → `4`: fio ignores a suffix it does not know.
fn number_without_suffix(text: &str) -> Option<(String, &'static str)> {
    match units::parse_size(text, KbBase::Compat1024) {
        Err(UnitError::SizeSuffix(_)) => {
            let digits: String = text.chars().take_while(char::is_ascii_digit).collect();
            (!digits.is_empty()).then_some((digits, "unknown suffix ignored"))
        }
        _ => None,
    }
}

/// `8k-4k` → `4k-8k`: fio swaps a reversed range.
fn ordered_range(text: &str) -> Option<(String, &'static str)> {
    let (low, high) = text.split_once(['-', ':'])?;
    let (min, max) = units::parse_range(text, KbBase::Compat1024).ok()?;
    (min > max).then(|| {
        (
            format!("{}-{}", high.trim(), low.trim()),
            "reversed range swapped",
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::front::cli_args::parse_fio_args;
    use crate::job::options::opt;

    fn relaxed_job(args: &[&str]) -> (RawJob, Vec<String>) {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let (global, jobs) = parse_fio_args(&args).unwrap();
        let mut layered = vec![LayeredJob {
            global,
            job: jobs[0].clone(),
        }];
        let warnings = relax(&mut layered);
        (layered.remove(0).job, warnings)
    }

    #[test]
    fn unknown_suffixes_are_dropped_and_reversed_ranges_swapped_with_warnings() {
        let (job, warnings) = relaxed_job(&[
            "--name=a",
            "--bs=4q,8k",
            "--size=1x",
            "--bsrange=8k-4k,1k-2k",
        ]);
        assert_eq!(job.get(opt::BS).unwrap().value, "4,8k");
        assert_eq!(job.get(opt::SIZE).unwrap().value, "1");
        assert_eq!(job.get(opt::BSRANGE).unwrap().value, "4k-8k,1k-2k");
        assert_eq!(warnings.len(), 3);
        assert_eq!(
            warnings[0],
            "command line argument 2: bs=4q,8k: read as 4,8k (unknown suffix ignored, as fio does; strict mode rejects it)"
        );
    }

    #[test]
    fn valid_values_are_left_alone() {
        let (job, warnings) = relaxed_job(&["--name=a", "--bs=4k", "--size=50%", "--rw=read"]);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(job.get(opt::BS).unwrap().value, "4k");
    }
}
