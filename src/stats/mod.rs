//! Latency histograms, summaries, sample series; statistics over repetitions and comparisons.
pub mod histogram;
pub mod series;
pub mod significance;
pub mod summary;
pub mod worker;

pub use histogram::LatHistogram;
pub use series::{IntervalSampler, RateSeries, Sampling};
pub use worker::{DepthCounters, DirStats, PercentileChoice, PrioLat, WorkerStats};
