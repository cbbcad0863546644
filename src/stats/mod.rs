//! Latency histograms, summaries, sample series.
pub mod histogram;
pub mod series;
pub mod worker;

pub use histogram::LatHistogram;
pub use series::RateSeries;
pub use worker::{DepthCounters, DirStats, PercentileChoice, WorkerStats};
