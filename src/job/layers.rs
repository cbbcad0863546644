//! One job's options with the global section and the table defaults behind it.

use super::choice::{choice_words, Choice};
use super::error::JobError;
use super::options::{self, opt, Kind, OptionDef};
use super::raw::{RawJob, RawOption, Source};
use super::spec::{SizeOrPercent, DDIRS};
use crate::units::{self, KbBase, UnitError};
use std::fmt::Display;
use std::time::Duration;

static DEFAULT_SOURCE: Source = Source::Default;

choice_words!(KbBase {
    "1024" => KbBase::Compat1024,
    "1000" => KbBase::Si1000,
});

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

    /// Set by the job or its globals, not the table's default.
    pub(crate) fn is_given(&self) -> bool {
        *self.source != Source::Default
    }

    /// The value of a bool option's setting.
    pub(crate) fn bool(&self) -> Result<bool, JobError> {
        units::parse_bool(self.text).map_err(|e| self.invalid(e))
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

/// A choice option's value in effect: the word it was given as, the `:parameter` after it
/// and where it was set.
pub(crate) struct Chosen<'a, T> {
    pub(crate) value: T,
    pub(crate) word: &'static str,
    pub(crate) parameter: Option<&'a str>,
    pub(crate) setting: Setting<'a>,
}

impl<T> Chosen<'_, T> {
    /// Refuses a `:parameter` after a word that takes none.
    pub(crate) fn no_parameter(&self) -> Result<(), JobError> {
        match self.parameter {
            Some(_) => Err(self
                .setting
                .invalid(format!("'{}' takes no ':' parameter", self.word))),
            None => Ok(()),
        }
    }
}

/// One job's options with the global section and the table defaults behind it.
pub(crate) struct Layers<'a> {
    pub(crate) job: &'a RawJob,
    pub(crate) global: &'a RawJob,
    pub(crate) kb_base: KbBase,
    /// The options the resolvers looked up, once per lookup, for the test that each
    /// supported option is read exactly once.
    #[cfg(test)]
    pub(crate) reads: std::cell::RefCell<Vec<&'static str>>,
}

impl<'a> Layers<'a> {
    pub(crate) fn new(job: &'a RawJob, global: &'a RawJob) -> Result<Self, JobError> {
        let mut layers = Self {
            job,
            global,
            kb_base: KbBase::default(),
            #[cfg(test)]
            reads: Default::default(),
        };
        layers.kb_base = layers.choice(opt::KB_BASE)?;
        Ok(layers)
    }

    /// The job's own setting, else the global one (no default).
    pub(crate) fn given(&self, def: &'static OptionDef) -> Option<Setting<'a>> {
        #[cfg(test)]
        self.reads.borrow_mut().push(def.name);
        self.job
            .get(def)
            .or_else(|| self.global.get(def))
            .map(Setting::given)
    }

    pub(crate) fn default(def: &'static OptionDef) -> Option<Setting<'static>> {
        def.default.map(|text| Setting {
            def,
            text,
            source: &DEFAULT_SOURCE,
        })
    }

    pub(crate) fn setting(&self, def: &'static OptionDef) -> Option<Setting<'a>> {
        self.given(def).or_else(|| Self::default(def))
    }

    pub(crate) fn parse<T>(
        &self,
        def: &'static OptionDef,
        parse: impl Fn(&str) -> Result<T, UnitError>,
    ) -> Result<Option<T>, JobError> {
        self.setting(def)
            .map(|s| parse(s.text).map_err(|e| s.invalid(e)))
            .transpose()
    }

    /// For options that always have a table default.
    pub(crate) fn parse_defaulted<T>(
        &self,
        def: &'static OptionDef,
        parse: impl Fn(&str) -> Result<T, UnitError>,
    ) -> Result<T, JobError> {
        Ok(self
            .parse(def, parse)?
            .expect("option has a default in the table"))
    }

    pub(crate) fn bool(&self, def: &'static OptionDef) -> Result<bool, JobError> {
        self.parse_defaulted(def, units::parse_bool)
    }

    /// A bool option's value and, when the job or its globals set it, that setting (for
    /// an error naming it): one lookup for both.
    pub(crate) fn bool_and_given(
        &self,
        def: &'static OptionDef,
    ) -> Result<(bool, Option<Setting<'a>>), JobError> {
        let given = self.given(def);
        let setting = given
            .or_else(|| Self::default(def))
            .expect("option has a default in the table");
        Ok((setting.bool()?, given))
    }

    pub(crate) fn count(&self, def: &'static OptionDef) -> Result<Option<u64>, JobError> {
        self.parse(def, |text| units::parse_count(text, self.kb_base))
    }

    /// A defaulted count that must fit in 32 bits and be at least `min`.
    pub(crate) fn count_u32(&self, def: &'static OptionDef, min: u32) -> Result<u32, JobError> {
        self.parse_defaulted(def, |text| self.parse_u32(text, min))
    }

    /// A count that must fit in 32 bits and be at least `min`.
    pub(crate) fn parse_u32(&self, text: &str, min: u32) -> Result<u32, UnitError> {
        let value = units::parse_count(text, self.kb_base)?;
        match u32::try_from(value) {
            Ok(value) if value >= min => Ok(value),
            Ok(_) => Err(UnitError::Invalid(format!("must be at least {min}"))),
            Err(_) => Err(UnitError::Overflow),
        }
    }

    pub(crate) fn percent(&self, def: &'static OptionDef) -> Result<u32, JobError> {
        self.parse_defaulted(def, units::parse_percent_number)
    }

    pub(crate) fn size_or_percent(
        &self,
        def: &'static OptionDef,
    ) -> Result<Option<SizeOrPercent>, JobError> {
        self.parse(def, |text| {
            if text.trim_end().ends_with('%') {
                units::parse_percent(text).map(SizeOrPercent::Percent)
            } else {
                units::parse_size(text, self.kb_base).map(SizeOrPercent::Bytes)
            }
        })
    }

    pub(crate) fn time(&self, def: &'static OptionDef) -> Result<Option<Duration>, JobError> {
        let Kind::Time(unit) = def.kind else {
            unreachable!("{} is not a time option", def.name)
        };
        self.parse(def, |text| units::parse_time(text, unit))
    }

    /// A `read,write,trim` option: each direction comes from the most specific layer that sets
    /// it (`--bs=,8k` in a job keeps the global or default read size).
    pub(crate) fn per_direction<T>(
        &self,
        def: &'static OptionDef,
        parse: impl Fn(&str) -> Result<T, UnitError>,
    ) -> Result<[Option<T>; DDIRS], JobError> {
        #[cfg(test)]
        self.reads.borrow_mut().push(def.name);
        let layers = [self.job.get(def), self.global.get(def)]
            .into_iter()
            .flatten()
            .map(Setting::given)
            .chain(Self::default(def));
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

    /// A choice option that takes no `:parameter`: the value of its word.
    pub(crate) fn choice<T: Choice>(&self, def: &'static OptionDef) -> Result<T, JobError> {
        let chosen = self.choice_with_parameter::<T>(def)?;
        chosen.no_parameter()?;
        Ok(chosen.value)
    }

    /// A choice option: the value of its word and the `:parameter` after it.
    pub(crate) fn choice_with_parameter<T: Choice>(
        &self,
        def: &'static OptionDef,
    ) -> Result<Chosen<'a, T>, JobError> {
        let setting = self.setting(def).expect("choice options have a default");
        let Kind::Choice(words) = def.kind else {
            unreachable!("{} is not a choice option", def.name)
        };
        debug_assert_eq!(
            words,
            T::NAMES,
            "{} is read as another option's choice",
            def.name
        );
        let (word, parameter) = match setting.text.split_once(':') {
            Some((word, parameter)) => (word, Some(parameter)),
            None => (setting.text, None),
        };
        let word = word.trim().to_ascii_lowercase();
        let Some(&(word, value)) = T::WORDS.iter().find(|(known, _)| *known == word) else {
            return Err(match options::unsupported_value(def, &word) {
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
        Ok(Chosen {
            value,
            word,
            parameter,
            setting,
        })
    }

    /// Two options that set each other (`rwmixread`/`rwmixwrite`): the settings from the
    /// most specific layer that has either of them.
    pub(crate) fn pair(
        &self,
        a: &OptionDef,
        b: &OptionDef,
    ) -> (Option<Setting<'a>>, Option<Setting<'a>>) {
        #[cfg(test)]
        self.reads.borrow_mut().extend([a.name, b.name]);
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
            .filter(move |o| job.get(o.def).is_none());
        job.options().iter().chain(inherited)
    }

    pub(crate) fn nonzero_size(&self, text: &str) -> Result<u64, UnitError> {
        match units::parse_size(text, self.kb_base)? {
            0 => Err(UnitError::Invalid("must be at least 1 byte".to_string())),
            bytes => Ok(bytes),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::job::resolve::tests::{error, job, run};
    use crate::job::spec::*;

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
        assert_eq!((a.queue.iodepth, b.queue.iodepth), (4, 4));
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
}
