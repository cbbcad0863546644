//! Latency histograms, summaries, sample series; statistics over repetitions and comparisons.
pub mod histogram;
pub mod series;
pub mod significance;
pub mod summary;
pub mod worker;

pub use histogram::LatHistogram;
pub use series::{IntervalSampler, RateSeries, Sampling};
pub use worker::{DepthCounters, DirStats, PercentileChoice, PrioLat, WorkerStats};

#[cfg(test)]
mod tests {
    /// stats computes over the model; the renderers in `report` build on stats, never the reverse.
    #[test]
    fn no_stats_module_uses_the_renderers() {
        crate::testutil::assert_module_uses_none("stats", &[concat!("crate::", "report")]);
    }
}
