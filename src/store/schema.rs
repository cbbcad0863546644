//! Schema versions and the migrations between them, tracked in SQLite's
//! `user_version`. A migration runs in the same write transaction as its version
//! bump, so a crash leaves either the old schema or the new one.
//!
//! v1: `runs(id, started_unix_ms, report_json)`: reports only.
//! v2: batches, host/kernel/version/environment fingerprint columns, and a
//!     `run_jobs` row per job with its target, engine and headline metrics;
//!     existing v1 reports are indexed during the migration.
//! v3: per job its configuration (`config`: the options as JSON, a temporary
//!     target's name replaced by its directory), its fingerprint, and whether the
//!     target was a temporary file; stored jobs are indexed again to fill them.
//! v4: per run whether it was interrupted (its results partial), read from the
//!     stored reports.

use super::{HostFacts, StoreError};
use crate::model::metrics::Metric;
use crate::model::RunReport;
use crate::series::fingerprint::{fingerprint, fnv1a, is_temporary_target, job_configuration};
use rusqlite::{params, Connection, Transaction, TransactionBehavior};

/// The schema this iolens writes.
pub(super) const VERSION: u32 = 4;

const V1: &str = "
CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    started_unix_ms INTEGER NOT NULL,
    report_json TEXT NOT NULL
);
CREATE INDEX runs_started ON runs(started_unix_ms);
";

pub(super) const V2: &str = "
ALTER TABLE runs ADD COLUMN batch INTEGER;
ALTER TABLE runs ADD COLUMN host TEXT;
ALTER TABLE runs ADD COLUMN kernel TEXT;
ALTER TABLE runs ADD COLUMN tool_version TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN env_fingerprint TEXT;
CREATE TABLE run_jobs (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    job TEXT NOT NULL,
    target TEXT NOT NULL,
    engine TEXT NOT NULL,
    iops REAL,
    bw_bytes_per_sec REAL,
    clat_mean_ns REAL,
    clat_p99_ns REAL,
    cpu_ns_per_io REAL
);
CREATE INDEX run_jobs_run ON run_jobs(run_id);
CREATE INDEX run_jobs_job ON run_jobs(job);
CREATE INDEX runs_batch ON runs(batch);
";

const V3: &str = "
ALTER TABLE run_jobs ADD COLUMN config TEXT;
ALTER TABLE run_jobs ADD COLUMN config_fingerprint TEXT;
ALTER TABLE run_jobs ADD COLUMN temporary INTEGER NOT NULL DEFAULT 0;
";

const V4: &str = "
ALTER TABLE runs ADD COLUMN interrupted INTEGER NOT NULL DEFAULT 0;
UPDATE runs SET interrupted = 1
 WHERE json_valid(report_json) AND json_extract(report_json, '$.interrupted') = 1;
";

/// Bring the database to `VERSION`, one step at a time.
pub(super) fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    // IMMEDIATE takes the write lock before reading the version, so two processes
    // opening a new database cannot both run the same migration.
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let found: u32 = tx.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if found > VERSION {
        return Err(StoreError::NewerSchema(found));
    }
    if found < 1 {
        tx.execute_batch(V1)?;
    }
    if found < 2 {
        tx.execute_batch(V2)?;
    }
    if found < 3 {
        tx.execute_batch(V3)?;
    }
    if found < 4 {
        tx.execute_batch(V4)?;
    }
    // Indexing writes the newest columns, so it runs once they all exist.
    if found < 2 {
        index_v1_reports(&tx)?;
    } else if found < 3 {
        index_jobs_again(&tx)?;
    }
    tx.pragma_update(None, "user_version", VERSION)?;
    tx.commit()?;
    Ok(())
}

/// Fill the v2 columns of reports stored under v1. Each is its own batch; host
/// and kernel are known only if the report recorded them.
fn index_v1_reports(tx: &Transaction) -> Result<(), StoreError> {
    for (id, report) in stored_reports(tx)? {
        // A report from a model this version cannot read keeps empty columns
        // rather than blocking the upgrade.
        match report {
            Some(report) => index_run(tx, id, id, &report, &HostFacts::default())?,
            None => {
                tx.execute("UPDATE runs SET batch = ?1 WHERE id = ?1", [id])?;
            }
        }
    }
    Ok(())
}

/// Every stored run's id and report; None where this version cannot read it.
fn stored_reports(tx: &Transaction) -> Result<Vec<(i64, Option<RunReport>)>, StoreError> {
    let rows: Vec<(i64, String)> = tx
        .prepare("SELECT id, report_json FROM runs")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    Ok(rows
        .into_iter()
        .map(|(id, json)| (id, serde_json::from_str(&json).ok()))
        .collect())
}

/// Index the jobs of reports stored under v2 again, for the v3 columns. A report
/// this version cannot read keeps its rows (without a configuration, it joins no trend).
fn index_jobs_again(tx: &Transaction) -> Result<(), StoreError> {
    for (id, report) in stored_reports(tx)? {
        if let Some(report) = report {
            tx.execute("DELETE FROM run_jobs WHERE run_id = ?1", [id])?;
            index_jobs(tx, id, &report)?;
        }
    }
    Ok(())
}

/// Store one report with its columns; returns its id.
pub(super) fn insert_run(
    tx: &Transaction,
    report: &RunReport,
    batch: Option<i64>,
    facts: &HostFacts,
) -> Result<i64, StoreError> {
    tx.execute(
        "INSERT INTO runs (started_unix_ms, report_json) VALUES (?1, ?2)",
        params![
            report.started_unix_ms as i64,
            serde_json::to_string(report)?
        ],
    )?;
    let id = tx.last_insert_rowid();
    index_run(tx, id, batch.unwrap_or(id), report, facts)?;
    Ok(id)
}

fn index_run(
    tx: &Transaction,
    id: i64,
    batch: i64,
    report: &RunReport,
    facts: &HostFacts,
) -> Result<(), StoreError> {
    let value = serde_json::to_value(report)?;
    let environment = value.get("environment");
    let recorded = |key: &str| {
        environment
            .and_then(|e| e.get(key))
            .and_then(|v| v.as_str())
            .map(str::to_string)
    };
    let host = recorded("hostname").or_else(|| facts.host.clone());
    let kernel = recorded("kernel").or_else(|| facts.kernel.clone());
    let environment_text = match environment {
        Some(env) => env.to_string(),
        None => format!("{host:?}/{kernel:?}"),
    };
    tx.execute(
        "UPDATE runs SET batch = ?2, host = ?3, kernel = ?4, tool_version = ?5, env_fingerprint = ?6,
                         interrupted = ?7
         WHERE id = ?1",
        params![
            id,
            batch,
            host,
            kernel,
            report.tool_version,
            format!("{:016x}", fnv1a(environment_text.as_bytes())),
            report.interrupted
        ],
    )?;
    index_jobs(tx, id, report)
}

/// One `run_jobs` row per job of `report`.
fn index_jobs(tx: &Transaction, id: i64, report: &RunReport) -> Result<(), StoreError> {
    for job in &report.jobs {
        let configuration = job_configuration(report, job);
        let option = |name: &str| {
            job.options
                .iter()
                .chain(&report.global_options)
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        };
        let target = option("filename").unwrap_or_default();
        tx.execute(
            "INSERT INTO run_jobs (run_id, job, target, engine, iops, bw_bytes_per_sec,
                                   clat_mean_ns, clat_p99_ns, cpu_ns_per_io,
                                   config, config_fingerprint, temporary)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            params![
                id,
                job.name,
                target,
                option("ioengine").unwrap_or_default(),
                Metric::Iops.of(job),
                Metric::Bandwidth.of(job),
                Metric::ClatMean.of(job),
                Metric::ClatP99.of(job),
                Metric::CpuPerIo.of(job),
                serde_json::to_string(&configuration)?,
                fingerprint(&configuration),
                is_temporary_target(&target),
            ],
        )?;
    }
    Ok(())
}

/// The `run_jobs` column holding a metric.
pub(super) fn metric_column(metric: Metric) -> &'static str {
    match metric {
        Metric::Iops => "iops",
        Metric::Bandwidth => "bw_bytes_per_sec",
        Metric::ClatMean => "clat_mean_ns",
        Metric::ClatP99 => "clat_p99_ns",
        Metric::CpuPerIo => "cpu_ns_per_io",
    }
}
