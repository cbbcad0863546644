//! Runs taken together: a `--repeat` series and two results compared. What
//! makes runs comparable (`fingerprint`: a job's configuration, a temporary
//! target by its directory, the fingerprint the history keeps), the statistics
//! and findings over repetitions (`repetitions`), and per job and metric the
//! change from one side to the other (`metric_changes`). The statistics
//! themselves are `stats`'; the runs of a series are started by
//! `cmd::common::run_series`; `report` renders all of it.
pub(crate) mod fingerprint;
pub(crate) mod metric_changes;
pub(crate) mod repetitions;
