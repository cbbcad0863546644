//! Latency histograms, summaries, sample series; statistics over repetitions and comparisons.
pub mod histogram;
pub mod series;
pub mod significance;
pub mod summary;
pub mod worker;

pub use histogram::LatHistogram;
pub use series::{IntervalSampler, RateSeries};
pub use worker::{DepthCounters, DirStats, PercentileChoice, WorkerStats};

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// Every .rs file under `dir`, with its text.
    fn sources(dir: &Path, out: &mut Vec<(String, String)>) {
        for entry in std::fs::read_dir(dir).expect("read the source directory") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                sources(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).expect("read a source file");
                out.push((path.display().to_string(), text));
            }
        }
    }

    /// stats computes over the model; the renderers in `report` build on stats, never the reverse.
    #[test]
    fn no_stats_module_uses_the_renderers() {
        let mut files = Vec::new();
        sources(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("src/stats"),
            &mut files,
        );
        assert!(
            files.len() >= 6,
            "expected the stats sources, found {}",
            files.len()
        );
        let renderers = concat!("crate::", "report");
        for (file, source) in files {
            assert!(
                !source.contains(renderers),
                "expected {file} not to use {renderers}, but it does"
            );
        }
    }
}
