//! What is measured and how it is reported: latencies, percentiles, significant figures,
//! unified reporting and the log files.

use crate::job::choice::choice_words;
use crate::job::error::JobError;
use crate::job::layers::Layers;
use crate::job::options::{opt, OptionDef};
use crate::units;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Interval of bandwidth/IOPS samples (fio's `bw_avg_time`/`iops_avg_time` default).
const AVG_TIME: Duration = Duration::from_millis(500);
/// fio keeps at most this many percentiles.
const MAX_PERCENTILES: usize = 20;

fn binary() -> bool {
    true
}

/// What is measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeasureSpec {
    pub slat: bool,
    pub clat: bool,
    pub lat: bool,
    /// Percentiles reported for clat (and lat), fio's default list unless given.
    pub percentile_list: Vec<f64>,
    /// Interval of the bandwidth/IOPS samples (fio's `bw_avg_time`/`iops_avg_time`, 500 ms).
    pub avg_time: Duration,
    /// Which latencies get percentiles (and json+ bins): fio's `slat_percentiles`,
    /// `clat_percentiles` and `lat_percentiles`.
    pub slat_percentiles: bool,
    pub clat_percentiles: bool,
    pub lat_percentiles: bool,
    /// fio's `significant_figures` (1..=10) for IOPS and bandwidth in the normal output.
    pub significant_figures: u32,
    /// `kb_base=1024` (fio's default): the normal output's sizes take binary prefixes
    /// (KiB); `kb_base=1000` decimal ones (kB).
    #[serde(default = "binary")]
    pub binary_prefixes: bool,
    /// fio's `unified_rw_reporting`.
    pub unified_rw: UnifiedRw,
    /// fio's `stats`: false runs the job but leaves it out of every report and group total.
    pub stats: bool,
}

/// fio's `unified_rw_reporting`: report each direction, their merge, or both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum UnifiedRw {
    /// `none` / `0`: each direction on its own.
    Separate,
    /// `mixed` / `1`: one report for all directions.
    Mixed,
    /// `both` / `2`: each direction, then the merged report.
    Both,
}

choice_words!(UnifiedRw {
    "none" => UnifiedRw::Separate,
    "mixed" => UnifiedRw::Mixed,
    "both" => UnifiedRw::Both,
    "0" => UnifiedRw::Separate,
    "1" => UnifiedRw::Mixed,
    "2" => UnifiedRw::Both,
});

/// Per-I/O and per-interval log files (fio's `write_*_log`): each `Some` holds the
/// file name prefix (the job name when the option is given without a value).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LogSpec {
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
    pub fn any(&self) -> bool {
        self.bw.is_some() || self.iops.is_some() || self.lat.is_some() || self.hist.is_some()
    }

    /// fio's `per_unit_log` for the bandwidth and IOPS logs: they take a sample per
    /// I/O (averaged per window with `log_avg_msec`) rather than the job's rate per
    /// interval, without `log_avg_msec` or when stored compressed.
    pub fn per_io_rates(&self) -> bool {
        self.avg_msec == 0 || self.store_compressed
    }
}

/// fio's `log_window_value`; fio 3.33's bool `log_max_value` (read when
/// `log_window_value` is not given) means `max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum LogWindow {
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

/// fio's default `percentile_list`.
pub const DEFAULT_PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

impl Layers<'_> {
    pub(crate) fn measure(&self) -> Result<MeasureSpec, JobError> {
        let gtod_reduce = self.bool(opt::GTOD_REDUCE)?;
        let measured =
            |disable: &'static OptionDef| Ok::<_, JobError>(!gtod_reduce && !self.bool(disable)?);
        let percentile_list = match self.given(opt::PERCENTILE_LIST) {
            Some(setting) => {
                let list = units::parse_float_list(setting.text).map_err(|e| setting.invalid(e))?;
                if list.len() > MAX_PERCENTILES || list.iter().any(|p| !(0.0..=100.0).contains(p)) {
                    return Err(setting.invalid(format!(
                        "give at most {MAX_PERCENTILES} percentiles, each from 0 to 100"
                    )));
                }
                list
            }
            None => DEFAULT_PERCENTILES.to_vec(),
        };
        let unified_rw = self.choice(opt::UNIFIED_RW_REPORTING)?;
        Ok(MeasureSpec {
            slat: measured(opt::DISABLE_SLAT)?,
            clat: measured(opt::DISABLE_CLAT)?,
            lat: measured(opt::DISABLE_LAT)?,
            percentile_list,
            avg_time: AVG_TIME,
            slat_percentiles: self.bool(opt::SLAT_PERCENTILES)?,
            clat_percentiles: self.bool(opt::CLAT_PERCENTILES)?,
            lat_percentiles: self.bool(opt::LAT_PERCENTILES)?,
            significant_figures: self.significant_figures()?,
            binary_prefixes: self.kb_base == units::KbBase::Compat1024,
            stats: self.bool(opt::STATS)?,
            unified_rw,
        })
    }

    fn significant_figures(&self) -> Result<u32, JobError> {
        let figures = self.count_u32(opt::SIGNIFICANT_FIGURES, 1)?;
        match self.given(opt::SIGNIFICANT_FIGURES) {
            Some(setting) if figures > 10 => Err(setting.invalid("more than 10")),
            _ => Ok(figures),
        }
    }

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
        let issue_time = self.bool(opt::LOG_ISSUE_TIME)?;
        match self.given(opt::LOG_ISSUE_TIME) {
            Some(setting) if issue_time && (lat.is_none() || !offset) => {
                return Err(setting.invalid("needs write_lat_log and log_offset=1, as in fio"));
            }
            _ => {}
        }
        let store_compressed = self.bool(opt::LOG_STORE_COMPRESSED)?;
        let hist = prefix(opt::WRITE_HIST_LOG);
        let window = match (
            self.given(opt::LOG_WINDOW_VALUE),
            self.bool(opt::LOG_MAX_VALUE)?,
        ) {
            (None, true) => LogWindow::Max,
            _ => self.choice(opt::LOG_WINDOW_VALUE)?,
        };
        match self.given(opt::LOG_STORE_COMPRESSED) {
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
    use crate::job::resolve::tests::{error, job, run};

    #[test]
    fn measurement_options() {
        let spec = job(&["--disable_slat", "--percentile_list=50:99.9"]);
        assert!(!spec.measure.slat && spec.measure.clat && spec.measure.lat);
        assert_eq!(spec.measure.percentile_list, vec![50.0, 99.9]);
        assert!(!job(&["--disable_clat"]).measure.clat);
        assert!(!job(&["--disable_lat"]).measure.lat);
        let m = job(&["--gtod_reduce"]).measure;
        assert!(!m.slat && !m.clat && !m.lat);
        assert!(run(&["--name=a", "--size=1m", "--percentile_list=101"]).is_err());
    }

    #[test]
    fn percentile_switches_and_significant_figures() {
        let m = job(&[]).measure;
        assert!(m.clat_percentiles && !m.lat_percentiles && !m.slat_percentiles);
        assert_eq!(m.significant_figures, 4);
        assert!(
            m.binary_prefixes,
            "expected kb_base=1024's binary prefixes by default"
        );
        assert!(!job(&["--kb_base=1000"]).measure.binary_prefixes);
        let m = job(&[
            "--clat_percentiles=0",
            "--lat_percentiles",
            "--slat_percentiles=1",
        ])
        .measure;
        assert!(!m.clat_percentiles && m.lat_percentiles && m.slat_percentiles);
        assert!(
            error(&["--name=a", "--size=1m", "--significant_figures=11"]).contains("more than 10")
        );
        assert!(error(&["--name=a", "--size=1m", "--significant_figures=0"]).contains("at least 1"));
    }

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
