//! Latency histograms, summaries, sample series.
