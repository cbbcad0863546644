//! The run history: every report in an embedded SQLite file, with the columns
//! that `history`, `compare` and `--trend` search on.
//!
//! Safety under concurrency and crashes comes from SQLite itself: WAL journaling
//! (readers never block the writer, a killed writer's transaction is rolled back
//! on the next open), a busy timeout so a second process waits for the write lock
//! instead of failing, and one transaction per stored run.

mod schema;

use crate::model::metrics::Metric;
use crate::model::RunReport;
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a writer waits for another process's transaction before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Environment variable that chooses the database when `--db` is not given.
pub(crate) const DB_ENV: &str = "IOLENS_DB";

#[derive(Debug, thiserror::Error)]
pub(crate) enum StoreError {
    #[error("history database: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("history database: stored report is not valid JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("history database: {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("no run with id {0} in the history (see `iolens history`)")]
    NotFound(i64),
    #[error("{0}; `iolens history` lists the runs that can still be read")]
    Damaged(Damaged),
    #[error("history database schema version {0} is newer than this iolens understands (up to {max}); upgrade iolens", max = schema::VERSION)]
    NewerSchema(u32),
    #[error("no history database: set --db PATH, {DB_ENV}, XDG_DATA_HOME or HOME")]
    NoLocation,
}

/// The database file: `--db`, else `$IOLENS_DB`, else the user's data directory
/// (`$XDG_DATA_HOME/iolens/history.db`, `~/.local/share/iolens/history.db`).
pub(crate) fn resolve_path(flag: Option<&Path>) -> Result<PathBuf, StoreError> {
    choose_path(flag, |k| std::env::var_os(k))
}

/// [`resolve_path`] with the environment passed in. Empty variables count as unset,
/// and a relative `XDG_DATA_HOME` is ignored, as the XDG Base Directory spec says.
fn choose_path(
    flag: Option<&Path>,
    var: impl Fn(&str) -> Option<std::ffi::OsString>,
) -> Result<PathBuf, StoreError> {
    let env = |k: &str| var(k).filter(|v| !v.is_empty());
    if let Some(p) = flag {
        return Ok(p.to_path_buf());
    }
    if let Some(p) = env(DB_ENV) {
        return Ok(PathBuf::from(p));
    }
    let data_dir = env("XDG_DATA_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| env("HOME").map(|h| PathBuf::from(h).join(".local/share")))
        .ok_or(StoreError::NoLocation)?;
    Ok(data_dir.join("iolens").join("history.db"))
}

/// A stored run whose row cannot be read (a damaged database, a row written by
/// hand): skipped by the listings, named so the user knows it is there.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("run {id} is damaged in the history database ({why})")]
pub(crate) struct Damaged {
    pub id: i64,
    pub why: String,
}

/// What a listing read: the rows it could, and the damaged ones it skipped.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Read<T> {
    pub items: Vec<T>,
    pub damaged: Vec<Damaged>,
}

impl<T> Read<T> {
    /// Sort each row, with its run id, into the items or the damaged runs.
    fn of(rows: impl Iterator<Item = (i64, Result<T, String>)>) -> Self {
        let mut read = Read {
            items: Vec::new(),
            damaged: Vec::new(),
        };
        for (id, row) in rows {
            match row {
                Ok(item) => read.items.push(item),
                Err(why) => read.damaged.push(Damaged { id, why }),
            }
        }
        read
    }
}

/// One stored run, as `iolens history` lists it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RunSummary {
    pub id: i64,
    /// Runs of one `--repeat` (or one arm of `ab`) share the id of their first run.
    pub batch: i64,
    pub started_unix_ms: u64,
    pub host: Option<String>,
    pub kernel: Option<String>,
    pub tool_version: String,
    /// Job names, comma-separated.
    pub jobs: String,
    /// Distinct targets, comma-separated; a temporary one (`quick`'s test file,
    /// removed after the run) is marked "(temporary, removed)".
    pub targets: String,
    /// Stopped early (a signal, an error): its results are partial.
    pub interrupted: bool,
}

/// Which runs to list. Empty fields match everything.
#[derive(Debug, Clone, Default)]
pub(crate) struct Filter {
    /// Substring of a job's target (filename).
    pub target: Option<String>,
    /// Exact job name.
    pub job: Option<String>,
    pub since_unix_ms: Option<u64>,
}

/// One job's metric in one stored run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MetricPoint {
    pub run_id: i64,
    pub started_unix_ms: u64,
    pub job: String,
    pub value: f64,
    /// Fingerprint of the job's configuration (options and target); None for a
    /// report this version could not read.
    pub config_fingerprint: Option<String>,
    /// The configuration itself: option name → value.
    pub config: BTreeMap<String, String>,
    /// The run was stopped early: the value is of a partial run.
    pub interrupted: bool,
}

pub(crate) struct Store {
    conn: Connection,
}

impl Store {
    /// Open (creating file, directory and schema if needed) and migrate to the current schema.
    pub(crate) fn open(path: &Path) -> Result<Store, StoreError> {
        use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
        let io = |p: &Path| {
            let path = p.to_path_buf();
            move |source| StoreError::Io { path, source }
        };
        // The history holds command lines: directories and the file iolens creates are
        // the user's alone (an existing directory, e.g. a `--db` in /tmp, is left as is).
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(io(dir))?;
        }
        // SQLite gives the -wal and -shm files the database file's mode.
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path)
        {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(io(path)(e)),
        }
        let mut conn = Connection::open(path)?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        // With WAL, NORMAL still never corrupts; a crash may only lose the last commits.
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        schema::migrate(&mut conn)?;
        Ok(Store { conn })
    }

    /// Store a report; `batch` groups it with earlier runs (None starts a new batch).
    pub(crate) fn insert(
        &mut self,
        report: &RunReport,
        batch: Option<i64>,
    ) -> Result<i64, StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let id = schema::insert_run(&tx, report, batch, &HostFacts::of_this_system())?;
        tx.commit()?;
        Ok(id)
    }

    /// The report of run `id`; a row that cannot be read is `Damaged`, not missing.
    pub(crate) fn report(&self, id: i64) -> Result<RunReport, StoreError> {
        let stored: Result<String, rusqlite::Error> = self
            .conn
            .query_row("SELECT report_json FROM runs WHERE id = ?1", [id], |r| {
                Ok(r.get::<_, String>(0))
            })
            .optional()?
            .ok_or(StoreError::NotFound(id))?;
        decode_report(stored).map_err(|why| StoreError::Damaged(Damaged { id, why }))
    }

    /// Every run of the batch that run `id` belongs to, in run order; damaged
    /// runs of the batch are skipped and named, unless `id` is one of them.
    pub(crate) fn batch_of(&self, id: i64) -> Result<Read<RunReport>, StoreError> {
        let mut stmt = self.conn.prepare(
            "SELECT id, report_json FROM runs
             WHERE batch = (SELECT batch FROM runs WHERE id = ?1) ORDER BY id",
        )?;
        let rows = stmt
            .query_map([id], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1))))?
            .collect::<Result<Vec<_>, _>>()?;
        let read = Read::of(
            rows.into_iter()
                .map(|(run, stored)| (run, decode_report(stored))),
        );
        if let Some(own) = read.damaged.iter().find(|d| d.id == id) {
            return Err(StoreError::Damaged(own.clone()));
        }
        if read.items.is_empty() {
            // No batch to go by (missing, or its batch unreadable): the run alone, if any.
            return Ok(Read {
                items: vec![self.report(id)?],
                damaged: Vec::new(),
            });
        }
        Ok(read)
    }

    /// Stored runs matching `filter`, oldest first.
    pub(crate) fn list(&self, filter: &Filter) -> Result<Read<RunSummary>, StoreError> {
        let mut stmt = self.conn.prepare(
            "SELECT r.id, r.batch, r.started_unix_ms, r.host, r.kernel, r.tool_version,
                    r.interrupted, group_concat(j.job, ','),
                    group_concat(DISTINCT CASE WHEN j.temporary THEN j.target || ' (temporary, removed)'
                                               ELSE j.target END)
             FROM runs r LEFT JOIN run_jobs j ON j.run_id = r.id
             WHERE r.started_unix_ms >= ?1
               AND (?2 IS NULL OR r.id IN (SELECT run_id FROM run_jobs WHERE instr(target, ?2) > 0))
               AND (?3 IS NULL OR r.id IN (SELECT run_id FROM run_jobs WHERE job = ?3))
             GROUP BY r.id ORDER BY r.started_unix_ms, r.id",
        )?;
        let rows = stmt.query_map(
            params![
                filter.since_unix_ms.unwrap_or(0) as i64,
                filter.target,
                filter.job
            ],
            |r| {
                let summary = || -> rusqlite::Result<RunSummary> {
                    Ok(RunSummary {
                        id: r.get(0)?,
                        batch: r.get(1)?,
                        started_unix_ms: r.get::<_, i64>(2)? as u64,
                        host: r.get(3)?,
                        kernel: r.get(4)?,
                        tool_version: r.get(5)?,
                        interrupted: r.get(6)?,
                        jobs: r.get::<_, Option<String>>(7)?.unwrap_or_default(),
                        targets: r.get::<_, Option<String>>(8)?.unwrap_or_default(),
                    })
                };
                Ok((r.get(0)?, summary().map_err(|e| e.to_string())))
            },
        )?;
        Ok(Read::of(rows.collect::<Result<Vec<_>, _>>()?.into_iter()))
    }

    /// One metric per job and run, oldest first, for runs matching `filter`.
    pub(crate) fn metric_points(
        &self,
        metric: Metric,
        filter: &Filter,
    ) -> Result<Read<MetricPoint>, StoreError> {
        let sql = format!(
            "SELECT r.id, r.started_unix_ms, j.job, j.{column}, j.config_fingerprint, j.config,
                    r.interrupted
             FROM runs r JOIN run_jobs j ON j.run_id = r.id
             WHERE j.{column} IS NOT NULL AND r.started_unix_ms >= ?1
               AND (?2 IS NULL OR instr(j.target, ?2) > 0)
               AND (?3 IS NULL OR j.job = ?3)
             ORDER BY r.started_unix_ms, r.id",
            column = schema::metric_column(metric)
        );
        let mut stmt = self.conn.prepare(&sql)?;
        let rows = stmt.query_map(
            params![
                filter.since_unix_ms.unwrap_or(0) as i64,
                filter.target,
                filter.job
            ],
            |r| {
                let point = || -> Result<MetricPoint, String> {
                    let fail = |e: rusqlite::Error| e.to_string();
                    let config = r.get::<_, Option<String>>(5).map_err(fail)?;
                    Ok(MetricPoint {
                        run_id: r.get(0).map_err(fail)?,
                        started_unix_ms: r.get::<_, i64>(1).map_err(fail)? as u64,
                        job: r.get(2).map_err(fail)?,
                        value: r.get(3).map_err(fail)?,
                        config_fingerprint: r.get(4).map_err(fail)?,
                        config: match config.filter(|c| !c.is_empty()) {
                            Some(c) => serde_json::from_str(&c)
                                .map_err(|e| format!("its job configuration: {e}"))?,
                            None => BTreeMap::new(),
                        },
                        interrupted: r.get(6).map_err(fail)?,
                    })
                };
                Ok((r.get(0)?, point()))
            },
        )?;
        Ok(Read::of(rows.collect::<Result<Vec<_>, _>>()?.into_iter()))
    }
}

/// A stored report's JSON, read: why not when it cannot be.
fn decode_report(stored: Result<String, rusqlite::Error>) -> Result<RunReport, String> {
    let json = stored.map_err(|e| e.to_string())?;
    serde_json::from_str(&json).map_err(|e| format!("its report is not valid JSON: {e}"))
}

/// Host name and kernel release of the machine storing a run; a report that
/// records its own environment takes precedence.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct HostFacts {
    pub host: Option<String>,
    pub kernel: Option<String>,
}

impl HostFacts {
    fn of_this_system() -> HostFacts {
        let read = |p: &str| {
            std::fs::read_to_string(p)
                .ok()
                .map(|s| s.trim().to_string())
        };
        HostFacts {
            host: read("/proc/sys/kernel/hostname"),
            kernel: read("/proc/sys/kernel/osrelease"),
        }
    }
}

#[cfg(test)]
mod tests;
