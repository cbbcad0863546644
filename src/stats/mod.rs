//! Latency histograms, summaries, sample series; statistics over repetitions and comparisons.
pub mod compare;
pub mod histogram;
pub mod repeat;
pub mod series;
pub mod worker;

pub use histogram::LatHistogram;
pub use series::{IntervalSampler, RateSeries};
pub use worker::{DepthCounters, DirStats, PercentileChoice, WorkerStats};
