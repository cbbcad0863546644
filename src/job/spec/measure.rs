//! What is measured and how it is reported: latencies, percentiles, significant figures,
//! unified reporting (the log files are in logs.rs).

use crate::job::choice::choice_words;
use crate::job::error::JobError;
use crate::job::layers::Layers;
use crate::job::options::{opt, OptionDef};
use crate::units::{self, UnitError};
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
pub(crate) struct MeasureSpec {
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
pub(crate) enum UnifiedRw {
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

/// fio's default `percentile_list`.
pub(crate) const DEFAULT_PERCENTILES: [f64; 17] = [
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
        self.parse_defaulted(opt::SIGNIFICANT_FIGURES, |text| {
            match self.parse_u32(text, 1)? {
                figures if figures > 10 => Err(UnitError::Invalid("more than 10".to_string())),
                figures => Ok(figures),
            }
        })
    }
}

#[cfg(test)]
mod tests {
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
}
