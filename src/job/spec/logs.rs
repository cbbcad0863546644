//! The log files a job writes (fio's `write_*_log` and the `log_*` options): `LogSpec`.

use crate::job::choice::choice_words;
use crate::job::error::JobError;
use crate::job::layers::Layers;
use crate::job::options::{opt, OptionDef};
use serde::{Deserialize, Serialize};

/// Per-I/O and per-interval log files (fio's `write_*_log`): each `Some` holds the
/// file name prefix (the job name when the option is given without a value).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub(crate) struct LogSpec {
    pub bw: Option<String>,
    pub iops: Option<String>,
    /// slat, clat and lat logs.
    pub lat: Option<String>,
    /// Completion latency histograms, one line per `hist_msec` window.
    pub hist: Option<String>,
    /// Window of averaged entries, ms; 0 logs every I/O.
    pub avg_msec: u64,
    /// Window of histogram entries, ms; 0 writes no histogram entries (as fio).
    pub hist_msec: u64,
    /// What a windowed entry holds: the mean, the maximum (latency logs), or both.
    pub window: LogWindow,
    /// Entries carry the I/O's offset.
    pub offset: bool,
    /// The priority column holds the I/O priority (`0x%04x`), not only "realtime or not".
    pub prio: bool,
    /// slat and clat entries end with the I/O's issue time.
    pub issue_time: bool,
    /// File names carry the worker's number (`name_bw.1.log`); off, a job's
    /// workers share one file.
    pub per_job: bool,
    /// `log_store_compressed`: the files are fio 3.33's zlib-compressed binary samples
    /// (`name_bw.1.log.fz`).
    pub store_compressed: bool,
}

impl LogSpec {
    /// True when any log is written; the hot loop checks only this.
    pub(crate) fn any(&self) -> bool {
        self.bw.is_some() || self.iops.is_some() || self.lat.is_some() || self.hist.is_some()
    }

    /// fio's `per_unit_log` for the bandwidth and IOPS logs: they take a sample per
    /// I/O (averaged per window with `log_avg_msec`) rather than the job's rate per
    /// interval, without `log_avg_msec` or when stored compressed.
    pub(crate) fn per_io_rates(&self) -> bool {
        self.avg_msec == 0 || self.store_compressed
    }
}

/// fio's `log_window_value`; fio 3.33's bool `log_max_value` (read when
/// `log_window_value` is not given) means `max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub(crate) enum LogWindow {
    #[default]
    Avg,
    Max,
    Both,
}

choice_words!(LogWindow {
    "avg" => LogWindow::Avg,
    "max" => LogWindow::Max,
    "both" => LogWindow::Both,
    "0" => LogWindow::Avg,
    "1" => LogWindow::Max,
});

impl Layers<'_> {
    pub(crate) fn logs(&self) -> Result<LogSpec, JobError> {
        // A log option given without a name uses the job's name, as fio does.
        let prefix = |def: &'static OptionDef| {
            self.given(def).map(|s| match s.text.trim() {
                "" => self.job.name.clone(),
                text => text.to_string(),
            })
        };
        let lat = prefix(opt::WRITE_LAT_LOG);
        let offset = self.bool(opt::LOG_OFFSET)?;
        let (issue_time, issue_time_given) = self.bool_and_given(opt::LOG_ISSUE_TIME)?;
        match issue_time_given {
            Some(setting) if issue_time && (lat.is_none() || !offset) => {
                return Err(setting.invalid("needs write_lat_log and log_offset=1, as in fio"));
            }
            _ => {}
        }
        let (store_compressed, store_compressed_given) =
            self.bool_and_given(opt::LOG_STORE_COMPRESSED)?;
        let hist = prefix(opt::WRITE_HIST_LOG);
        let window = match (
            self.given(opt::LOG_WINDOW_VALUE),
            self.bool(opt::LOG_MAX_VALUE)?,
        ) {
            (None, true) => LogWindow::Max,
            _ => self.choice(opt::LOG_WINDOW_VALUE)?,
        };
        match store_compressed_given {
            Some(setting) if store_compressed => {
                let clash = [
                    (hist.is_some(), "write_hist_log"),
                    (window == LogWindow::Both, "log_window_value=both"),
                    (issue_time, "log_issue_time=1"),
                ]
                .into_iter()
                .find_map(|(given, name)| given.then_some(name));
                if let Some(name) = clash {
                    return Err(setting.invalid(format!(
                        "cannot store {name}'s entries: fio 3.33's compressed samples have no \
                         room for them; leave out {name} or log_store_compressed"
                    )));
                }
            }
            _ => {}
        }
        Ok(LogSpec {
            bw: prefix(opt::WRITE_BW_LOG),
            iops: prefix(opt::WRITE_IOPS_LOG),
            lat,
            hist,
            avg_msec: self.count(opt::LOG_AVG_MSEC)?.unwrap_or_default(),
            hist_msec: self.count(opt::LOG_HIST_MSEC)?.unwrap_or_default(),
            window,
            offset,
            prio: self.bool(opt::LOG_PRIO)?,
            issue_time,
            per_job: self.bool(opt::PER_JOB_LOGS)?,
            store_compressed,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::resolve::tests::{error, job};

    #[test]
    fn log_options() {
        assert_eq!(
            job(&[]).logs,
            LogSpec {
                per_job: true,
                ..LogSpec::default()
            }
        );
        assert!(!job(&[]).logs.any());
        let logs = job(&[
            "--write_bw_log=bw",
            "--write_lat_log=",
            "--write_hist_log=h",
            "--log_avg_msec=250",
            "--log_hist_msec=1000",
            "--log_max_value",
            "--log_offset=1",
            "--per_job_logs=0",
        ])
        .logs;
        assert_eq!(logs.bw.as_deref(), Some("bw"));
        assert_eq!(
            logs.lat.as_deref(),
            Some("t"),
            "an empty name means the job's"
        );
        assert_eq!((logs.iops, logs.hist.as_deref()), (None, Some("h")));
        assert_eq!((logs.avg_msec, logs.hist_msec), (250, 1000));
        assert!(logs.window == LogWindow::Max && logs.offset && !logs.per_job);
        let logs = job(&[
            "--write_lat_log=l",
            "--log_window_value=both",
            "--log_prio=1",
            "--log_offset=1",
            "--log_issue_time=1",
        ])
        .logs;
        assert_eq!(
            (logs.window, logs.prio, logs.issue_time),
            (LogWindow::Both, true, true),
            "expected log_window_value=both, log_prio and log_issue_time to be read"
        );
        for without in [
            &[
                "--name=t",
                "--size=1m",
                "--log_issue_time=1",
                "--log_offset=1",
            ][..],
            &[
                "--name=t",
                "--size=1m",
                "--log_issue_time=1",
                "--write_lat_log=l",
            ][..],
        ] {
            let said = error(without);
            assert!(
                said.contains("log_issue_time=1") && said.contains("write_lat_log and log_offset"),
                "expected {without:?} to be refused naming what log_issue_time needs, got: {said}"
            );
        }
    }

    #[test]
    fn stored_compressed_logs_refuse_what_fio_333_samples_cannot_hold() {
        let logs = job(&["--write_bw_log=b", "--log_store_compressed=1"]).logs;
        assert!(
            logs.store_compressed,
            "expected log_store_compressed=1 to be read"
        );
        for clash in [
            "--write_hist_log=h",
            "--log_window_value=both",
            "--log_issue_time=1",
        ] {
            let args = [
                "--name=t",
                "--size=1m",
                "--write_lat_log=l",
                "--log_offset=1",
                "--log_store_compressed=1",
                clash,
            ];
            let said = error(&args);
            let name = clash.trim_start_matches("--").split('=').next().unwrap();
            assert!(
                said.contains("log_store_compressed=1") && said.contains(name),
                "expected {clash} to be refused with log_store_compressed, naming both, got: {said}"
            );
        }
    }
}
