//! Latency histograms, summaries, sample series; statistics over repetitions and comparisons.
pub(crate) mod histogram;
pub(crate) mod schedule;
pub(crate) mod series;
pub(crate) mod significance;
pub(crate) mod summary;
pub(crate) mod worker;

pub(crate) use schedule::ScheduleStats;
pub(crate) use series::{IntervalSampler, RateSeries, Sampling};
pub(crate) use worker::{DepthCounters, PercentileChoice, PrioLat, WorkerStats};
