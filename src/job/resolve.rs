//! Raw options → `JobSpec`: each section's resolver (in `spec/`, reading the options
//! through `Layers`), then the checks that need several sections or jobs at once.

use super::error::JobError;
use super::layers::Layers;
use super::options::{opt, Kind, Status};
use super::raw::{LayeredJob, RawJob};
use super::spec::*;
use crate::units::{self, KbBase};
use std::collections::BTreeSet;

/// Resolved jobs plus notes about things accepted but probably not meant.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Resolved {
    pub jobs: Vec<JobSpec>,
    pub warnings: Vec<String>,
}

/// Resolves every job against the global options.
pub(crate) fn resolve(global: &RawJob, jobs: &[RawJob]) -> Result<Resolved, JobError> {
    resolve_pairs(jobs.iter().map(|job| (job, global)))
}

/// Resolves jobs that each carry their own global options (job files: the `[global]`
/// sections above each job).
pub(crate) fn resolve_layered(jobs: &[LayeredJob]) -> Result<Resolved, JobError> {
    resolve_pairs(jobs.iter().map(|layered| (&layered.job, &layered.global)))
}

fn resolve_pairs<'a>(
    pairs: impl ExactSizeIterator<Item = (&'a RawJob, &'a RawJob)>,
) -> Result<Resolved, JobError> {
    if pairs.len() == 0 {
        return Err(JobError::NoJobs);
    }
    let mut warnings = Vec::new();
    let mut ignored_named = BTreeSet::new();
    let mut jobs: Vec<JobSpec> = Vec::with_capacity(pairs.len());
    for (job, global) in pairs {
        let layers = Layers::new(job, global)?;
        layers.check_statuses(&mut warnings, &mut ignored_named)?;
        let spec = layers.job_spec(&mut warnings)?;
        if let Some(waitee) = &spec.control.wait_for {
            if !jobs.iter().any(|earlier| &earlier.name == waitee) {
                let setting = Layers::new(job, global)?
                    .given(opt::WAIT_FOR)
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

impl Layers<'_> {
    /// Ignored options become warnings, one per option and run (`ignored_named` holds the
    /// options already warned about: a `[global]` one is in effect in every section);
    /// unsupported ones are errors unless left at their default, which changes nothing.
    /// The engine comes first: with `ioengine=rbd`, that is the error, not `pool=`.
    fn check_statuses(
        &self,
        warnings: &mut Vec<String>,
        ignored_named: &mut BTreeSet<&'static str>,
    ) -> Result<(), JobError> {
        self.choice::<EngineKind>(opt::IOENGINE)?;
        for option in self.in_effect() {
            match option.def.status {
                Status::Supported => {}
                Status::Ignored(why) => {
                    if ignored_named.insert(option.def.name) {
                        warnings.push(format!(
                            "{}: {}={}: ignored: {why}",
                            option.source, option.def.name, option.value
                        ));
                    }
                }
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
        let (engine, queue) = EngineSpec::resolve(self, warnings)?;
        let files = self.files(engine.kind)?;
        let target = self.target()?;
        let workload = self.workload(warnings)?;
        if self.kb_base == KbBase::Compat1024 {
            warnings.extend(self.iec_prefix_warnings());
        }
        // This order decides which error a job with several reports; control's checks
        // need pacing's rate caps.
        let pacing = self.pacing()?;
        let io = self.io_mode(&files)?;
        let buffers = self.buffers()?;
        let measure = self.measure()?;
        let exec = self.exec()?;
        let logs = self.logs()?;
        let errors = self.errors()?;
        let control = self.control(&pacing)?;
        let mut spec = JobSpec {
            name: self.job.name.clone(),
            description: self.given(opt::DESCRIPTION).map(|s| s.text.to_string()),
            engine,
            target,
            workload,
            pacing,
            io,
            buffers,
            measure,
            exec,
            logs,
            errors,
            files,
            control,
            queue,
            given: GivenOptions {
                job: self.job.listed_options(),
                global: self.global.listed_options(),
            },
            verify: None,
            iolog: self.iolog()?,
        };
        if let Some(replay) = &spec.iolog.replay {
            replay.shape(&mut spec.target, &mut spec.workload, &mut spec.files);
        }
        spec.verify = self.verify(&spec)?;
        check_file_ops(self, &spec)?;
        check_unlink_each_loop(self, &spec)?;
        check_sprandom(self, &spec)?;
        check_sequence(self, &spec)?;
        Ok(spec)
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::job::front::cli_args::parse_fio_args;
    use crate::job::options;
    use crate::job::options::OptionDef;
    use std::path::Path;
    use std::time::Duration;

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
    fn each_job_carries_its_options_as_given() {
        let resolved = run(&[
            "--bs=8k",
            "--name=a",
            "--size=1m",
            "--thread",
            "--rw=write",
            "--name=b",
            "--size=2m",
        ])
        .unwrap();
        let pairs = |list: &[(&str, &str)]| -> Vec<(String, String)> {
            list.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let [a, b] = [&resolved.jobs[0].given, &resolved.jobs[1].given];
        assert_eq!(
            a.job,
            pairs(&[("name", "a"), ("size", "1m"), ("rw", "write")]),
            "expected job a's own options in order, bare flags left out"
        );
        assert_eq!(
            b.job,
            pairs(&[("name", "b"), ("size", "2m")]),
            "expected job b's own options only"
        );
        for given in [a, b] {
            assert_eq!(
                given.global,
                pairs(&[("bs", "8k")]),
                "expected the global options with each job"
            );
        }
    }

    #[test]
    fn defaults_match_fio() {
        let spec = job(&[]);
        assert_eq!(spec.name, "t");
        assert_eq!(spec.engine.kind, EngineKind::Psync);
        assert_eq!(spec.queue.iodepth, 1);
        assert_eq!(spec.queue.batch_submit, 1);
        assert_eq!(spec.queue.batch_complete_min, 1);
        assert_eq!(spec.queue.batch_complete_max, 1);
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

    /// What a supported option needs before its example is valid or takes effect: the
    /// options it tunes or depends on (`LOG` stands for a real I/O log).
    const CONTEXT: &[(&str, &[&str])] = &[
        ("time_based", &["--runtime=1"]),
        ("zonemode", &["--zonesize=16m"]),
        ("latency_target", &["--latency_window=1s"]),
        ("log_issue_time", &["--write_lat_log=l", "--log_offset=1"]),
        ("sprandom", &["--rw=randwrite"]),
        (
            "random_sequence_stride",
            &["--rw=randread", "--random_distribution=sequence:2,0,1"],
        ),
        ("spr_op", &["--rw=randwrite", "--sprandom=1"]),
        ("spr_num_regions", &["--rw=randwrite", "--sprandom=1"]),
        ("spr_cs", &["--rw=randwrite", "--sprandom=1"]),
        // the queue settings act only at a depth above one
        ("iodepth_low", &["--ioengine=io_uring", "--iodepth=32"]),
        (
            "iodepth_batch_submit",
            &["--ioengine=io_uring", "--iodepth=32"],
        ),
        (
            "iodepth_batch_complete_min",
            &["--ioengine=io_uring", "--iodepth=32"],
        ),
        (
            "iodepth_batch_complete_max",
            &["--ioengine=io_uring", "--iodepth=32"],
        ),
        ("steadystate", &["--steadystate_duration=30s"]),
        ("steadystate_ramp_time", &["--steadystate_duration=30s"]),
        // latency_target needs a window: the example's replaces this first one
        (
            "latency_window",
            &["--latency_target=2ms", "--latency_window=2s"],
        ),
        (
            "latency_percentile",
            &["--latency_target=2ms", "--latency_window=1s"],
        ),
        (
            "latency_run",
            &["--latency_target=2ms", "--latency_window=1s"],
        ),
        ("hipri", &["--ioengine=io_uring"]),
        ("fixedbufs", &["--ioengine=io_uring"]),
        ("registerfiles", &["--ioengine=io_uring"]),
        ("sqthread_poll", &["--ioengine=io_uring"]),
        ("cmdprio_percentage", &["--ioengine=io_uring"]),
        (
            "cmdprio_class",
            &["--ioengine=io_uring", "--cmdprio_percentage=50"],
        ),
        (
            "cmdprio",
            &["--ioengine=io_uring", "--cmdprio_percentage=50"],
        ),
        ("cmdprio_bssplit", &["--ioengine=io_uring"]),
        ("stat_type", &["--ioengine=filestat"]),
        // zonemode=strided needs a zone size: the example's replaces this first one
        ("zonesize", &["--zonemode=strided", "--zonesize=8m"]),
        ("zonerange", &["--zonemode=strided", "--zonesize=16m"]),
        ("zoneskip", &["--zonemode=strided", "--zonesize=16m"]),
        ("do_verify", &["--rw=write", "--verify=crc32c"]),
        ("verify_only", &["--rw=write", "--verify=crc32c"]),
        ("verify_offset", &["--rw=write", "--verify=crc32c"]),
        ("verify_interval", &["--rw=write", "--verify=crc32c"]),
        (
            "verify_pattern_interval",
            &["--rw=write", "--verify_pattern=0xff"],
        ),
        ("verify_fatal", &["--rw=write", "--verify=crc32c"]),
        ("verify_dump", &["--rw=write", "--verify=crc32c"]),
        ("verify_backlog", &["--rw=write", "--verify=crc32c"]),
        (
            "verify_backlog_batch",
            &["--rw=write", "--verify=crc32c", "--verify_backlog=1024"],
        ),
        ("verify_write_sequence", &["--rw=write", "--verify=crc32c"]),
        ("verify_header_seed", &["--rw=randrw", "--verify=crc32c"]),
        ("verify_state_save", &["--rw=write", "--verify=crc32c"]),
        ("verify_state_load", &["--rw=write", "--verify=crc32c"]),
        ("experimental_verify", &["--rw=write", "--verify=crc32c"]),
        (
            "trim_percentage",
            &["--rw=trimwrite", "--verify=crc32c", "--trim_backlog=64"],
        ),
        (
            "trim_verify_zero",
            &[
                "--rw=trimwrite",
                "--verify=crc32c",
                "--trim_percentage=10",
                "--trim_backlog=64",
            ],
        ),
        (
            "trim_backlog",
            &["--rw=trimwrite", "--verify=crc32c", "--trim_percentage=10"],
        ),
        (
            "trim_backlog_batch",
            &[
                "--rw=trimwrite",
                "--verify=crc32c",
                "--trim_percentage=10",
                "--trim_backlog=64",
            ],
        ),
        ("read_iolog_chunked", &["--read_iolog=LOG"]),
        ("replay_no_stall", &["--read_iolog=LOG"]),
        ("replay_redirect", &["--read_iolog=LOG"]),
        ("replay_scale", &["--read_iolog=LOG"]),
        ("replay_align", &["--read_iolog=LOG"]),
        ("replay_time_scale", &["--read_iolog=LOG"]),
        ("replay_skip", &["--read_iolog=LOG"]),
        ("flow_id", &["--flow=2"]),
        ("flow_sleep", &["--flow=2"]),
    ];

    /// Options whose example is also what a job gets without them: a value that differs.
    const NOT_THE_DEFAULT: &[(&str, &str)] = &[("bs", "8k"), ("blockalign", "8k")];

    /// A supported option's example in a job of its own: the arguments without the option
    /// (with its `CONTEXT`, and for `wait_for` an earlier job) and with it. `log` is a real
    /// I/O log for `read_iolog`, which reads its log while resolving.
    fn example_job(def: &OptionDef, log: &Path) -> (Vec<String>, Vec<String>) {
        let log = log.display().to_string();
        let mut without = vec!["--name=t".to_string(), "--filename=/tmp/f".to_string()];
        if def.name == "wait_for" {
            without.splice(
                0..0,
                without
                    .clone()
                    .into_iter()
                    .map(|a| a.replace("=t", "=writer")),
            );
        }
        let context = CONTEXT.iter().find(|(name, _)| *name == def.name);
        for arg in context.map_or(&[][..], |(_, args)| args) {
            without.push(arg.replace("LOG", &log));
        }
        let value = NOT_THE_DEFAULT
            .iter()
            .find(|(name, _)| *name == def.name)
            .map_or(def.example, |(_, value)| value);
        let mut with = without.clone();
        with.push(match def.name {
            "read_iolog" => format!("--read_iolog={log}"),
            _ => format!("--{}={value}", def.name),
        });
        (without, with)
    }

    /// The supported options a job can set (`name` starts the job), and an I/O log for
    /// `example_job`.
    fn settable_options() -> (impl Iterator<Item = &'static OptionDef>, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("job.iolog"),
            "fio version 3 iolog\n0 f add\n1 f read 0 4096\n",
        )
        .unwrap();
        let supported = options::OPTIONS
            .iter()
            .filter(|d| d.status == Status::Supported && d.name != "name");
        (supported, dir)
    }

    fn strs(args: &[String]) -> Vec<&str> {
        args.iter().map(String::as_str).collect()
    }

    #[test]
    fn every_option_accepts_its_example() {
        let (supported, dir) = settable_options();
        let log = dir.path().join("job.iolog");
        for def in supported {
            let (_, with) = example_job(def, &log);
            let args = strs(&with);
            assert!(run(&args).is_ok(), "{args:?}: {:?}", run(&args));
        }
    }

    /// Supported options these tests leave out, each with why.
    const NOT_CHECKED_HERE: &[(&str, &str)] = &[
        (
            "experimental_verify",
            "accepted without effect: iolens' write log reads back the blocks fio's replaying \
             verifier would",
        ),
        (
            "read_iolog_chunked",
            "accepted without effect: iolens always reads a replayed log as it goes",
        ),
        (
            "merge_blktrace_file",
            "acts only on blktrace traces, which tests/it/iolog.rs merges",
        ),
        (
            "merge_blktrace_scalars",
            "acts only on blktrace traces, which tests/it/iolog.rs merges",
        ),
        (
            "merge_blktrace_iters",
            "acts only on blktrace traces, which tests/it/iolog.rs merges",
        ),
    ];

    /// Options the resolvers still look up twice (a check and the resolver, or two
    /// sections). Each should be read once; the test fails when one is, so that it leaves
    /// this list, which only shrinks.
    const READ_TWICE: &[&str] = &[
        "directory",
        "randseed",
        "random_generator",
        "sprandom",
        "unlink_each_loop",
        "log_window_value",
        "allow_mounted_write",
        "verify_pattern",
    ];

    /// The supported options these tests check.
    fn checked(def: &&OptionDef) -> bool {
        !NOT_CHECKED_HERE.iter().any(|(name, _)| *name == def.name)
    }

    /// The options the resolvers of the last job of `args` look up, once per lookup.
    fn reads(args: &[String]) -> Vec<&'static str> {
        let (global, jobs) = parse_fio_args(args).unwrap();
        let layers = Layers::new(jobs.last().unwrap(), &global).unwrap();
        layers.job_spec(&mut Vec::new()).unwrap();
        layers.reads.take()
    }

    #[test]
    fn every_supported_option_is_read_exactly_once() {
        let (supported, dir) = settable_options();
        let log = dir.path().join("job.iolog");
        let mut wrong = Vec::new();
        for def in supported.filter(checked) {
            let (_, with) = example_job(def, &log);
            let times = reads(&with)
                .iter()
                .filter(|&&name| name == def.name)
                .count();
            let expected = if READ_TWICE.contains(&def.name) { 2 } else { 1 };
            if times != expected {
                wrong.push(format!(
                    "{} read {times} times, expected {expected}",
                    def.name
                ));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    #[test]
    fn setting_each_supported_option_changes_the_job() {
        let (supported, dir) = settable_options();
        let log = dir.path().join("job.iolog");
        let resolved = |args: &[String]| {
            let resolved = run(&strs(args)).unwrap_or_else(|e| panic!("{args:?}: {e}"));
            let mut spec = resolved.jobs.last().unwrap().clone();
            spec.given = GivenOptions::default();
            spec
        };
        let unchanged: Vec<&str> = supported
            .filter(checked)
            .filter(|def| {
                let (without, with) = example_job(def, &log);
                resolved(&without) == resolved(&with)
            })
            .map(|def| def.name)
            .collect();
        assert!(
            unchanged.is_empty(),
            "expected each option to change the resolved job; these did not: {unchanged:?}"
        );
    }

    #[test]
    fn ignored_options_warn_and_change_nothing() {
        for def in options::OPTIONS {
            let Status::Ignored(why) = def.status else {
                continue;
            };
            let arg = format!("--{}=1", def.name);
            let resolved = run(&["--name=t", "--filename=/tmp/f", &arg]).unwrap();
            // The option is listed among those given, and changes nothing else.
            let mut spec = resolved.jobs[0].clone();
            assert_eq!(
                spec.given.job.last(),
                Some(&(def.name.to_string(), "1".to_string())),
                "expected {arg} among the job's options as given"
            );
            spec.given = job(&[]).given;
            assert_eq!(spec, job(&[]), "{arg}");
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
    fn the_engine_comes_first_in_an_engine_options_refusal() {
        assert_eq!(
            error(&["--name=t", "--size=1m", "--pool=x", "--ioengine=rbd"]),
            "command line argument 4: ioengine=rbd: not supported by iolens: this ioengine \
             is not implemented (instead: ioengine=io_uring, libaio or psync)",
            "expected the rbd job to be refused for its engine, not for pool="
        );
        assert_eq!(
            error(&["--name=t", "--size=1m", "--pool=x"]),
            "command line argument 3: pool=x: not supported by iolens: an option of \
             ioengine=rbd, rados or dfs, which iolens does not have (instead: ioengine=io_uring, \
             libaio or psync)",
            "expected pool= alone to name the engines it belongs to"
        );
        assert_eq!(
            error(&["--name=t", "--size=1m", "--spdk_json_conf=x"]),
            "command line argument 3: spdk_json_conf=x: not supported by iolens: needs the \
             external engine spdk_bdev (a fio plugin, loaded with ioengine=PATH), which iolens \
             cannot load (instead: ioengine=io_uring, libaio or psync)",
            "expected a plugin's option to name its external engine"
        );
        for engine in ["/usr/local/lib/spdk_bdev", "spdk_bdev", "spdk"] {
            let said = error(&[
                "--name=t",
                "--size=1m",
                "--spdk_json_conf=x",
                &format!("--ioengine={engine}"),
            ]);
            assert!(
                said.starts_with(&format!("command line argument 4: ioengine={engine}: "))
                    && said.contains("an external engine (a fio plugin"),
                "expected ioengine={engine} to be refused first, as an external engine: {said}"
            );
        }
    }

    #[test]
    fn an_ignored_option_warns_once_per_run() {
        let resolved = run(&[
            "--disk_util=0",
            "--name=a",
            "--size=1m",
            "--name=b",
            "--size=1m",
            "--disk_util=1",
        ])
        .unwrap();
        let about: Vec<&String> = resolved
            .warnings
            .iter()
            .filter(|w| w.contains("disk_util"))
            .collect();
        assert_eq!(
            about,
            ["command line argument 1: disk_util=0: ignored: device statistics are always collected"],
            "expected one warning for disk_util across both jobs"
        );
    }

    #[test]
    fn fio_engines_iolens_lacks_are_named_as_unsupported() {
        assert_eq!(
            error(&["--name=t", "--size=1m", "--ioengine=splice"]),
            "command line argument 3: ioengine=splice: not supported by iolens: this ioengine \
             is not implemented (instead: ioengine=io_uring, libaio or psync)"
        );
        assert!(error(&["--name=t", "--size=1m", "--rw=read:-8k"]).contains("backwards"));
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
}
