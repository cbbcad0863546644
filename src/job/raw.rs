//! `RawJob`: one job's options exactly as a front end gave them, each with where it came from.

use super::error::JobError;
use super::options::{self, Kind, OptionDef};
use std::fmt;
use std::path::PathBuf;

/// Where a value was written, so errors can point at it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Source {
    /// 1-based position among the job arguments.
    Argument(usize),
    /// A line of a job file.
    File { path: PathBuf, line: u32 },
    /// Implied by the position of a job file on the command line (each later file starts a
    /// new stonewalled group, as in fio).
    FileStart { path: PathBuf },
    /// The option table's default.
    Default,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Argument(index) => write!(f, "command line argument {index}"),
            Self::File { path, line } => write!(f, "{}:{line}", path.display()),
            Self::FileStart { path } => write!(f, "start of job file {}", path.display()),
            Self::Default => f.write_str("built-in default"),
        }
    }
}

/// One option as given: its table entry (aliases already resolved), text and origin.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RawOption {
    pub def: &'static OptionDef,
    pub value: String,
    pub source: Source,
    /// Given without a value (a bare flag such as `thread`).
    pub bare: bool,
}

/// A job (or the global section) before resolution.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RawJob {
    pub name: String,
    /// Where the job starts (its `--name=` argument or section header).
    pub origin: Source,
    options: Vec<RawOption>,
    /// Where among `options` the name was given as an option (`--name=`, or
    /// `name=` in a section); None when only a section header names the job.
    name_at: Option<usize>,
}

impl RawJob {
    pub(crate) fn new(name: impl Into<String>, origin: Source) -> Self {
        Self {
            name: name.into(),
            origin,
            options: Vec::new(),
            name_at: None,
        }
    }

    /// A job started by `--name=name` on the command line.
    pub(crate) fn named(name: impl Into<String>, origin: Source) -> Self {
        Self {
            name_at: Some(0),
            ..Self::new(name, origin)
        }
    }

    /// `name=` inside the job's section: the job takes that name.
    pub(crate) fn set_name(&mut self, name: String) {
        self.name = name;
        self.name_at = Some(self.options.len());
    }

    /// The options as fio lists them in its JSON "job options": in the order
    /// given, the name where it was given as an option, bare flags left out.
    pub(crate) fn listed_options(&self) -> Vec<(String, String)> {
        let given = |options: &[RawOption]| -> Vec<(String, String)> {
            let valued = options.iter().filter(|o| !o.bare);
            valued
                .map(|o| (o.def.name.to_string(), o.value.clone()))
                .collect()
        };
        let Some(at) = self.name_at.map(|at| at.min(self.options.len())) else {
            return given(&self.options);
        };
        let mut listed = given(&self.options[..at]);
        listed.push(("name".to_string(), self.name.clone()));
        listed.extend(given(&self.options[at..]));
        listed
    }

    /// Records `def=value` (`value` None for a bare flag). A later value for the same option
    /// replaces the earlier one, as in fio.
    pub(crate) fn set(
        &mut self,
        def: &'static OptionDef,
        value: Option<&str>,
        source: Source,
    ) -> Result<(), JobError> {
        let bare = value.is_none();
        let value = match (value, def.kind) {
            (Some(value), _) => value.to_string(),
            (None, Kind::Bool) => "1".to_string(),
            (None, Kind::Text)
                if options::BARE_TEXT_OPTIONS
                    .iter()
                    .any(|bare| bare.name == def.name) =>
            {
                String::new()
            }
            (None, _) => {
                return Err(JobError::MissingValue {
                    at: source,
                    option: def.name,
                    example: def.example,
                })
            }
        };
        let option = RawOption {
            def,
            value,
            source,
            bare,
        };
        match self.options.iter_mut().find(|o| o.def.name == def.name) {
            Some(existing) => *existing = option,
            None => self.options.push(option),
        }
        Ok(())
    }

    /// This job's setting of the option `def`, if it sets it.
    pub(crate) fn get(&self, def: &OptionDef) -> Option<&RawOption> {
        self.options.iter().find(|o| o.def.name == def.name)
    }

    pub(crate) fn options(&self) -> &[RawOption] {
        &self.options
    }

    /// Applies `other`'s options on top of these (a later `[global]` over an earlier one).
    pub(crate) fn overlay(&mut self, other: &RawJob) {
        for option in &other.options {
            match self
                .options
                .iter_mut()
                .find(|o| o.def.name == option.def.name)
            {
                Some(existing) => *existing = option.clone(),
                None => self.options.push(option.clone()),
            }
        }
    }
}

/// A job with the global options in effect for it: from the command line only, or with a
/// job file's `[global]` sections above the job laid over them.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LayeredJob {
    pub global: RawJob,
    pub job: RawJob,
}

/// The table entry for `key`, or an error that suggests the closest known name.
pub(crate) fn lookup(key: &str, source: &Source) -> Result<&'static OptionDef, JobError> {
    options::find(key).ok_or_else(|| JobError::UnknownOption {
        at: source.clone(),
        name: key.to_string(),
        suggestion: options::suggest(key),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::options::opt;

    #[test]
    fn options_are_listed_as_fio_lists_them() {
        let at = Source::Argument(1);
        let set = |job: &mut RawJob, key: &str, value: Option<&str>| {
            let def = options::find(key).unwrap();
            job.set(def, value, at.clone()).unwrap();
        };
        let mut job = RawJob::named("x", at.clone());
        set(&mut job, "ioengine", Some("null"));
        set(&mut job, "thread", None);
        set(&mut job, "stonewall", Some("1"));
        let pairs = |list: &[(&str, &str)]| -> Vec<(String, String)> {
            list.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        assert_eq!(
            job.listed_options(),
            pairs(&[("name", "x"), ("ioengine", "null"), ("stonewall", "1")]),
            "a --name job lists its name first and no bare flag"
        );
        let mut section = RawJob::new("header", at.clone());
        set(&mut section, "size", Some("1m"));
        section.set_name("given".to_string());
        set(&mut section, "rw", Some("read"));
        assert_eq!(
            section.listed_options(),
            pairs(&[("size", "1m"), ("name", "given"), ("rw", "read")]),
            "name= in a section is listed where it was given"
        );
        let plain = RawJob::new("header", at);
        assert_eq!(
            plain.listed_options(),
            pairs(&[]),
            "a section header is no option"
        );
    }

    #[test]
    fn sources_name_their_origin() {
        assert_eq!(Source::Argument(4).to_string(), "command line argument 4");
        let file = Source::File {
            path: "job.fio".into(),
            line: 12,
        };
        assert_eq!(file.to_string(), "job.fio:12");
    }

    #[test]
    fn aliases_are_stored_under_the_canonical_name_and_later_values_win() {
        let mut job = RawJob::new("a", Source::Argument(1));
        let at = |i| Source::Argument(i);
        job.set(lookup("blocksize", &at(2)).unwrap(), Some("8k"), at(2))
            .unwrap();
        job.set(lookup("bs", &at(3)).unwrap(), Some("16k"), at(3))
            .unwrap();
        let bs = job.get(opt::BS).unwrap();
        assert_eq!(
            (bs.value.as_str(), &bs.source),
            ("16k", &Source::Argument(3))
        );
        assert_eq!(job.options().len(), 1);
    }

    #[test]
    fn bare_flags_mean_one_for_booleans_only() {
        let mut job = RawJob::new("a", Source::Argument(1));
        let at = |i| Source::Argument(i);
        job.set(lookup("thread", &at(2)).unwrap(), None, at(2))
            .unwrap();
        assert_eq!(job.get(opt::THREAD).unwrap().value, "1");
        job.set(lookup("write_bw_log", &at(2)).unwrap(), None, at(2))
            .unwrap();
        assert_eq!(job.get(opt::WRITE_BW_LOG).unwrap().value, "");
        assert_eq!(
            job.set(lookup("bs", &at(3)).unwrap(), None, at(3))
                .unwrap_err()
                .to_string(),
            "command line argument 3: --bs needs a value (e.g. --bs=4k)"
        );
    }
}
