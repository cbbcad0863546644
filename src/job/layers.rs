//! One job's options with the global section and the table defaults behind it.

use super::error::JobError;
use super::options::{self, Kind, OptionDef};
use super::raw::{RawJob, RawOption, Source};
use super::spec::{SizeOrPercent, DDIRS};
use crate::units::{self, KbBase, UnitError};
use std::fmt::Display;
use std::time::Duration;

static DEFAULT_SOURCE: Source = Source::Default;

/// A value in effect for one job: what was written and where.
#[derive(Clone, Copy)]
pub(crate) struct Setting<'a> {
    pub(crate) def: &'static OptionDef,
    pub(crate) text: &'a str,
    pub(crate) source: &'a Source,
}

impl<'a> Setting<'a> {
    pub(crate) fn given(option: &'a RawOption) -> Self {
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
    pub(crate) kb_base: KbBase,
}

fn def(name: &str) -> &'static OptionDef {
    options::find(name).expect("resolve asks only for options in the table")
}

impl<'a> Layers<'a> {
    pub(crate) fn new(job: &'a RawJob, global: &'a RawJob) -> Result<Self, JobError> {
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

    pub(crate) fn default(name: &str) -> Option<Setting<'static>> {
        let def = def(name);
        def.default.map(|text| Setting {
            def,
            text,
            source: &DEFAULT_SOURCE,
        })
    }

    pub(crate) fn setting(&self, name: &str) -> Option<Setting<'a>> {
        self.given(name).or_else(|| Self::default(name))
    }

    pub(crate) fn parse<T>(
        &self,
        name: &str,
        parse: impl Fn(&str) -> Result<T, UnitError>,
    ) -> Result<Option<T>, JobError> {
        self.setting(name)
            .map(|s| parse(s.text).map_err(|e| s.invalid(e)))
            .transpose()
    }

    /// For options that always have a table default.
    pub(crate) fn parse_defaulted<T>(
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

    pub(crate) fn count(&self, name: &str) -> Result<Option<u64>, JobError> {
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

    pub(crate) fn percent(&self, name: &str) -> Result<u32, JobError> {
        self.parse_defaulted(name, units::parse_percent_number)
    }

    pub(crate) fn size_or_percent(&self, name: &str) -> Result<Option<SizeOrPercent>, JobError> {
        self.parse(name, |text| {
            if text.trim_end().ends_with('%') {
                units::parse_percent(text).map(SizeOrPercent::Percent)
            } else {
                units::parse_size(text, self.kb_base).map(SizeOrPercent::Bytes)
            }
        })
    }

    pub(crate) fn time(&self, name: &str) -> Result<Option<Duration>, JobError> {
        let Kind::Time(unit) = def(name).kind else {
            unreachable!("{name} is not a time option")
        };
        self.parse(name, |text| units::parse_time(text, unit))
    }

    /// A `read,write,trim` option: each direction comes from the most specific layer that sets
    /// it (`--bs=,8k` in a job keeps the global or default read size).
    pub(crate) fn per_direction<T>(
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
    pub(crate) fn pair(&self, a: &str, b: &str) -> (Option<Setting<'a>>, Option<Setting<'a>>) {
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

    pub(crate) fn problem(&self, problem: impl Into<String>) -> JobError {
        JobError::InvalidJob {
            at: self.job.origin.clone(),
            job: self.job.name.clone(),
            problem: problem.into(),
        }
    }

    /// The job's own options and the global ones it inherits, each once.
    pub(crate) fn in_effect(&self) -> impl Iterator<Item = &'a RawOption> {
        let (job, global) = (self.job, self.global);
        let inherited = global
            .options()
            .iter()
            .filter(move |o| job.get(o.def.name).is_none());
        job.options().iter().chain(inherited)
    }

    pub(crate) fn nonzero_size(&self, text: &str) -> Result<u64, UnitError> {
        match units::parse_size(text, self.kb_base)? {
            0 => Err(UnitError::Invalid("must be at least 1 byte".to_string())),
            bytes => Ok(bytes),
        }
    }
}
