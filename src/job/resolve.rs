//! Raw options → `JobSpec`: precedence (job > global > table default), typed parsing and
//! the checks that need several options at once.

use super::error::JobError;
use super::options::{self, Kind, OptionDef, Status};
use super::raw::{LayeredJob, RawJob, RawOption, Source};
use super::spec::*;
use crate::units::{self, KbBase, UnitError};
use std::fmt::Display;
use std::path::PathBuf;
use std::time::Duration;

mod verify;

/// Resolved jobs plus notes about things accepted but probably not meant.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    pub jobs: Vec<JobSpec>,
    pub warnings: Vec<String>,
}

/// Resolves every job against the global options.
pub fn resolve(global: &RawJob, jobs: &[RawJob]) -> Result<Resolved, JobError> {
    resolve_pairs(jobs.iter().map(|job| (job, global)))
}

/// Resolves jobs that each carry their own global options (job files: the `[global]`
/// sections above each job).
pub fn resolve_layered(jobs: &[LayeredJob]) -> Result<Resolved, JobError> {
    resolve_pairs(jobs.iter().map(|layered| (&layered.job, &layered.global)))
}

fn resolve_pairs<'a>(
    pairs: impl ExactSizeIterator<Item = (&'a RawJob, &'a RawJob)>,
) -> Result<Resolved, JobError> {
    if pairs.len() == 0 {
        return Err(JobError::NoJobs);
    }
    let mut warnings = Vec::new();
    let mut jobs: Vec<JobSpec> = Vec::with_capacity(pairs.len());
    for (job, global) in pairs {
        let spec = Layers::new(job, global)?.job_spec(&mut warnings)?;
        if let Some(waitee) = &spec.control.wait_for {
            if !jobs.iter().any(|earlier| &earlier.name == waitee) {
                let setting = Layers::new(job, global)?
                    .given("wait_for")
                    .expect("wait_for was given");
                return Err(setting.invalid_with_hint(
                    "names no earlier job",
                    "wait_for= takes the name of a job defined above this one",
                ));
            }
        }
        jobs.push(spec);
    }
    Ok(Resolved { jobs, warnings })
}

/// Interval of bandwidth/IOPS samples (fio's `bw_avg_time`/`iops_avg_time` default).
const AVG_TIME: Duration = Duration::from_millis(500);
/// fio keeps at most this many percentiles.
const MAX_PERCENTILES: usize = 20;

static DEFAULT_SOURCE: Source = Source::Default;

/// A value in effect for one job: what was written and where.
#[derive(Clone, Copy)]
pub(crate) struct Setting<'a> {
    def: &'static OptionDef,
    text: &'a str,
    source: &'a Source,
}

impl<'a> Setting<'a> {
    fn given(option: &'a RawOption) -> Self {
        Self {
            def: option.def,
            text: &option.value,
            source: &option.source,
        }
    }

    pub(crate) fn invalid(&self, reason: impl Display) -> JobError {
        self.invalid_with_hint(reason, self.def.hint())
    }

    pub(crate) fn invalid_with_hint(
        &self,
        reason: impl Display,
        hint: impl Into<String>,
    ) -> JobError {
        JobError::InvalidValue {
            at: self.source.clone(),
            option: self.def.name,
            value: self.text.to_string(),
            reason: reason.to_string(),
            hint: hint.into(),
        }
    }
}

/// One job's options with the global section and the table defaults behind it.
pub(crate) struct Layers<'a> {
    pub(crate) job: &'a RawJob,
    global: &'a RawJob,
    kb_base: KbBase,
}

fn def(name: &str) -> &'static OptionDef {
    options::find(name).expect("resolve asks only for options in the table")
}

impl<'a> Layers<'a> {
    fn new(job: &'a RawJob, global: &'a RawJob) -> Result<Self, JobError> {
        let mut layers = Self {
            job,
            global,
            kb_base: KbBase::default(),
        };
        let (base, _, setting) = layers.choice("kb_base")?;
        layers.kb_base = if base == "1000" {
            KbBase::Si1000
        } else {
            KbBase::Compat1024
        };
        layers.no_parameter(base, setting)?;
        Ok(layers)
    }

    /// The job's own setting, else the global one (no default).
    pub(crate) fn given(&self, name: &str) -> Option<Setting<'a>> {
        self.job
            .get(name)
            .or_else(|| self.global.get(name))
            .map(Setting::given)
    }

    fn default(name: &str) -> Option<Setting<'static>> {
        let def = def(name);
        def.default.map(|text| Setting {
            def,
            text,
            source: &DEFAULT_SOURCE,
        })
    }

    fn setting(&self, name: &str) -> Option<Setting<'a>> {
        self.given(name).or_else(|| Self::default(name))
    }

    fn parse<T>(
        &self,
        name: &str,
        parse: impl Fn(&str) -> Result<T, UnitError>,
    ) -> Result<Option<T>, JobError> {
        self.setting(name)
            .map(|s| parse(s.text).map_err(|e| s.invalid(e)))
            .transpose()
    }

    /// For options that always have a table default.
    fn parse_defaulted<T>(
        &self,
        name: &str,
        parse: impl Fn(&str) -> Result<T, UnitError>,
    ) -> Result<T, JobError> {
        Ok(self
            .parse(name, parse)?
            .expect("option has a default in the table"))
    }

    pub(crate) fn bool(&self, name: &str) -> Result<bool, JobError> {
        self.parse_defaulted(name, units::parse_bool)
    }

    fn count(&self, name: &str) -> Result<Option<u64>, JobError> {
        self.parse(name, |text| units::parse_count(text, self.kb_base))
    }

    /// A defaulted count that must fit in 32 bits and be at least `min`.
    pub(crate) fn count_u32(&self, name: &str, min: u32) -> Result<u32, JobError> {
        let parse = |text: &str| {
            let value = units::parse_count(text, self.kb_base)?;
            match u32::try_from(value) {
                Ok(value) if value >= min => Ok(value),
                Ok(_) => Err(UnitError::Invalid(format!("must be at least {min}"))),
                Err(_) => Err(UnitError::Overflow),
            }
        };
        self.parse_defaulted(name, parse)
    }

    fn percent(&self, name: &str) -> Result<u32, JobError> {
        self.parse_defaulted(name, units::parse_percent_number)
    }

    fn size_or_percent(&self, name: &str) -> Result<Option<SizeOrPercent>, JobError> {
        self.parse(name, |text| {
            if text.trim_end().ends_with('%') {
                units::parse_percent(text).map(SizeOrPercent::Percent)
            } else {
                units::parse_size(text, self.kb_base).map(SizeOrPercent::Bytes)
            }
        })
    }

    fn time(&self, name: &str) -> Result<Option<Duration>, JobError> {
        let Kind::Time(unit) = def(name).kind else {
            unreachable!("{name} is not a time option")
        };
        self.parse(name, |text| units::parse_time(text, unit))
    }

    /// A `read,write,trim` option: each direction comes from the most specific layer that sets
    /// it (`--bs=,8k` in a job keeps the global or default read size).
    fn per_direction<T>(
        &self,
        name: &str,
        parse: impl Fn(&str) -> Result<T, UnitError>,
    ) -> Result<[Option<T>; DDIRS], JobError> {
        let layers = [self.job.get(name), self.global.get(name)]
            .into_iter()
            .flatten()
            .map(Setting::given)
            .chain(Self::default(name));
        let mut sides: [Option<T>; DDIRS] = [None, None, None];
        for setting in layers {
            let texts = units::split_per_direction(setting.text).map_err(|e| setting.invalid(e))?;
            for (side, text) in sides.iter_mut().zip(texts) {
                if let (None, Some(text)) = (&side, text) {
                    *side = Some(parse(text).map_err(|e| setting.invalid(e))?);
                }
            }
        }
        Ok(sides)
    }

    /// A choice option: the matching word from the table and the `:parameter` after it.
    pub(crate) fn choice(
        &self,
        name: &str,
    ) -> Result<(&'static str, Option<&'a str>, Setting<'a>), JobError> {
        let setting = self.setting(name).expect("choice options have a default");
        let Kind::Choice(words) = setting.def.kind else {
            unreachable!("{name} is not a choice option")
        };
        let (word, parameter) = match setting.text.split_once(':') {
            Some((word, parameter)) => (word, Some(parameter)),
            None => (setting.text, None),
        };
        let word = word.trim().to_ascii_lowercase();
        let Some(word) = words.iter().find(|&&known| known == word) else {
            return Err(match options::unsupported_value(name, &word) {
                Some((reason, instead)) => JobError::Unsupported {
                    at: setting.source.clone(),
                    option: setting.def.name,
                    value: setting.text.to_string(),
                    reason,
                    instead,
                },
                None => setting.invalid(format!("unknown value '{word}'")),
            });
        };
        Ok((word, parameter, setting))
    }

    pub(crate) fn no_parameter(&self, word: &str, setting: Setting) -> Result<(), JobError> {
        match setting.text.split_once(':') {
            Some(_) => Err(setting.invalid(format!("'{word}' takes no ':' parameter"))),
            None => Ok(()),
        }
    }

    /// Two options that set each other (`rwmixread`/`rwmixwrite`): the settings from the
    /// most specific layer that has either of them.
    fn pair(&self, a: &str, b: &str) -> (Option<Setting<'a>>, Option<Setting<'a>>) {
        [self.job, self.global]
            .into_iter()
            .map(|layer| {
                (
                    layer.get(a).map(Setting::given),
                    layer.get(b).map(Setting::given),
                )
            })
            .find(|(a, b)| a.is_some() || b.is_some())
            .unwrap_or((None, None))
    }

    fn problem(&self, problem: impl Into<String>) -> JobError {
        JobError::InvalidJob {
            at: self.job.origin.clone(),
            job: self.job.name.clone(),
            problem: problem.into(),
        }
    }

    /// The job's own options and the global ones it inherits, each once.
    fn in_effect(&self) -> impl Iterator<Item = &'a RawOption> {
        let (job, global) = (self.job, self.global);
        let inherited = global
            .options()
            .iter()
            .filter(move |o| job.get(o.def.name).is_none());
        job.options().iter().chain(inherited)
    }

    /// Ignored options become warnings; unsupported ones are errors unless left at their
    /// default, which changes nothing.
    fn check_statuses(&self, warnings: &mut Vec<String>) -> Result<(), JobError> {
        for option in self.in_effect() {
            match option.def.status {
                Status::Supported => {}
                Status::Ignored(why) => warnings.push(format!(
                    "{}: {}={}: ignored: {why}",
                    option.source, option.def.name, option.value
                )),
                Status::Unsupported { reason, instead } => {
                    if option.def.default != Some(option.value.trim()) {
                        return Err(JobError::Unsupported {
                            at: option.source.clone(),
                            option: option.def.name,
                            value: option.value.clone(),
                            reason,
                            instead,
                        });
                    }
                }
            }
        }
        Ok(())
    }

    fn job_spec(&self, warnings: &mut Vec<String>) -> Result<JobSpec, JobError> {
        self.check_statuses(warnings)?;
        let engine = EngineSpec::resolve(self, warnings)?;
        let files = self.files(engine.kind)?;
        let target = self.target()?;
        let workload = self.workload(warnings)?;
        if self.kb_base == KbBase::Compat1024 {
            warnings.extend(self.iec_prefix_warnings());
        }
        let mut spec = JobSpec {
            name: self.job.name.clone(),
            description: self.given("description").map(|s| s.text.to_string()),
            engine,
            target,
            workload,
            pacing: self.pacing()?,
            io: self.io_mode()?,
            buffers: self.buffers()?,
            measure: self.measure()?,
            exec: self.exec()?,
            logs: self.logs()?,
            errors: self.errors()?,
            files,
            control: self.control()?,
            verify: None,
        };
        spec.verify = self.verify(&spec)?;
        Ok(spec)
    }

    fn target(&self) -> Result<TargetSpec, JobError> {
        let filenames = self
            .given("filename")
            .map(|s| split_filenames(s.text))
            .unwrap_or_default();
        let size = self.size_or_percent("size")?;
        let filesize = self.parse("filesize", |text| units::parse_size(text, self.kb_base))?;
        if filenames.is_empty() && size.is_none() && filesize.is_none() {
            return Err(self.problem(
                "no target and no amount of data: set size= or filename= (e.g. size=1g)",
            ));
        }
        Ok(TargetSpec {
            filenames,
            directory: self.given("directory").map(|s| PathBuf::from(s.text)),
            filename_format: self
                .setting("filename_format")
                .expect("filename_format has a default")
                .text
                .to_string(),
            nrfiles: self.count_u32("nrfiles", 1)?,
            filesize,
            size,
            offset: self
                .size_or_percent("offset")?
                .unwrap_or(SizeOrPercent::Bytes(0)),
            offset_increment: self
                .size_or_percent("offset_increment")?
                .unwrap_or(SizeOrPercent::Bytes(0)),
            io_size: self.size_or_percent("io_size")?,
            number_ios: self.count("number_ios")?,
            loops: self.count_u32("loops", 1)?,
            allow_mounted_write: self.bool("allow_mounted_write")?,
        })
    }

    fn workload(&self, warnings: &mut Vec<String>) -> Result<WorkloadSpec, JobError> {
        let (word, modifier, setting) = self.choice("rw")?;
        let rw = rw_pattern(word);
        // Without `:N`, sequential jobs add no hole and random jobs seek on every I/O.
        let rw_modifier = match modifier {
            Some(text) if text.trim_start().starts_with('-') => {
                return Err(JobError::Unsupported {
                    at: setting.source.clone(),
                    option: setting.def.name,
                    value: setting.text.to_string(),
                    reason: "going backwards through the file is not implemented",
                    instead: "a positive :N or rw=randread",
                })
            }
            Some(text) => units::parse_size(text, self.kb_base).map_err(|e| setting.invalid(e))?,
            None => u64::from(rw.is_random()),
        };
        let (sequencer, _, sequencer_setting) = self.choice("rw_sequencer")?;
        self.no_parameter(sequencer, sequencer_setting)?;
        let bs = self.block_sizes()?;
        let align = self.per_direction("blockalign", |t| self.nonzero_size(t))?;
        let randseed = self.given("randseed");
        Ok(WorkloadSpec {
            rw,
            rw_modifier,
            repeat_offsets: sequencer == "identical",
            rwmixread: self.rwmixread()?,
            blockalign: Ddir::ALL.map(|d| align[d.index()].unwrap_or(bs[d.index()].min())),
            bs,
            randommap: !self.bool("norandommap")?,
            // An explicit seed makes the sequence repeatable whatever randrepeat says (as fio).
            randrepeat: self.bool("randrepeat")? || randseed.is_some(),
            randseed: self.count("randseed")?.expect("randseed has a default"),
            distribution: self.distribution()?,
            percentage_random: self
                .per_direction("percentage_random", units::parse_percent_number)?
                .map(|side| side.unwrap_or(100)),
            file_service: self.file_service()?,
            open_files: self.open_files(warnings)?,
            zones: self.strided_zones()?,
        })
    }

    /// `openfiles`: a cap on the files a worker uses at a time. fio closes and reopens
    /// files to stay under it; here every file stays open (opened once before the
    /// run), so a user counting on it to limit descriptors is told.
    fn open_files(&self, warnings: &mut Vec<String>) -> Result<Option<u32>, JobError> {
        let Some(setting) = self.given("openfiles") else {
            return Ok(None);
        };
        let limit = self.count_u32("openfiles", 1)?;
        warnings.push(format!(
            "{}: openfiles={limit}: each worker uses at most {limit} of its files at a time, \
             but all of them stay open for the whole run; it does not limit file descriptors",
            setting.source
        ));
        Ok(Some(limit))
    }

    /// `zonemode=strided` and its zone sizes; without it they change nothing (as fio).
    fn strided_zones(&self) -> Result<Option<StridedZones>, JobError> {
        let (mode, _, setting) = self.choice("zonemode")?;
        self.no_parameter(mode, setting)?;
        if mode == "none" {
            return Ok(None);
        }
        let size = |name| self.parse_defaulted(name, |text| units::parse_size(text, self.kb_base));
        let zonesize = size("zonesize")?;
        if zonesize == 0 {
            return Err(self.problem(
                "zonemode=strided needs the bytes per zone: set zonesize= (e.g. zonesize=16m)",
            ));
        }
        Ok(Some(StridedZones {
            size: zonesize,
            range: match size("zonerange")? {
                0 => zonesize,
                range => range,
            },
            skip: size("zoneskip")?,
        }))
    }

    fn file_service(&self) -> Result<FileService, JobError> {
        let (word, parameter, setting) = self.choice("file_service_type")?;
        let ios = match parameter {
            Some(text) => text
                .trim()
                .parse::<u32>()
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| {
                    setting.invalid(format!("':{text}' is not a positive number of I/Os"))
                })?,
            None => 1,
        };
        Ok(match word {
            "random" => FileService::Random { ios },
            "sequential" => {
                self.no_parameter(word, setting)?;
                FileService::Sequential
            }
            _ => FileService::RoundRobin { ios },
        })
    }

    fn nonzero_size(&self, text: &str) -> Result<u64, UnitError> {
        match units::parse_size(text, self.kb_base)? {
            0 => Err(UnitError::Invalid("must be at least 1 byte".to_string())),
            bytes => Ok(bytes),
        }
    }

    /// Per direction, `bssplit` wins over `bsrange`, which wins over `bs` (as fio).
    fn block_sizes(&self) -> Result<[BlockSizes; DDIRS], JobError> {
        let fixed = self.per_direction("bs", |t| self.nonzero_size(t))?;
        let ranges = self.per_direction("bsrange", |text| {
            let (min, max) = units::parse_range(text, self.kb_base)?;
            match (min, max) {
                (0, _) => Err(UnitError::Invalid("must be at least 1 byte".to_string())),
                (min, max) if min > max => Err(UnitError::Invalid(format!(
                    "minimum {min} is larger than maximum {max}"
                ))),
                (min, max) => Ok(BlockSizes::Range { min, max }),
            }
        })?;
        let splits = self.per_direction("bssplit", |text| {
            let split = units::parse_bssplit(text, self.kb_base)?;
            match split.iter().any(|(size, _)| *size == 0) {
                true => Err(UnitError::Invalid(
                    "block sizes must be at least 1 byte".into(),
                )),
                false => Ok(BlockSizes::Split(split)),
            }
        })?;
        let mut ranges = ranges.into_iter();
        let mut fixed = fixed.into_iter();
        Ok(splits.map(|split| {
            let (range, fixed) = (ranges.next().flatten(), fixed.next().flatten());
            split
                .or(range)
                .unwrap_or_else(|| BlockSizes::Fixed(fixed.expect("bs has a default")))
        }))
    }

    fn rwmixread(&self) -> Result<u32, JobError> {
        let parse = |s: Setting| units::parse_percent_number(s.text).map_err(|e| s.invalid(e));
        match self.pair("rwmixread", "rwmixwrite") {
            (Some(read), Some(write)) => {
                let (r, w) = (parse(read)?, parse(write)?);
                if r + w != 100 {
                    return Err(write.invalid_with_hint(
                        format!(
                            "rwmixread={r} and rwmixwrite={w} add up to {}, not 100",
                            r + w
                        ),
                        "set only one of them",
                    ));
                }
                Ok(r)
            }
            (Some(read), None) => parse(read),
            (None, Some(write)) => Ok(100 - parse(write)?),
            (None, None) => self.percent("rwmixread"),
        }
    }

    fn distribution(&self) -> Result<Distribution, JobError> {
        let (word, parameter, setting) = self.choice("random_distribution")?;
        let number = |test: fn(f64) -> bool, range: &str| {
            let text = parameter.ok_or_else(|| setting.invalid(format!("{word} needs :value")))?;
            text.trim()
                .parse::<f64>()
                .ok()
                .filter(|v| test(*v))
                .ok_or_else(|| setting.invalid(format!("{word} parameter must be {range}")))
        };
        Ok(match word {
            "zipf" => Distribution::Zipf(number(|v| v > 0.0 && v != 1.0, "above 0 and not 1")?),
            "pareto" => Distribution::Pareto(number(|v| v > 0.0 && v < 1.0, "between 0 and 1")?),
            "normal" => Distribution::Normal(number(|v| v > 0.0 && v <= 100.0, "in (0, 100]")?),
            "zoned" => Distribution::Zoned(
                parse_zones(parameter.unwrap_or_default()).map_err(|e| setting.invalid(e))?,
            ),
            _ => {
                self.no_parameter(word, setting)?;
                Distribution::Random
            }
        })
    }

    fn pacing(&self) -> Result<PacingSpec, JobError> {
        let rate = self.per_direction("rate", |t| units::parse_size(t, self.kb_base))?;
        let rate_iops = self.per_direction("rate_iops", |t| units::parse_count(t, self.kb_base))?;
        let (process, _, setting) = self.choice("rate_process")?;
        self.no_parameter(process, setting)?;
        Ok(PacingSpec {
            rate: rate.map(Option::unwrap_or_default),
            rate_iops: rate_iops.map(Option::unwrap_or_default),
            rate_process: match process {
                "poisson" => RateProcess::Poisson,
                _ => RateProcess::Linear,
            },
            thinktime: self.time("thinktime")?.unwrap_or_default(),
            thinktime_spin: self.time("thinktime_spin")?.unwrap_or_default(),
            thinktime_blocks: self.count_u32("thinktime_blocks", 1)?,
            thinktime_counts_issued: self.choice("thinktime_blocks_type")?.0 == "issue",
        })
    }

    fn control(&self) -> Result<RunControlSpec, JobError> {
        let (exit_what, _, setting) = self.choice("exit_what")?;
        self.no_parameter(exit_what, setting)?;
        let max_latency = self.per_direction("max_latency", |t| {
            units::parse_time(t, units::TimeUnit::Micros)
        })?;
        let rate_min = self
            .per_direction("rate_min", |t| units::parse_size(t, self.kb_base))?
            .map(Option::unwrap_or_default);
        let rate_iops_min = self
            .per_direction("rate_iops_min", |t| units::parse_count(t, self.kb_base))?
            .map(Option::unwrap_or_default);
        self.check_rate_min_below_rate(rate_min, rate_iops_min)?;
        let rate_cycle_ms = self.count("rate_cycle")?.unwrap_or_default();
        if rate_cycle_ms == 0 {
            let setting = self.given("rate_cycle").expect("the default is not 0");
            return Err(setting.invalid("must be at least 1 ms"));
        }
        let iodepth = self.count_u32("iodepth", 1)?;
        // fio's rule: unset, 0 or deeper than the queue means "keep the queue full".
        let iodepth_low = match self.count("iodepth_low")? {
            Some(low) if low > 0 => low.min(u64::from(iodepth)) as u32,
            _ => iodepth,
        };
        Ok(RunControlSpec {
            exitall: self.bool("exitall")?,
            exit_what: match exit_what {
                "all" => ExitWhat::All,
                _ => ExitWhat::Group,
            },
            wait_for: self
                .given("wait_for")
                .map(|s| s.text.trim().to_string())
                .filter(|name| !name.is_empty()),
            max_latency_ns: max_latency
                .map(|d| d.map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))),
            rate_min,
            rate_iops_min,
            rate_cycle: Duration::from_millis(rate_cycle_ms),
            iodepth_low,
            steadystate: self.steadystate()?,
            latency_target: self.latency_target()?,
        })
    }

    /// `steadystate` is off unless `ss_dur` is set.
    fn steadystate(&self) -> Result<Option<SteadyStateSpec>, JobError> {
        let duration = self.time("steadystate_duration")?.unwrap_or_default();
        if duration.is_zero() {
            return Ok(None);
        }
        let (word, limit, setting) = self.choice("steadystate")?;
        let limit = limit.unwrap_or_default().trim();
        let (number, limit_is_percent) = match limit.strip_suffix('%') {
            Some(number) => (number, true),
            None => (limit, false),
        };
        let limit = number
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|l| l.is_finite() && *l >= 0.0)
            .ok_or_else(|| {
                setting.invalid(format!(
                    "{word} needs a limit: ':{number}' is not a number of 0 or more"
                ))
            })?;
        // One sample per second: a window shorter than a second holds none.
        let duration = Duration::from_secs(duration.as_secs().max(1));
        Ok(Some(SteadyStateSpec {
            metric: if word.starts_with("bw") {
                SteadyMetric::Bw
            } else {
                SteadyMetric::Iops
            },
            slope: word.ends_with("_slope"),
            limit,
            limit_is_percent,
            duration,
            ramp: self.time("steadystate_ramp_time")?.unwrap_or_default(),
        }))
    }

    /// `latency_target` is off unless set to more than 0; it needs `latency_window`.
    fn latency_target(&self) -> Result<Option<LatencyTargetSpec>, JobError> {
        let target = self.time("latency_target")?.unwrap_or_default();
        if target.is_zero() {
            return Ok(None);
        }
        let window = self.time("latency_window")?.unwrap_or_default();
        if window.is_zero() {
            return Err(self.problem(
                "latency_target needs latency_window, the time each queue depth is tried (e.g. latency_window=1s)",
            ));
        }
        let percentile = self
            .setting("latency_percentile")
            .expect("latency_percentile has a default");
        let percentile_value = percentile
            .text
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|p| *p > 0.0 && *p <= 100.0)
            .ok_or_else(|| percentile.invalid("must be a number above 0 and at most 100"))?;
        Ok(Some(LatencyTargetSpec {
            target_ns: u64::try_from(target.as_nanos()).unwrap_or(u64::MAX),
            window,
            percentile: percentile_value,
            keep_adjusting: self.bool("latency_run")?,
        }))
    }

    /// fio refuses a minimum rate above the rate cap of the same direction.
    fn check_rate_min_below_rate(
        &self,
        rate_min: [u64; DDIRS],
        rate_iops_min: [u64; DDIRS],
    ) -> Result<(), JobError> {
        let rate = self.per_direction("rate", |t| units::parse_size(t, self.kb_base))?;
        let rate_iops = self.per_direction("rate_iops", |t| units::parse_count(t, self.kb_base))?;
        for ddir in Ddir::ALL {
            let d = ddir.index();
            let cap = |cap: Option<u64>, min: u64| cap.is_some_and(|cap| cap > 0 && min > cap);
            if cap(rate[d], rate_min[d]) || cap(rate_iops[d], rate_iops_min[d]) {
                return Err(self.problem(format!(
                    "the minimum {} rate is above its rate cap",
                    ddir.name()
                )));
            }
        }
        Ok(())
    }

    fn io_mode(&self) -> Result<IoModeSpec, JobError> {
        let (mode, _, setting) = self.choice("sync")?;
        self.no_parameter(mode, setting)?;
        Ok(IoModeSpec {
            direct: self.direct()?,
            sync: match mode {
                "1" | "sync" => SyncMode::Sync,
                "dsync" => SyncMode::Dsync,
                _ => SyncMode::None,
            },
            fsync: self.count_u32("fsync", 0)?,
            fdatasync: self.count_u32("fdatasync", 0)?,
            end_fsync: self.bool("end_fsync")?,
            // Dropping the cache right after pre_read filled it would undo it (as fio).
            invalidate: self.bool("invalidate")? && !self.bool("pre_read")?,
            overwrite: self.bool("overwrite")?,
            unlink: self.bool("unlink")?,
        })
    }

    /// `buffered` is the inverse of `direct`; the more specific layer decides.
    fn direct(&self) -> Result<bool, JobError> {
        let parse = |s: Setting| units::parse_bool(s.text).map_err(|e| s.invalid(e));
        match self.pair("direct", "buffered") {
            (Some(direct), Some(buffered)) => {
                let (d, b) = (parse(direct)?, parse(buffered)?);
                if d == b {
                    return Err(buffered.invalid_with_hint(
                        format!("contradicts direct={}", u8::from(d)),
                        "buffered=0 means direct=1; set only one of them",
                    ));
                }
                Ok(d)
            }
            (Some(direct), None) => parse(direct),
            (None, Some(buffered)) => Ok(!parse(buffered)?),
            (None, None) => self.bool("direct"),
        }
    }

    fn buffers(&self) -> Result<BufferSpec, JobError> {
        Ok(BufferSpec {
            zero_buffers: self.bool("zero_buffers")?,
            refill_buffers: self.bool("refill_buffers")?,
            scramble_buffers: self.bool("scramble_buffers")?,
            compress_percentage: self.percent("buffer_compress_percentage")?,
        })
    }

    fn measure(&self) -> Result<MeasureSpec, JobError> {
        let gtod_reduce = self.bool("gtod_reduce")?;
        let measured = |disable: &str| Ok::<_, JobError>(!gtod_reduce && !self.bool(disable)?);
        let percentile_list = match self.given("percentile_list") {
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
        let (unified, _, setting) = self.choice("unified_rw_reporting")?;
        self.no_parameter(unified, setting)?;
        Ok(MeasureSpec {
            slat: measured("disable_slat")?,
            clat: measured("disable_clat")?,
            lat: measured("disable_lat")?,
            percentile_list,
            avg_time: AVG_TIME,
            slat_percentiles: self.bool("slat_percentiles")?,
            clat_percentiles: self.bool("clat_percentiles")?,
            lat_percentiles: self.bool("lat_percentiles")?,
            significant_figures: self.significant_figures()?,
            stats: self.bool("stats")?,
            unified_rw: match unified {
                "mixed" | "1" => UnifiedRw::Mixed,
                "both" | "2" => UnifiedRw::Both,
                _ => UnifiedRw::Separate,
            },
        })
    }

    fn significant_figures(&self) -> Result<u32, JobError> {
        let figures = self.count_u32("significant_figures", 1)?;
        match self.given("significant_figures") {
            Some(setting) if figures > 10 => Err(setting.invalid("more than 10")),
            _ => Ok(figures),
        }
    }

    fn logs(&self) -> Result<LogSpec, JobError> {
        // A log option given without a name uses the job's name, as fio does.
        let prefix = |name: &str| {
            self.given(name).map(|s| match s.text.trim() {
                "" => self.job.name.clone(),
                text => text.to_string(),
            })
        };
        Ok(LogSpec {
            bw: prefix("write_bw_log"),
            iops: prefix("write_iops_log"),
            lat: prefix("write_lat_log"),
            hist: prefix("write_hist_log"),
            avg_msec: self.count("log_avg_msec")?.unwrap_or_default(),
            hist_msec: self.count("log_hist_msec")?.unwrap_or_default(),
            max_value: self.bool("log_max_value")?,
            offset: self.bool("log_offset")?,
            per_job: self.bool("per_job_logs")?,
        })
    }

    fn files(&self, engine: EngineKind) -> Result<FilesSpec, JobError> {
        let (mode, _, setting) = self.choice("fallocate")?;
        self.no_parameter(mode, setting)?;
        let fallocate = match mode {
            "none" | "0" => Fallocate::None,
            "posix" | "1" => Fallocate::Posix,
            "keep" => Fallocate::Keep,
            "truncate" => Fallocate::Truncate,
            _ => Fallocate::Native,
        };
        // A file left shorter than the job's region has nothing there to map.
        if engine.def().maps_files && matches!(fallocate, Fallocate::None | Fallocate::Keep) {
            let name = engine.name();
            return Err(setting.invalid_with_hint(
                format!("leaves a new file shorter than the job, which ioengine={name} cannot map"),
                format!("use fallocate=native or truncate with ioengine={name}"),
            ));
        }
        let (hint, _, setting) = self.choice("fadvise_hint")?;
        self.no_parameter(hint, setting)?;
        Ok(FilesSpec {
            allow_file_create: self.bool("allow_file_create")?,
            create_only: self.bool("create_only")?,
            create_on_open: self.bool("create_on_open")?,
            fallocate,
            pre_read: self.bool("pre_read")?,
            fadvise: match hint {
                "0" => FadviseHint::None,
                "sequential" => FadviseHint::Sequential,
                "random" => FadviseHint::Random,
                _ => FadviseHint::ByPattern,
            },
            allow_mounted_write: self.bool("allow_mounted_write")?,
        })
    }

    fn errors(&self) -> Result<super::errors::ErrorSpec, JobError> {
        let continue_on = self
            .setting("continue_on_error")
            .expect("continue_on_error has a default");
        let ignore = self.given("ignore_error");
        super::errors::ErrorSpec::parse(continue_on.text, ignore.map(|s| s.text)).map_err(|e| {
            match ignore.filter(|_| e.contains("errno") || e.contains("lists")) {
                Some(ignore) => ignore.invalid(e),
                None => continue_on.invalid(e),
            }
        })
    }

    fn exec(&self) -> Result<ExecSpec, JobError> {
        let runtime = self.time("runtime")?;
        let time_based = self.bool("time_based")?;
        if let (true, None, Some(setting)) = (time_based, runtime, self.given("time_based")) {
            return Err(setting.invalid_with_hint(
                "needs a runtime to run for",
                "set runtime=, e.g. runtime=60s",
            ));
        }
        Ok(ExecSpec {
            numjobs: self.count_u32("numjobs", 1)?,
            thread: self.bool("thread")?,
            group_reporting: self.bool("group_reporting")?,
            stonewall: self.bool("stonewall")?,
            new_group: self.bool("new_group")?,
            startdelay: self.time("startdelay")?.unwrap_or_default(),
            runtime,
            time_based,
            ramp_time: self.time("ramp_time")?.unwrap_or_default(),
            sched: self.sched()?,
        })
    }

    fn sched(&self) -> Result<SchedSpec, JobError> {
        let mut cpus = match (self.given("cpus_allowed"), self.given("cpumask")) {
            (Some(list), _) => parse_cpu_list(list.text).map_err(|e| list.invalid(e))?,
            (None, Some(mask)) => {
                let bits =
                    units::parse_count(mask.text, self.kb_base).map_err(|e| mask.invalid(e))?;
                (0..64).filter(|cpu| bits >> cpu & 1 == 1).collect()
            }
            (None, None) => Vec::new(),
        };
        cpus.sort_unstable();
        cpus.dedup();
        let (policy, _, setting) = self.choice("cpus_allowed_policy")?;
        self.no_parameter(policy, setting)?;
        let nice = self
            .given("nice")
            .map(|s| {
                s.text
                    .trim()
                    .parse::<i32>()
                    .ok()
                    .filter(|n| (-20..=19).contains(n))
                    .ok_or_else(|| s.invalid("not a whole number from -20 to 19"))
            })
            .transpose()?;
        let level = |name: &str, range: std::ops::RangeInclusive<u64>| {
            let value = self.count(name)?;
            match (value, self.given(name)) {
                (Some(v), Some(s)) if !range.contains(&v) => {
                    Err(s.invalid(format!("must be from {} to {}", range.start(), range.end())))
                }
                _ => Ok(value.map(|v| v as u32)),
            }
        };
        let (class, prio) = (level("prioclass", 1..=3)?, level("prio", 0..=7)?);
        // The kernel's best-effort class, and its default level, when only one is given.
        let ioprio = match (class, prio) {
            (None, None) => None,
            (class, prio) => Some((class.unwrap_or(2), prio.unwrap_or(4))),
        };
        Ok(SchedSpec {
            cpus,
            split_cpus: policy == "split",
            nice,
            ioprio,
        })
    }

    /// fio's default `kb_base=1024` reads `1GiB` as 10^9 bytes; say so when someone writes it.
    fn iec_prefix_warnings(&self) -> Vec<String> {
        let size_kinds = [
            Kind::Size,
            Kind::SizeOrPercent,
            Kind::SizePerDirection,
            Kind::RangePerDirection,
            Kind::SplitPerDirection,
        ];
        self.in_effect()
            .filter(|o| size_kinds.contains(&o.def.kind))
            .filter(|o| {
                o.value
                    .split([',', ':', '/', '-'])
                    .any(units::uses_iec_prefix)
            })
            .map(|o| {
                format!(
                    "{}: {}={}: with kb_base=1024 (fio's default) Ki/Mi/Gi mean powers of 1000; \
                     set kb_base=1000 for the standard meaning, or use k/m/g",
                    o.source, o.def.name, o.value
                )
            })
            .collect()
    }
}

fn rw_pattern(word: &str) -> RwPattern {
    match word {
        "write" => RwPattern::Write,
        "randread" => RwPattern::RandRead,
        "randwrite" => RwPattern::RandWrite,
        "rw" | "readwrite" => RwPattern::ReadWrite,
        "randrw" => RwPattern::RandRw,
        "trim" => RwPattern::Trim,
        "randtrim" => RwPattern::RandTrim,
        "trimwrite" => RwPattern::TrimWrite,
        _ => RwPattern::Read,
    }
}

/// `0-3,6,8-9`: CPU numbers and inclusive ranges.
fn parse_cpu_list(text: &str) -> Result<Vec<usize>, UnitError> {
    let number = |t: &str| {
        t.trim()
            .parse::<usize>()
            .map_err(|_| UnitError::Invalid(format!("'{t}' is not a CPU number")))
    };
    let mut cpus = Vec::new();
    for part in text.split(',').filter(|p| !p.trim().is_empty()) {
        match part.split_once('-') {
            Some((first, last)) => {
                let (first, last) = (number(first)?, number(last)?);
                if first > last {
                    return Err(UnitError::Invalid(format!("range {part} runs backwards")));
                }
                cpus.extend(first..=last);
            }
            None => cpus.push(number(part)?),
        }
    }
    Ok(cpus)
}

/// `a:b:c` with `\:` for a colon inside a name.
fn split_filenames(text: &str) -> Vec<PathBuf> {
    let mut names = vec![String::new()];
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                names.last_mut().expect("never empty").push(':');
                chars.next();
            }
            ':' => names.push(String::new()),
            c => names.last_mut().expect("never empty").push(c),
        }
    }
    names
        .into_iter()
        .filter(|name| !name.is_empty())
        .map(PathBuf::from)
        .collect()
}

/// `zoned:60/10:30/20:10/70`: (percent of accesses, percent of the region) pairs; a blank
/// region (`20/`) takes what the others leave of 100, as a blank bssplit percentage does.
fn parse_zones(text: &str) -> Result<Vec<(f64, f64)>, UnitError> {
    let mut zones = text
        .split(':')
        .map(|zone| {
            let (access, region) = zone
                .split_once('/')
                .ok_or_else(|| UnitError::Invalid(format!("zone '{zone}' is not access/region")))?;
            let number = |text: &str| {
                text.trim()
                    .parse::<f64>()
                    .map_err(|_| UnitError::Invalid(format!("'{text}' is not a number")))
            };
            let region = match region.trim() {
                "" => f64::NAN,
                region => number(region)?,
            };
            Ok((number(access)?, region))
        })
        .collect::<Result<Vec<_>, UnitError>>()?;
    let blanks = zones.iter().filter(|z| z.1.is_nan()).count();
    if blanks > 0 {
        let given: f64 = zones.iter().map(|z| z.1).filter(|r| !r.is_nan()).sum();
        let share = (100.0 - given) / blanks as f64;
        zones
            .iter_mut()
            .filter(|z| z.1.is_nan())
            .for_each(|z| z.1 = share);
    }
    let access: f64 = zones.iter().map(|z| z.0).sum();
    let region: f64 = zones.iter().map(|z| z.1).sum();
    if (access - 100.0).abs() > 1e-6 || (region - 100.0).abs() > 1e-6 {
        return Err(UnitError::Invalid(
            "access and region percentages must each add up to 100".to_string(),
        ));
    }
    Ok(zones)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::job::parse_fio_args;

    pub(crate) fn run(args: &[&str]) -> Result<Resolved, JobError> {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let (global, jobs) = parse_fio_args(&args)?;
        resolve(&global, &jobs)
    }

    /// One job with a target plus `extra` options.
    pub(crate) fn job(extra: &[&str]) -> JobSpec {
        let mut args = vec!["--name=t", "--filename=/tmp/f"];
        args.extend_from_slice(extra);
        run(&args).unwrap().jobs.remove(0)
    }

    pub(crate) fn error(args: &[&str]) -> String {
        run(args).unwrap_err().to_string()
    }

    #[test]
    fn defaults_match_fio() {
        let spec = job(&[]);
        assert_eq!(spec.name, "t");
        assert_eq!(spec.engine.kind, EngineKind::Psync);
        assert_eq!(spec.engine.iodepth, 1);
        assert_eq!(spec.engine.batch_submit, 1);
        assert_eq!(spec.engine.batch_complete_min, 1);
        assert_eq!(spec.engine.batch_complete_max, 1);
        assert_eq!(spec.workload.rw, RwPattern::Read);
        assert_eq!(spec.workload.bs, [4096; 3].map(BlockSizes::Fixed));
        assert_eq!(spec.workload.blockalign, [4096; 3]);
        assert_eq!(spec.workload.rwmixread, 50);
        assert!(spec.workload.randrepeat && spec.workload.randommap);
        assert_eq!(spec.workload.randseed, 0x89);
        assert_eq!(spec.workload.distribution, Distribution::Random);
        assert_eq!(spec.exec.numjobs, 1);
        assert_eq!(spec.exec.runtime, None);
        assert_eq!(spec.target.loops, 1);
        assert_eq!(spec.target.nrfiles, 1);
        assert_eq!(spec.target.offset, SizeOrPercent::Bytes(0));
        assert!(spec.io.invalidate && !spec.io.direct);
        assert_eq!(spec.io.sync, SyncMode::None);
        assert!(spec.buffers.scramble_buffers);
        assert_eq!(spec.pacing.rate_process, RateProcess::Linear);
        assert_eq!(spec.pacing.thinktime_blocks, 1);
        assert_eq!(spec.measure.percentile_list, DEFAULT_PERCENTILES.to_vec());
        assert_eq!(spec.measure.avg_time, Duration::from_millis(500));
        assert!(spec.measure.slat && spec.measure.clat && spec.measure.lat);
    }

    #[test]
    fn openfiles_caps_the_files_in_use_and_warns_that_all_stay_open() {
        assert_eq!(job(&[]).workload.open_files, None);
        let resolved = run(&["--name=t", "--size=1m", "--nrfiles=8", "--openfiles=2"]).unwrap();
        assert_eq!(resolved.jobs[0].workload.open_files, Some(2));
        assert_eq!(resolved.warnings.len(), 1);
        assert!(resolved.warnings[0].contains("does not limit file descriptors"));
        assert!(error(&["--name=t", "--size=1m", "--openfiles=0"]).contains("at least 1"));
    }

    #[test]
    fn zonemode_strided_takes_the_zone_sizes() {
        assert_eq!(job(&["--zonesize=16k"]).workload.zones, None);
        let spec = job(&["--zonemode=strided", "--zonesize=16k", "--zoneskip=32k"]);
        let zones = StridedZones {
            size: 16 * 1024,
            range: 16 * 1024,
            skip: 32 * 1024,
        };
        assert_eq!(spec.workload.zones, Some(zones));
        let spec = job(&["--zonemode=strided", "--zonesize=16k", "--zonerange=64k"]);
        assert_eq!(spec.workload.zones.map(|z| z.range), Some(64 * 1024));
        let missing = error(&["--name=t", "--size=1m", "--zonemode=strided"]);
        assert!(missing.contains("zonesize="), "{missing}");
        let zbd = error(&["--name=t", "--size=1m", "--zonemode=zbd", "--zonesize=1m"]);
        assert!(zbd.contains("zoned block devices"), "{zbd}");
    }

    #[test]
    fn percentage_random_and_file_service_type() {
        let spec = job(&[]);
        assert_eq!(spec.workload.percentage_random, [100; 3]);
        assert_eq!(
            spec.workload.file_service,
            FileService::RoundRobin { ios: 1 }
        );
        let spec = job(&["--percentage_random=80,20", "--file_service_type=random:4"]);
        assert_eq!(spec.workload.percentage_random, [80, 20, 20]);
        assert_eq!(spec.workload.file_service, FileService::Random { ios: 4 });
        let spec = job(&["--file_service_type=sequential"]);
        assert_eq!(spec.workload.file_service, FileService::Sequential);
        assert!(error(&["--name=t", "--size=1m", "--percentage_random=101"])
            .contains("percentage_random"));
        assert!(
            error(&["--name=t", "--size=1m", "--file_service_type=random:0"]).contains("positive")
        );
        assert!(
            error(&["--name=t", "--size=1m", "--file_service_type=zipf:1.1"])
                .contains("not supported by iolens")
        );
    }

    #[test]
    fn file_options() {
        let defaults = job(&[]).files;
        assert!(defaults.allow_file_create && !defaults.create_only && !defaults.pre_read);
        assert!(!defaults.create_on_open);
        assert_eq!(defaults.fallocate, Fallocate::Native);
        assert_eq!(defaults.fadvise, FadviseHint::ByPattern);
        assert!(!defaults.allow_mounted_write);
        let spec = job(&[
            "--allow_file_create=0",
            "--create_only=1",
            "--create_on_open=1",
            "--pre_read=1",
            "--fadvise_hint=sequential",
            "--allow_mounted_write=1",
        ]);
        assert!(!spec.files.allow_file_create && spec.files.create_only && spec.files.pre_read);
        assert!(spec.files.allow_mounted_write && spec.files.create_on_open);
        assert_eq!(spec.files.fadvise, FadviseHint::Sequential);
        assert!(!spec.io.invalidate, "pre_read turns invalidate off");
        for (word, mode) in [
            ("0", Fallocate::None),
            ("none", Fallocate::None),
            ("1", Fallocate::Posix),
            ("keep", Fallocate::Keep),
            ("truncate", Fallocate::Truncate),
        ] {
            let arg = format!("--fallocate={word}");
            assert_eq!(job(&[&arg]).files.fallocate, mode, "{word}");
        }
        assert_eq!(job(&["--fadvise_hint=0"]).files.fadvise, FadviseHint::None);
        assert!(error(&[
            "--name=t",
            "--size=1m",
            "--ioengine=mmap",
            "--fallocate=keep"
        ])
        .contains("cannot map"));
    }

    #[test]
    fn every_option_accepts_its_example() {
        let supported = options::OPTIONS
            .iter()
            .filter(|d| d.status == Status::Supported);
        for def in supported.filter(|d| d.name != "name") {
            let arg = format!("--{}={}", def.name, def.example);
            let mut args = vec!["--name=t", "--filename=/tmp/f", &arg];
            if def.name == "time_based" {
                args.push("--runtime=1");
            }
            if def.name == "zonemode" {
                args.push("--zonesize=16m");
            }
            if def.name == "wait_for" {
                args.splice(0..0, ["--name=writer", "--filename=/tmp/f"]);
            }
            if def.name == "latency_target" {
                args.push("--latency_window=1s");
            }
            assert!(run(&args).is_ok(), "{arg}: {:?}", run(&args));
        }
    }

    #[test]
    fn steadystate_needs_ss_dur_and_parses_its_criterion() {
        assert_eq!(job(&["--steadystate=iops:5%"]).control.steadystate, None);
        let ss = job(&["--ss=bw_slope:2000000", "--ss_dur=30s", "--ss_ramp=5"])
            .control
            .steadystate
            .unwrap();
        assert_eq!(
            ss,
            SteadyStateSpec {
                metric: SteadyMetric::Bw,
                slope: true,
                limit: 2e6,
                limit_is_percent: false,
                duration: Duration::from_secs(30),
                ramp: Duration::from_secs(5),
            }
        );
        let ss = job(&["--ss_dur=500ms"]).control.steadystate.unwrap();
        assert_eq!((ss.metric, ss.slope), (SteadyMetric::Iops, true));
        assert_eq!((ss.limit, ss.limit_is_percent), (0.01, true));
        assert_eq!(ss.duration, Duration::from_secs(1));
        for bad in ["--ss=iops", "--ss=iops:x%", "--ss=iops:-1", "--ss=lat:5%"] {
            let e = error(&["--name=t", "--size=1m", "--ss_dur=5", bad]);
            assert!(e.contains("steadystate"), "{bad}: {e}");
        }
    }

    #[test]
    fn latency_target_needs_a_window_and_a_percentile_in_range() {
        assert_eq!(job(&[]).control.latency_target, None);
        let target = job(&[
            "--latency_target=2ms",
            "--latency_window=500ms",
            "--latency_percentile=99.9",
            "--latency_run=1",
        ])
        .control
        .latency_target
        .unwrap();
        assert_eq!(
            target,
            LatencyTargetSpec {
                target_ns: 2_000_000,
                window: Duration::from_millis(500),
                percentile: 99.9,
                keep_adjusting: true,
            }
        );
        // A bare number is in microseconds.
        let target = job(&["--latency_target=250", "--latency_window=1s"]).control;
        assert_eq!(target.latency_target.unwrap().target_ns, 250_000);
        let e = error(&["--name=t", "--size=1m", "--latency_target=2ms"]);
        assert!(e.contains("needs latency_window"), "{e}");
        for bad in ["0", "101", "x"] {
            let arg = format!("--latency_percentile={bad}");
            let args = ["--name=t", "--size=1m", "--latency_target=1ms"];
            let e = error(&[&args[..], &["--latency_window=1s", &arg]].concat());
            assert!(e.contains("latency_percentile"), "{bad}: {e}");
        }
    }

    #[test]
    fn thinktime_blocks_type_picks_what_is_counted() {
        assert!(!job(&[]).pacing.thinktime_counts_issued);
        let issue = job(&["--thinktime_blocks_type=issue"]).pacing;
        assert!(issue.thinktime_counts_issued);
    }

    #[test]
    fn ignored_options_warn_and_change_nothing() {
        for def in options::OPTIONS {
            let Status::Ignored(why) = def.status else {
                continue;
            };
            let arg = format!("--{}=1", def.name);
            let resolved = run(&["--name=t", "--filename=/tmp/f", &arg]).unwrap();
            assert_eq!(resolved.jobs[0], job(&[]), "{arg}");
            assert_eq!(
                resolved.warnings,
                vec![format!(
                    "command line argument 3: {}=1: ignored: {why}",
                    def.name
                )]
            );
        }
    }

    #[test]
    fn unsupported_options_are_errors_unless_left_at_their_default() {
        for def in options::OPTIONS {
            let Status::Unsupported { reason, .. } = def.status else {
                continue;
            };
            let arg = format!("--{}=something", def.name);
            let message = error(&["--name=t", "--filename=/tmp/f", &arg]);
            assert!(message.contains("not supported by iolens"), "{message}");
            assert!(message.contains(reason), "{message}");
            if let Some(default) = def.default {
                let arg = format!("--{}={default}", def.name);
                assert!(
                    run(&["--name=t", "--filename=/tmp/f", &arg]).is_ok(),
                    "{arg}"
                );
            }
        }
        assert_eq!(
            error(&["--name=t", "--size=1m", "--verify=sha512"]),
            "command line argument 3: verify=sha512: not supported by iolens: this checksum is \
             not implemented (instead: verify=crc32c, crc64, xxhash, sha256 or md5)"
        );
    }

    #[test]
    fn fio_engines_iolens_lacks_are_named_as_unsupported() {
        assert_eq!(
            error(&["--name=t", "--size=1m", "--ioengine=posixaio"]),
            "command line argument 3: ioengine=posixaio: not supported by iolens: this ioengine \
             is not implemented (instead: ioengine=io_uring, libaio or psync)"
        );
        assert!(error(&["--name=t", "--size=1m", "--rw=randtrimwrite"]).contains("not supported"));
        assert!(error(&["--name=t", "--size=1m", "--rw=read:-8k"]).contains("backwards"));
    }

    #[test]
    fn job_overrides_global_overrides_default() {
        let resolved = run(&[
            "--bs=8k",
            "--iodepth=4",
            "--name=a",
            "--size=1m",
            "--bs=16k",
            "--name=b",
            "--size=1m",
        ])
        .unwrap();
        let [a, b] = [&resolved.jobs[0], &resolved.jobs[1]];
        assert_eq!(a.workload.bs[0], BlockSizes::Fixed(16384));
        assert_eq!(b.workload.bs[0], BlockSizes::Fixed(8192));
        assert_eq!((a.engine.iodepth, b.engine.iodepth), (4, 4));
        assert_eq!(a.workload.rw, RwPattern::Read);
    }

    #[test]
    fn per_direction_sides_fall_back_layer_by_layer() {
        let resolved = run(&["--bs=16k", "--name=a", "--size=1m", "--bs=,8k"]).unwrap();
        let bs = &resolved.jobs[0].workload.bs;
        assert_eq!(bs, &[16384, 8192, 8192].map(BlockSizes::Fixed));
        assert_eq!(job(&["--bs=,8k"]).workload.bs[0], BlockSizes::Fixed(4096));
        let bs = |given: &str| job(&[given]).workload.bs.map(|b| b.min() / 1024);
        assert_eq!(bs("--bs=4k,8k"), [4, 8, 8]);
        assert_eq!(bs("--bs=4k,8k,"), [4, 8, 4]);
        assert_eq!(bs("--bs=4k,8k,16k"), [4, 8, 16]);
        assert_eq!(bs("--bs=,,16k"), [4, 4, 16]);
        // the trim side falls back to the global's like the others
        let resolved = run(&["--bs=1k,2k,32k", "--name=a", "--size=1m", "--bs=,8k,"]).unwrap();
        let bs = resolved.jobs[0].workload.bs.each_ref().map(BlockSizes::min);
        assert_eq!(bs, [1024, 8192, 32768]);
        assert!(error(&["--name=a", "--size=1m", "--bs=1k,2k,4k,8k"]).contains("three values"));
    }

    #[test]
    fn trim_patterns_are_accepted() {
        for (word, rw) in [
            ("trim", RwPattern::Trim),
            ("randtrim", RwPattern::RandTrim),
            ("trimwrite", RwPattern::TrimWrite),
        ] {
            let spec = job(&[&format!("--rw={word}")]);
            assert_eq!(spec.workload.rw, rw);
            assert!(spec.workload.rw.trims());
        }
    }

    #[test]
    fn filename_directory_nrfiles() {
        let spec = job(&[
            r"--filename=/dev/a:/dev/b\:c",
            "--directory=/mnt",
            "--nrfiles=3",
        ]);
        let names: Vec<PathBuf> = vec!["/dev/a".into(), "/dev/b:c".into()];
        assert_eq!(spec.target.filenames, names);
        assert_eq!(spec.target.directory, Some(PathBuf::from("/mnt")));
        assert_eq!(spec.target.nrfiles, 3);
    }

    #[test]
    fn size_filesize_offset_io_size() {
        let spec = job(&[
            "--size=50%",
            "--filesize=1m",
            "--offset=4k",
            "--offset_increment=10%",
            "--io_limit=2g",
            "--number_ios=100",
            "--loops=2",
        ]);
        let t = &spec.target;
        assert_eq!(t.size, Some(SizeOrPercent::Percent(50)));
        assert_eq!(t.filesize, Some(1 << 20));
        assert_eq!(t.offset, SizeOrPercent::Bytes(4096));
        assert_eq!(t.offset_increment, SizeOrPercent::Percent(10));
        assert_eq!(t.io_size, Some(SizeOrPercent::Bytes(2 << 30)));
        assert_eq!((t.number_ios, t.loops), (Some(100), 2));
    }

    #[test]
    fn rw_with_modifier() {
        let spec = job(&["--readwrite=randrw:8"]);
        assert_eq!(
            (spec.workload.rw, spec.workload.rw_modifier),
            (RwPattern::RandRw, 8)
        );
        let spec = job(&["--rw=write:4k"]);
        assert_eq!(
            (spec.workload.rw, spec.workload.rw_modifier),
            (RwPattern::Write, 4096)
        );
        assert_eq!(job(&["--rw=randread"]).workload.rw_modifier, 1);
        assert!(!job(&["--rw=randread:8"]).workload.repeat_offsets);
        let unified = |mode: &str| {
            job(&[&format!("--unified_rw_reporting={mode}")])
                .measure
                .unified_rw
        };
        assert_eq!(unified("none"), UnifiedRw::Separate);
        assert_eq!(unified("1"), UnifiedRw::Mixed);
        assert_eq!(unified("both"), UnifiedRw::Both);
        assert!(
            job(&["--rw=randread:8", "--rw_sequencer=identical"])
                .workload
                .repeat_offsets
        );
        assert!(error(&["--name=t", "--size=1m", "--rw_sequencer=backwards"]).contains("unknown"));
        assert_eq!(job(&["--rw=rw"]).workload.rw, RwPattern::ReadWrite);
        assert_eq!(job(&["--rw=randwrite"]).workload.rw, RwPattern::RandWrite);
    }

    #[test]
    fn rwmix_options_set_each_other() {
        assert_eq!(job(&["--rwmixread=70"]).workload.rwmixread, 70);
        assert_eq!(job(&["--rwmixwrite=20"]).workload.rwmixread, 80);
        assert_eq!(
            job(&["--rwmixread=70", "--rwmixwrite=30"])
                .workload
                .rwmixread,
            70
        );
        let resolved = run(&["--rwmixread=70", "--name=a", "--size=1m", "--rwmixwrite=10"]);
        assert_eq!(resolved.unwrap().jobs[0].workload.rwmixread, 90);
        assert_eq!(
            error(&["--name=a", "--size=1m", "--rwmixread=70", "--rwmixwrite=20"]),
            "command line argument 4: rwmixwrite=20: rwmixread=70 and rwmixwrite=20 add up to \
             90, not 100 (set only one of them)"
        );
    }

    #[test]
    fn bsrange_bssplit_blockalign() {
        let spec = job(&["--blocksize_range=1k-4k,8k:16k", "--ba=512"]);
        assert_eq!(
            spec.workload.bs,
            [
                BlockSizes::Range {
                    min: 1024,
                    max: 4096
                },
                BlockSizes::Range {
                    min: 8192,
                    max: 16384
                },
                BlockSizes::Range {
                    min: 8192,
                    max: 16384
                }
            ]
        );
        assert_eq!(spec.workload.blockalign, [512; 3]);
        let spec = job(&["--bssplit=4k/50:64k/", "--bs=8k"]);
        assert_eq!(
            spec.workload.bs[0],
            BlockSizes::Split(vec![(4096, 50), (65536, 50)])
        );
        assert_eq!(spec.workload.blockalign, [4096; 3]);
        assert!(
            error(&["--name=a", "--size=1m", "--bsrange=8k-4k"]).contains("larger than maximum")
        );
        assert!(
            error(&["--name=a", "--size=1m", "--bssplit=4k/60:8k/60"]).contains("more than 100")
        );
    }

    #[test]
    fn random_options() {
        let spec = job(&["--norandommap", "--randrepeat=0", "--randseed=42"]);
        assert!(!spec.workload.randommap);
        assert_eq!(spec.workload.randseed, 42);
        assert!(spec.workload.randrepeat, "an explicit seed is repeatable");
        assert!(!job(&["--randrepeat=0"]).workload.randrepeat);
    }

    #[test]
    fn random_distribution() {
        let d = |v: &str| {
            job(&[&format!("--random_distribution={v}")])
                .workload
                .distribution
        };
        assert_eq!(d("zipf:1.2"), Distribution::Zipf(1.2));
        assert_eq!(d("pareto:0.5"), Distribution::Pareto(0.5));
        assert_eq!(d("normal:10"), Distribution::Normal(10.0));
        assert_eq!(
            d("zoned:60/10:40/90"),
            Distribution::Zoned(vec![(60.0, 10.0), (40.0, 90.0)])
        );
        assert!(run(&["--name=a", "--size=1m", "--random_distribution=zipf"]).is_err());
        assert!(run(&["--name=a", "--size=1m", "--random_distribution=pareto:2"]).is_err());
        assert!(run(&["--name=a", "--size=1m", "--random_distribution=zoned:60/10"]).is_err());
        assert_eq!(
            d("zoned:50/5:30/15:20/"),
            Distribution::Zoned(vec![(50.0, 5.0), (30.0, 15.0), (20.0, 80.0)])
        );
    }

    #[test]
    fn exec_options() {
        let spec = job(&[
            "--numjobs=4",
            "--thread",
            "--group_reporting",
            "--wait_for_previous",
            "--new_group",
            "--startdelay=500ms",
            "--timeout=2m",
            "--time_based",
            "--ramp_time=5",
        ]);
        let e = &spec.exec;
        assert_eq!(e.numjobs, 4);
        assert!(e.thread && e.group_reporting && e.stonewall && e.new_group && e.time_based);
        assert_eq!(e.startdelay, Duration::from_millis(500));
        assert_eq!(e.runtime, Some(Duration::from_secs(120)));
        assert_eq!(e.ramp_time, Duration::from_secs(5));
        assert_eq!(
            error(&["--name=a", "--size=1m", "--time_based"]),
            "command line argument 3: time_based=1: needs a runtime to run for \
             (set runtime=, e.g. runtime=60s)"
        );
        assert!(error(&["--name=a", "--size=1m", "--numjobs=0"]).contains("at least 1"));
    }

    #[test]
    fn scheduling_options() {
        let sched = job(&[
            "--cpus_allowed=2,0-1,1",
            "--cpus_allowed_policy=split",
            "--nice=5",
            "--prio=6",
        ])
        .exec
        .sched;
        assert_eq!(sched.cpus, vec![0, 1, 2]);
        assert!(sched.split_cpus);
        assert_eq!((sched.nice, sched.ioprio), (Some(5), Some((2, 6))));
        assert_eq!(job(&["--cpumask=0x5"]).exec.sched.cpus, vec![0, 2]);
        assert_eq!(job(&["--prioclass=3"]).exec.sched.ioprio, Some((3, 4)));
        assert_eq!(job(&[]).exec.sched, SchedSpec::default());
        assert!(error(&["--name=a", "--size=1m", "--cpus_allowed=3-1"]).contains("backwards"));
        assert!(error(&["--name=a", "--size=1m", "--nice=40"]).contains("-20 to 19"));
        assert!(error(&["--name=a", "--size=1m", "--prio=8"]).contains("from 0 to 7"));
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

    #[test]
    fn run_control_options() {
        let c = job(&[]).control;
        assert!(!c.exitall && c.exit_what == ExitWhat::Group && c.wait_for.is_none());
        assert_eq!(
            (c.max_latency_ns, c.rate_cycle),
            ([0; 3], Duration::from_secs(1))
        );
        assert_eq!(c.iodepth_low, 1);
        let c = job(&[
            "--exitall",
            "--exit_what=all",
            "--max_latency=250,2ms",
            "--rate_min=1m,",
            "--rate_iops_min=,50",
            "--rate_cycle=250",
            "--iodepth=32",
            "--iodepth_low=8",
            "--ioengine=io_uring",
        ])
        .control;
        assert!(c.exitall && c.exit_what == ExitWhat::All);
        assert_eq!(c.max_latency_ns, [250_000, 2_000_000, 2_000_000]);
        assert_eq!(
            (c.rate_min, c.rate_iops_min),
            ([1 << 20, 0, 0], [0, 50, 50])
        );
        assert_eq!(c.rate_cycle, Duration::from_millis(250));
        assert_eq!(c.iodepth_low, 8);
        // 0 or deeper than the queue: keep it full, as fio.
        for low in ["--iodepth_low=0", "--iodepth_low=64"] {
            assert_eq!(
                job(&["--iodepth=16", "--ioengine=libaio", low])
                    .control
                    .iodepth_low,
                16
            );
        }
        assert_eq!(
            job(&["--exit_what=stonewall"]).control.exit_what,
            ExitWhat::Group
        );
        assert!(
            error(&["--name=t", "--size=1m", "--rate=1m", "--rate_min=2m"])
                .contains("the minimum read rate is above its rate cap")
        );
        assert!(error(&["--name=t", "--size=1m", "--rate_cycle=0"]).contains("at least 1 ms"));
        assert!(
            error(&["--name=a", "--size=1m", "--wait_for=b", "--name=b"])
                .contains("names no earlier job")
        );
    }

    #[test]
    fn io_mode_options() {
        let spec = job(&[
            "--direct=1",
            "--sync=dsync",
            "--fsync=8",
            "--fdatasync=4",
            "--end_fsync",
            "--invalidate=0",
            "--overwrite=1",
            "--unlink=1",
        ]);
        let io = &spec.io;
        assert!(io.direct && io.end_fsync && !io.invalidate && io.overwrite && io.unlink);
        assert_eq!((io.sync, io.fsync, io.fdatasync), (SyncMode::Dsync, 8, 4));
        assert_eq!(job(&["--sync=1"]).io.sync, SyncMode::Sync);
        assert_eq!(job(&["--sync=none"]).io.sync, SyncMode::None);
    }

    #[test]
    fn buffered_is_the_inverse_of_direct() {
        assert!(job(&["--buffered=0"]).io.direct);
        assert!(!job(&["--buffered=1"]).io.direct);
        let resolved = run(&["--direct=1", "--name=a", "--size=1m", "--buffered=1"]).unwrap();
        assert!(
            !resolved.jobs[0].io.direct,
            "the job's buffered=1 beats the global direct=1"
        );
        assert!(
            error(&["--name=a", "--size=1m", "--direct=1", "--buffered=1"]).contains("contradicts")
        );
    }

    #[test]
    fn buffer_options() {
        let spec = job(&[
            "--zero_buffers",
            "--refill_buffers",
            "--scramble_buffers=0",
            "--buffer_compress_percentage=40",
        ]);
        let b = &spec.buffers;
        assert!(b.zero_buffers && b.refill_buffers && !b.scramble_buffers);
        assert_eq!(b.compress_percentage, 40);
    }

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
        assert!(logs.max_value && logs.offset && !logs.per_job);
    }

    #[test]
    fn kb_base_changes_size_prefixes_and_iec_under_1024_warns() {
        assert_eq!(
            job(&["--kb_base=1000", "--bs=4k"]).workload.bs[0],
            BlockSizes::Fixed(4000)
        );
        let resolved = run(&["--name=a", "--size=1GiB"]).unwrap();
        assert_eq!(
            resolved.jobs[0].target.size,
            Some(SizeOrPercent::Bytes(1_000_000_000))
        );
        assert!(resolved.warnings[0]
            .starts_with("command line argument 2: size=1GiB: with kb_base=1024"));
        let resolved = run(&["--kb_base=1000", "--name=a", "--size=1GiB"]).unwrap();
        assert_eq!(
            resolved.jobs[0].target.size,
            Some(SizeOrPercent::Bytes(1 << 30))
        );
        assert!(resolved.warnings.is_empty());
    }

    #[test]
    fn error_messages_name_source_option_value_and_fix() {
        assert_eq!(
            error(&["--name=a", "--size=1m", "--bs=4q"]),
            "command line argument 3: bs=4q: unknown size suffix 'q' (use a number with k, m, g, \
             e.g. bs=4k)"
        );
        assert_eq!(
            error(&["--name=a", "--size=1m", "--runtime=10x"]),
            "command line argument 3: runtime=10x: unknown time unit 'x' (use a number with us, \
             ms, s, m, h, e.g. runtime=60s)"
        );
        assert_eq!(
            error(&["--name=a", "--size=1m", "--direct=yes"]),
            "command line argument 3: direct=yes: 'yes' is not 1 or 0 (use 1 or 0, e.g. direct=1)"
        );
    }

    #[test]
    fn a_job_needs_a_target_or_a_size() {
        assert_eq!(
            error(&["--bs=8k", "--name=a"]),
            "command line argument 2: job 'a': no target and no amount of data: set size= or \
             filename= (e.g. size=1g)"
        );
        assert!(run(&["--name=a", "--filesize=1m"]).is_ok());
        assert_eq!(run(&["--bs=4k"]).unwrap_err(), JobError::NoJobs);
    }
}
