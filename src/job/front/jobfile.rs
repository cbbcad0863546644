//! fio job files: a small hand-written INI reader with fio's rules, pinned against
//! `fio --showcmd` on the same inputs.
//!
//! - `[name]` starts a job; two sections with the same name are two jobs.
//! - `[global]` options apply to the jobs below it; several `[global]` sections accumulate.
//! - `;` or `#` anywhere starts a comment (fio cuts `filename=/a#b` to `/a`).
//! - `key=value`, or a bare `key` for boolean options; whitespace around both is dropped.
//! - `include FILE` (relative to the including file) reads options into the current section;
//!   included files may not hold sections.
//! - Values: `${ENV}` first, then the reserved `$keywords` and arithmetic (see `expr`).
//!
//! Jobs from the command line come first, then each file's jobs; every file after the first
//! starts a new stonewalled group. Command-line options given before any `--name` sit below
//! each file's `[global]` (fio applies them first and lets the file override them).

use super::expr::{self, ExprError, MissingEnv, SystemValues};
use crate::job::error::JobError;
use crate::job::options::Kind;
use crate::job::raw::{lookup, LayeredJob, RawJob, Source};
use std::path::{Path, PathBuf};

/// What values in a job file may refer to.
pub(crate) struct Context<'a> {
    pub system: SystemValues,
    pub missing_env: MissingEnv,
    pub env: &'a dyn Fn(&str) -> Option<String>,
}

/// The jobs of one job file, each with the file's `[global]` options above it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ParsedFile {
    pub jobs: Vec<LayeredJob>,
    /// Things accepted only because of `--fio-compat=lenient`.
    pub warnings: Vec<String>,
}

/// Reads and parses one job file (and the files it includes).
pub(crate) fn read_job_file(path: &Path, cx: &Context) -> Result<ParsedFile, JobError> {
    let mut parser = FileParser {
        cx,
        global: RawJob::new(
            "global",
            Source::File {
                path: path.to_path_buf(),
                line: 1,
            },
        ),
        section: Section::None,
        jobs: Vec::new(),
        open_files: Vec::new(),
        warnings: Vec::new(),
    };
    parser.parse_file(path, None)?;
    parser.close_section();
    Ok(ParsedFile {
        jobs: parser.jobs,
        warnings: parser.warnings,
    })
}

/// All jobs of a command line: the command-line jobs, then those of each file in order.
/// `sections`, when not empty, keeps only the file jobs with those names.
pub(crate) fn assemble(
    cli_global: &RawJob,
    cli_jobs: &[RawJob],
    files: &[PathBuf],
    sections: &[String],
    cx: &Context,
) -> Result<(Vec<LayeredJob>, Vec<String>), JobError> {
    let mut jobs: Vec<LayeredJob> = cli_jobs
        .iter()
        .map(|job| LayeredJob {
            global: cli_global.clone(),
            job: job.clone(),
        })
        .collect();
    let mut warnings = Vec::new();
    let mut sections_seen = vec![false; sections.len()];
    for (index, path) in files.iter().enumerate() {
        let parsed = read_job_file(path, cx)?;
        warnings.extend(parsed.warnings);
        let file_jobs = parsed.jobs.into_iter().filter(|layered| {
            let position = sections.iter().position(|s| *s == layered.job.name);
            if let Some(position) = position {
                sections_seen[position] = true;
            }
            sections.is_empty() || position.is_some()
        });
        let mut first = true;
        for LayeredJob { global, mut job } in file_jobs {
            if index > 0 && first {
                let stonewall = crate::job::options::opt::STONEWALL;
                let source = Source::FileStart { path: path.clone() };
                job.set(stonewall, Some("1"), source)?;
            }
            first = false;
            let mut layered_global = cli_global.clone();
            layered_global.overlay(&global);
            jobs.push(LayeredJob {
                global: layered_global,
                job,
            });
        }
    }
    if let Some(missing) = sections_seen.iter().position(|seen| !seen) {
        return Err(JobError::UnknownSection {
            name: sections[missing].clone(),
        });
    }
    Ok((jobs, warnings))
}

enum Section {
    /// Before the first header: options here are an error.
    None,
    Global,
    Job(RawJob),
}

struct FileParser<'a> {
    cx: &'a Context<'a>,
    global: RawJob,
    section: Section,
    jobs: Vec<LayeredJob>,
    /// The include chain being read, to refuse a file that includes itself.
    open_files: Vec<PathBuf>,
    warnings: Vec<String>,
}

impl FileParser<'_> {
    /// `included_at` is the `include` line that pulled this file in, if any.
    fn parse_file(&mut self, path: &Path, included_at: Option<&Source>) -> Result<(), JobError> {
        let unreadable = |reason: String| JobError::Unreadable {
            path: path.display().to_string(),
            reason,
        };
        let bytes = super::text_check::job_bytes(path).map_err(|e| match included_at {
            Some(at) => unreadable(format!("{e} (included at {at})")),
            None => unreadable(e),
        })?;
        let text = super::text_check::job_text(path, bytes)?;
        // Canonical names catch a cycle through differently spelled paths.
        let identity = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        if let Some(at) = included_at.filter(|_| self.open_files.contains(&identity)) {
            return Err(JobError::Syntax {
                at: at.clone(),
                problem: format!("include {} would include itself again", path.display()),
                fix: "remove the include that closes the cycle".into(),
            });
        }
        self.open_files.push(identity);
        for (index, raw_line) in text.lines().enumerate() {
            let at = Source::File {
                path: path.to_path_buf(),
                line: u32::try_from(index + 1).unwrap_or(u32::MAX),
            };
            let line = strip_comment(raw_line).trim();
            if line.is_empty() {
                continue;
            }
            if let Some(header) = line.strip_prefix('[') {
                if included_at.is_some() {
                    return Err(syntax(
                        &at,
                        "an included file cannot start a [section]",
                        "move the section into the including file",
                    ));
                }
                self.open_section(header, at)?;
            } else if let Some(target) = include_target(line) {
                let target = path.parent().unwrap_or(Path::new("")).join(target);
                self.parse_file(&target, Some(&at))?;
            } else {
                self.option(line, at)?;
            }
        }
        self.open_files.pop();
        Ok(())
    }

    fn open_section(&mut self, header: &str, at: Source) -> Result<(), JobError> {
        let name = header.strip_suffix(']').ok_or_else(|| {
            syntax(
                &at,
                "the section header has no closing ']'",
                "write it as [name]",
            )
        })?;
        let name = name.trim();
        if name.is_empty() {
            return Err(syntax(&at, "the section has no name", "write it as [name]"));
        }
        self.close_section();
        self.section = match name {
            "global" => Section::Global,
            _ => Section::Job(RawJob::new(name, at)),
        };
        Ok(())
    }

    fn close_section(&mut self) {
        if let Section::Job(job) = std::mem::replace(&mut self.section, Section::None) {
            self.jobs.push(LayeredJob {
                global: self.global.clone(),
                job,
            });
        }
    }

    fn option(&mut self, line: &str, at: Source) -> Result<(), JobError> {
        let (key, value) = match line.split_once('=') {
            Some((key, value)) => (key.trim(), Some(value.trim())),
            None => (line, None),
        };
        let def = lookup(key, &at)?;
        let value = match value {
            Some("") if def.kind != Kind::Bool => None,
            Some(value) => Some(self.expand(def, value, &at)?),
            None => None,
        };
        let target = match &mut self.section {
            Section::None => {
                return Err(syntax(
                    &at,
                    &format!("option '{key}' is outside any [section]"),
                    "put it under [global] or a [job] header",
                ))
            }
            // fio accepts it and runs no job for it: every job keeps its [section] name.
            Section::Global if def.name == "name" => {
                self.warnings.push(format!(
                    "{at}: name= in [global] names no job; each [section] header names its job (as fio)"
                ));
                return Ok(());
            }
            Section::Global => &mut self.global,
            Section::Job(job) => job,
        };
        match (def.name, value) {
            ("name", Some(name)) => target.set_name(name),
            (_, value) => target.set(def, value.as_deref(), at)?,
        }
        Ok(())
    }

    fn expand(
        &mut self,
        def: &'static crate::job::options::OptionDef,
        value: &str,
        at: &Source,
    ) -> Result<String, JobError> {
        let invalid = |error: ExprError| {
            let hint = match error {
                ExprError::UnsetVariable(_) | ExprError::EmptyVariable(_) => {
                    "set it in the environment, or --fio-compat=lenient to read it as empty".into()
                }
                _ => def.hint(),
            };
            JobError::InvalidValue {
                at: at.clone(),
                option: def.name,
                value: value.to_string(),
                reason: error.to_string(),
                hint,
            }
        };
        let (with_env, emptied) =
            expr::expand_env(value, self.cx.env, self.cx.missing_env).map_err(invalid)?;
        self.warnings.extend(emptied.iter().map(|name| {
            format!("{at}: {}={value}: environment variable '{name}' is unset or empty; read as empty (as fio)", def.name)
        }));
        expr::expand_value(def, &with_env, &self.cx.system).map_err(invalid)
    }
}

fn syntax(at: &Source, problem: &str, fix: &str) -> JobError {
    JobError::Syntax {
        at: at.clone(),
        problem: problem.into(),
        fix: fix.into(),
    }
}

/// The line up to its first `;` or `#` (fio ends a line there wherever it appears).
fn strip_comment(line: &str) -> &str {
    line.split([';', '#']).next().unwrap_or_default()
}

/// The file named by `include FILE`, if the line is an include.
fn include_target(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("include")?;
    rest.starts_with(char::is_whitespace)
        .then(|| rest.trim())
        .filter(|target| !target.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::options::opt;

    const SYSTEM: SystemValues = SystemValues {
        ncpus: 2,
        mb_memory: 1000,
        pagesize: 4096,
    };

    fn no_env(_: &str) -> Option<String> {
        None
    }

    fn cx() -> Context<'static> {
        Context {
            system: SYSTEM,
            missing_env: MissingEnv::Error,
            env: &no_env,
        }
    }

    /// Writes `files` (name, text) into a fresh directory and parses the first.
    fn parse(files: &[(&str, &str)]) -> Result<ParsedFile, JobError> {
        let dir = tempfile::tempdir().unwrap();
        write_all(dir.path(), files);
        read_job_file(&dir.path().join(files[0].0), &cx())
    }

    fn write_all(dir: &Path, files: &[(&str, &str)]) {
        for (name, text) in files {
            let path = dir.join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
    }

    /// Each job as fio's `--showcmd` lists it: name, then `key=value` of global and own options.
    fn showcmd(parsed: &ParsedFile) -> Vec<String> {
        parsed
            .jobs
            .iter()
            .map(|layered| {
                let options = [&layered.global, &layered.job]
                    .into_iter()
                    .flat_map(|layer| layer.options())
                    .map(|o| format!(" {}={}", o.def.name, o.value));
                format!("{}:{}", layered.job.name, options.collect::<String>())
            })
            .collect()
    }

    fn error(files: &[(&str, &str)]) -> String {
        parse(files).unwrap_err().to_string()
    }

    // Expected jobs taken from `fio --showcmd` on the same text.
    #[test]
    fn comments_anywhere_end_the_line_and_globals_accumulate() {
        let text = "; comment\n# another\n[global]\nbs=4k   ; trailing\nsize=1m # trailing hash\n\
                    rw=randread;nospace\n[job1]\ntime_based\nruntime=2\n[global]\niodepth=4\n\
                    [job1]\nfilename=/tmp/x#y\n";
        let parsed = parse(&[("a.fio", text)]).unwrap();
        assert_eq!(
            showcmd(&parsed),
            [
                "job1: bs=4k size=1m rw=randread time_based=1 runtime=2",
                "job1: bs=4k size=1m rw=randread iodepth=4 filename=/tmp/x",
            ]
        );
        let origin = &parsed.jobs[1].job.origin;
        assert!(matches!(origin, Source::File { line: 12, .. }), "{origin}");
    }

    #[test]
    fn whitespace_around_keys_values_and_headers_is_dropped() {
        let parsed = parse(&[(
            "a.fio",
            "[global]\n  bs = 8k  \n\tsize=1m\n[x];c\n[y] # c\n",
        )])
        .unwrap();
        assert_eq!(showcmd(&parsed), ["x: bs=8k size=1m", "y: bs=8k size=1m"]);
    }

    #[test]
    fn includes_are_relative_to_the_including_file_and_nest() {
        let parsed = parse(&[
            ("i.fio", "[j]\nsize=1m\ninclude sub/inc.fio\n"),
            ("sub/inc.fio", "iodepth=4\ninclude inner.fio\n"),
            ("sub/inner.fio", "bs=8k\n"),
        ])
        .unwrap();
        assert_eq!(showcmd(&parsed), ["j: size=1m iodepth=4 bs=8k"]);
        let bs = parsed.jobs[0].job.get(opt::BS).unwrap();
        assert!(
            bs.source.to_string().ends_with("sub/inner.fio:1"),
            "{}",
            bs.source
        );
    }

    #[test]
    fn include_cycles_and_sections_in_included_files_are_errors() {
        let cycle = error(&[
            ("k.fio", "[j]\nsize=1m\ninclude a.inc\n"),
            ("a.inc", "include b.inc\n"),
            ("b.inc", "include a.inc\n"),
        ]);
        assert!(
            cycle.contains("b.inc:1") && cycle.contains("include itself"),
            "{cycle}"
        );
        let section = error(&[
            ("l.fio", "[j]\ninclude s.inc\n"),
            ("s.inc", "bs=8k\n[inner]\n"),
        ]);
        assert!(
            section.contains("s.inc:2") && section.contains("[section]"),
            "{section}"
        );
        let missing = error(&[("m.fio", "[j]\ninclude nope.inc\n")]);
        assert!(
            missing.contains("nope.inc") && missing.contains("m.fio:2"),
            "{missing}"
        );
    }

    #[test]
    fn line_errors_name_file_line_and_fix() {
        let cases = [
            ("bs=4k\n[j]\n", ":1: option 'bs' is outside any [section]"),
            ("[j]\nbs\n", ":2: bs needs a value (e.g. bs=4k)"),
            ("[j]\nbs=\n", ":2: bs needs a value"),
            ("[j]\nTHREAD\n", ":2: unknown option 'THREAD'"),
            ("[j]\nthreads\n", "(did you mean 'thread'?)"),
            ("[j\nbs=4k\n", ":1: the section header has no closing ']'"),
            ("[]\n", ":1: the section has no name"),
            ("[j]\nsize=${IOLENS_TEST_UNSET}\n", ":2: size=${IOLENS_TEST_UNSET}: environment variable 'IOLENS_TEST_UNSET' is not set"),
            ("[j]\nbs=(4*)\n", ":2: bs=(4*): unexpected ')'"),
        ];
        for (text, expected) in cases {
            let message = error(&[("e.fio", text)]);
            assert!(message.contains(expected), "{text:?}: {message}");
            assert!(message.contains("e.fio:"), "{message}");
        }
    }

    #[test]
    fn values_expand_env_keywords_and_arithmetic() {
        let env = |name: &str| (name == "SIZE").then(|| "64m".to_string());
        let cx = Context {
            system: SYSTEM,
            missing_env: MissingEnv::Error,
            env: &env,
        };
        let dir = tempfile::tempdir().unwrap();
        let text = "[j]\nsize=${SIZE}\niodepth=$ncpus\nbs=(8*1024)\nio_size=8*$mb_memory\n";
        write_all(dir.path(), &[("v.fio", text)]);
        let parsed = read_job_file(&dir.path().join("v.fio"), &cx).unwrap();
        assert_eq!(
            showcmd(&parsed),
            ["j: size=64m iodepth=2 bs=8192 io_size=8000"]
        );
    }

    #[test]
    fn lenient_mode_reads_missing_variables_as_empty_with_a_warning() {
        let cx = Context {
            system: SYSTEM,
            missing_env: MissingEnv::Empty,
            env: &no_env,
        };
        let dir = tempfile::tempdir().unwrap();
        write_all(dir.path(), &[("w.fio", "[j]\nfilename=/tmp/f${SUFFIX}\n")]);
        let parsed = read_job_file(&dir.path().join("w.fio"), &cx).unwrap();
        assert_eq!(showcmd(&parsed), ["j: filename=/tmp/f"]);
        assert!(
            parsed.warnings[0].contains("'SUFFIX'"),
            "{:?}",
            parsed.warnings
        );
    }

    #[test]
    fn name_in_global_is_accepted_and_names_no_job() {
        // fio 3.33 runs [a] and [b] under their own names and no job 'gj'.
        let text = "[global]\nname=gj\nsize=1m\n[a]\n[b]\nbs=8k\n";
        let parsed = parse(&[("g.fio", text)]).unwrap();
        assert_eq!(showcmd(&parsed), ["a: size=1m", "b: size=1m bs=8k"]);
        assert!(parsed.warnings[0].contains("g.fio:2: name= in [global]"));
    }

    #[test]
    fn name_option_renames_a_job() {
        let parsed = parse(&[("n.fio", "[j]\nname=renamed\nsize=1m\n")]).unwrap();
        assert_eq!(showcmd(&parsed), ["renamed: size=1m"]);
    }

    #[test]
    fn assemble_puts_command_line_jobs_first_and_stonewalls_each_later_file() {
        let dir = tempfile::tempdir().unwrap();
        write_all(
            dir.path(),
            &[
                ("c.fio", "[global]\nbs=8k\n[c1]\n[c2]\n"),
                ("d.fio", "[d1]\n[d2]\n"),
            ],
        );
        let (cli_global, cli_jobs) = crate::job::front::cli_args::parse_fio_args(&[
            "--bs=16k".to_string(),
            "--size=1m".to_string(),
            "--name=x".to_string(),
        ])
        .unwrap();
        let files = [dir.path().join("c.fio"), dir.path().join("d.fio")];
        let (jobs, _) = assemble(&cli_global, &cli_jobs, &files, &[], &cx()).unwrap();
        let names: Vec<&str> = jobs.iter().map(|j| j.job.name.as_str()).collect();
        assert_eq!(names, ["x", "c1", "c2", "d1", "d2"]);
        let stonewalled: Vec<bool> = jobs
            .iter()
            .map(|j| j.job.get(opt::STONEWALL).is_some())
            .collect();
        assert_eq!(stonewalled, [false, false, false, true, false]);
        // The file's [global] overrides the command line; a file without one inherits it.
        assert_eq!(jobs[1].global.get(opt::BS).unwrap().value, "8k");
        assert_eq!(jobs[1].global.get(opt::SIZE).unwrap().value, "1m");
        assert_eq!(jobs[3].global.get(opt::BS).unwrap().value, "16k");

        let sections = ["d2".to_string()];
        let (jobs, _) = assemble(&cli_global, &[], &files, &sections, &cx()).unwrap();
        assert_eq!(jobs.len(), 1);
        assert_eq!(jobs[0].job.name, "d2");
        let unknown = ["nope".to_string()];
        let message = assemble(&cli_global, &[], &files, &unknown, &cx()).unwrap_err();
        assert!(message.to_string().contains("--section=nope"), "{message}");
    }
}
