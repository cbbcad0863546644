//! Pacing: rate caps (`rate`, `rate_iops`), think time and flow control between jobs.

use super::*;
use crate::job::choice::choice_words;
use crate::job::error::JobError;
use crate::job::layers::Layers;
use crate::job::options::opt;
use crate::units::{self, UnitError};
use serde::{Deserialize, Serialize};
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum RateProcess {
    Linear,
    Poisson,
}

choice_words!(RateProcess {
    "linear" => RateProcess::Linear,
    "poisson" => RateProcess::Poisson,
});

/// fio's `thinktime_blocks_type=`: which I/Os `thinktime_blocks` counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ThinktimeCounts {
    Completed,
    Issued,
}

choice_words!(ThinktimeCounts {
    "complete" => ThinktimeCounts::Completed,
    "issue" => ThinktimeCounts::Issued,
});

/// Pacing: rate limits and think time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct PacingSpec {
    /// Bytes per second per direction, 0 = unlimited.
    pub rate: [u64; DDIRS],
    /// I/Os per second per direction, 0 = unlimited.
    pub rate_iops: [u64; DDIRS],
    pub rate_process: RateProcess,
    pub thinktime: Duration,
    /// `thinktime_spin`: the first part of each think time is spent busy (≤ `thinktime`).
    pub thinktime_spin: Duration,
    pub thinktime_blocks: u32,
    /// `thinktime_blocks_type=issue`: `thinktime_blocks` counts issued I/Os, so the
    /// pause comes after that many are sent; false (`complete`) counts completed ones.
    #[serde(default)]
    pub thinktime_counts_issued: bool,
    /// fio's `flow`: token-based flow control between jobs; `None` without a weight.
    #[serde(default)]
    pub flow: Option<FlowSpec>,
}

/// fio's flow control: the jobs sharing a `flow_id` keep the I/Os they issue
/// in the ratio of their `flow` weights; one ahead of its share waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct FlowSpec {
    /// `flow_id`.
    pub id: u32,
    /// `flow`: 1..=1000.
    pub weight: u32,
    /// `flow_sleep`: a job held back waits for its I/Os in flight, then this long,
    /// before it tries again (zero: it tries again at once).
    pub sleep: Duration,
}

/// fio's largest `flow` weight.
const FLOW_MAX_WEIGHT: u32 = 1000;

impl Layers<'_> {
    pub(crate) fn pacing(&self) -> Result<PacingSpec, JobError> {
        let rate = self.per_direction(opt::RATE, |t| units::parse_size(t, self.kb_base))?;
        let rate_iops =
            self.per_direction(opt::RATE_IOPS, |t| units::parse_count(t, self.kb_base))?;
        let rate_process = self.choice(opt::RATE_PROCESS)?;
        Ok(PacingSpec {
            rate: rate.map(Option::unwrap_or_default),
            rate_iops: rate_iops.map(Option::unwrap_or_default),
            rate_process,
            thinktime: self.time(opt::THINKTIME)?.unwrap_or_default(),
            thinktime_spin: self.time(opt::THINKTIME_SPIN)?.unwrap_or_default(),
            thinktime_blocks: self.count_u32(opt::THINKTIME_BLOCKS, 1)?,
            // Unlike the other plain choices, a `:parameter` here is accepted and ignored.
            thinktime_counts_issued: self
                .choice_with_parameter::<ThinktimeCounts>(opt::THINKTIME_BLOCKS_TYPE)?
                .value
                == ThinktimeCounts::Issued,
            flow: self.flow()?,
        })
    }

    fn flow(&self) -> Result<Option<FlowSpec>, JobError> {
        let weight = self.parse_defaulted(opt::FLOW, |text| {
            match units::parse_count(text, self.kb_base)? {
                weight if weight <= u64::from(FLOW_MAX_WEIGHT) => Ok(weight as u32),
                _ => Err(UnitError::Invalid(format!(
                    "must be at most {FLOW_MAX_WEIGHT}"
                ))),
            }
        })?;
        if weight == 0 {
            return Ok(None);
        }
        Ok(Some(FlowSpec {
            id: self.count_u32(opt::FLOW_ID, 0)?,
            weight,
            sleep: Duration::from_micros(self.count_u32(opt::FLOW_SLEEP, 0)?.into()),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::resolve::tests::{error, job};

    #[test]
    fn thinktime_blocks_type_picks_what_is_counted() {
        assert!(!job(&[]).pacing.thinktime_counts_issued);
        let issue = job(&["--thinktime_blocks_type=issue"]).pacing;
        assert!(issue.thinktime_counts_issued);
    }

    #[test]
    fn flow_options() {
        assert_eq!(
            job(&[]).pacing.flow,
            None,
            "expected no flow control by default"
        );
        assert_eq!(
            job(&["--flow_id=3"]).pacing.flow,
            None,
            "expected no flow without a weight"
        );
        assert_eq!(
            job(&["--flow=5", "--flow_id=3", "--flow_sleep=100"])
                .pacing
                .flow,
            Some(FlowSpec {
                id: 3,
                weight: 5,
                sleep: Duration::from_micros(100),
            })
        );
        let refused = error(&["--name=a", "--size=1m", "--flow=1001"]);
        assert!(
            refused.contains("flow=1001") && refused.contains("at most 1000"),
            "expected fio's limit named, saw: {refused}"
        );
    }

    #[test]
    fn pacing_options() {
        let spec = job(&[
            "--rate=,5m",
            "--rate_iops=100",
            "--rate_process=poisson",
            "--thinktime=10",
            "--thinktime_blocks=4",
        ]);
        let p = &spec.pacing;
        assert_eq!(p.rate, [0, 5 << 20, 5 << 20]);
        assert_eq!(p.rate_iops, [100; 3]);
        assert_eq!(p.rate_process, RateProcess::Poisson);
        assert_eq!(p.thinktime, Duration::from_micros(10));
        assert_eq!(p.thinktime_blocks, 4);
    }
}
