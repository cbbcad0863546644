//! fio's `verify*` options → `VerifySpec`, with the checks that make a verify run
//! meaningful (an engine that stores data, blocks that hold a header, a pattern that
//! parses). A job that only reads checks that every block holds what its header says.

use super::pattern::{parse_verify_pattern, Pattern};
use super::JobSpec;
use crate::job::choice::choice_words;
use crate::job::error::JobError;
use crate::job::layers::Layers;
use crate::job::options::opt;
use crate::units;
use serde::{Deserialize, Serialize};

/// How the checksum of a verified block is computed (fio's `verify=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum VerifyKind {
    Crc32c,
    Crc64,
    Xxhash,
    Sha256,
    Md5,
    /// The block must hold `verify_pattern` and nothing else (fio's strict pattern: no header).
    Pattern,
    /// Only the block header (offset, generation, writer) is checked.
    Meta,
    /// A header, and the rest of the block must equal `verify_pattern`.
    PatternHdr,
}

impl VerifyKind {
    /// Whether each block carries the header (all but the strict pattern).
    pub(crate) fn has_header(self) -> bool {
        self != VerifyKind::Pattern
    }
}

// `None`: verification off.
choice_words!(Option<VerifyKind> {
    "0" => None,
    "crc32c" => Some(VerifyKind::Crc32c),
    "crc32c-intel" => Some(VerifyKind::Crc32c),
    "crc64" => Some(VerifyKind::Crc64),
    "xxhash" => Some(VerifyKind::Xxhash),
    "sha256" => Some(VerifyKind::Sha256),
    "md5" => Some(VerifyKind::Md5),
    "pattern" => Some(VerifyKind::Pattern),
    "pattern_hdr" => Some(VerifyKind::PatternHdr),
    "meta" => Some(VerifyKind::Meta),
    "null" => None,
});

/// Bytes of the header at `header_offset` in each verified block.
pub(crate) const VERIFY_HEADER_LEN: u64 = 80;

/// Data verification: every written block carries a header and a checksum that a
/// read-back pass checks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct VerifySpec {
    pub kind: VerifyKind,
    /// `verify_pattern`: bytes repeated over each block's payload; None: seeded random data.
    pub pattern: Option<Pattern>,
    /// `verify_pattern_interval`: the pattern starts again (with its `%o`) every so
    /// many bytes of a block; None: once per block.
    pub pattern_interval: Option<u64>,
    /// `verify_interval`: bytes per header; None: the smallest write block size.
    pub interval: Option<u64>,
    /// `verify_offset`: where in each block its header sits.
    pub header_offset: u64,
    /// `do_verify`: run the read-back pass after the writes.
    pub after_writes: bool,
    /// `verify_only`: write nothing; check what an earlier run of this job wrote.
    pub only: bool,
    /// `verify_backlog`: also verify after every N written blocks (0: only at the end).
    pub backlog: u64,
    /// `verify_backlog_batch`: how many of the waiting blocks each backlog
    /// verify reads (default: `backlog`, all of them); the rest wait for the next.
    pub backlog_batch: u64,
    /// `verify_write_sequence`: a block from an earlier or later write of its
    /// offset is bad (its generation is checked).
    pub write_sequence: bool,
    /// `verify_header_seed`: given, whether a good block from another writer is
    /// bad; None: where fio checks it (jobs that read and write, no backlog).
    pub header_seed: Option<bool>,
    /// `verify_fatal`: stop at the first bad block.
    pub fatal: bool,
    /// `verify_dump`: write found and expected copies of bad blocks.
    pub dump: bool,
    /// `trim_percentage` with `trim_backlog`: trim a share of the written blocks
    /// during the job; None: no trims of verified blocks.
    pub trim: Option<TrimVerify>,
    /// `verify_state_save`: a job that writes saves how far its writes got when it ends.
    pub state_save: bool,
    /// `verify_state_load`: check only what the saved state says was written.
    pub state_load: bool,
    /// Where the state files are and the numbers in their names.
    pub state_files: StateFiles,
}

/// fio's trims of verified blocks: each logged write joins the trim list with
/// `percentage` chance; every `backlog` writes, `batch` of the list are trimmed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct TrimVerify {
    pub percentage: u32,
    /// `trim_verify_zero`: a trimmed block must read back as zeros (else it is not read back).
    pub zero: bool,
    pub backlog: u64,
    /// `trim_backlog_batch` (default `trim_backlog`).
    pub batch: u64,
}

/// fio's verify state file names: `local-<job>-<thread>-verify.state` in the
/// current directory or `--aux-path`, numbered by the thread's place in the run
/// (fio counts from 0 there, while its worker numbers start at 1).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct StateFiles {
    /// `--aux-path`; None: the current directory.
    pub dir: Option<std::path::PathBuf>,
}

impl StateFiles {
    /// The state file of the run's worker number `worker_number` (1, 2, …) of job `job`
    /// (a `/` in the name becomes `.`, as in fio).
    pub(crate) fn path(&self, job: &str, worker_number: u64) -> std::path::PathBuf {
        let name = format!(
            "local-{}-{}-verify.state",
            job.replace('/', "."),
            worker_number - 1
        );
        match &self.dir {
            Some(dir) => dir.join(name),
            None => name.into(),
        }
    }
}

/// Put the jobs' verify state files in `aux_path` when given.
pub(crate) fn place_state_files(jobs: &mut [JobSpec], aux_path: Option<&std::path::Path>) {
    for v in jobs.iter_mut().filter_map(|job| job.verify.as_mut()) {
        v.state_files = StateFiles {
            dir: aux_path.map(std::path::Path::to_path_buf),
        };
    }
}

/// The `verify_interval` fio uses for `given` (init.c's rules): no larger than the
/// smallest write (or, in a job that reads, read) block, and when it does not divide
/// the smallest and largest write blocks, their greatest common divisor.
fn fio_interval(given: u64, write_min: u64, write_max: u64, read_min: Option<u64>) -> u64 {
    let clamped = match read_min {
        _ if given > write_min => write_min,
        Some(r) if given > r => r,
        _ => given,
    };
    match write_min.is_multiple_of(clamped) && write_max.is_multiple_of(clamped) {
        true => clamped,
        false => gcd(write_min, write_max),
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    match b {
        0 => a,
        _ => gcd(b, a % b),
    }
}

impl Layers<'_> {
    pub(crate) fn verify(&self, job: &JobSpec) -> Result<Option<VerifySpec>, JobError> {
        let chosen = self.choice_with_parameter(opt::VERIFY)?;
        chosen.no_parameter()?;
        // As in fio, verify_pattern alone turns on the pattern with a header.
        let implied = self
            .given(opt::VERIFY_PATTERN)
            .filter(|_| self.given(opt::VERIFY).is_none());
        let (kind, setting) = match (chosen.value, implied) {
            (Some(kind), _) => (kind, chosen.setting),
            (None, Some(pattern)) => (VerifyKind::PatternHdr, pattern),
            (None, None) => return Ok(None),
        };
        let pattern = match self.given(opt::VERIFY_PATTERN) {
            Some(s) => Some(parse_verify_pattern(s.text).map_err(|e| s.invalid(e))?),
            None if matches!(kind, VerifyKind::Pattern | VerifyKind::PatternHdr) => {
                return Err(setting.invalid_with_hint(
                    "needs verify_pattern",
                    "e.g. verify=pattern verify_pattern=0xdeadbeef",
                ))
            }
            None => None,
        };
        if job.engine.kind.def().diskless {
            return Err(setting.invalid_with_hint(
                format!(
                    "ioengine={} stores nothing to read back",
                    job.engine.kind.name()
                ),
                "use a real ioengine such as psync or io_uring",
            ));
        }
        let write_sizes = &job.workload.bs[1];
        let read_min = Some(job.workload.bs[0].min()).filter(|_| job.workload.rw.reads());
        let interval = self
            .parse(opt::VERIFY_INTERVAL, |t| self.nonzero_size(t))?
            .map(|i| fio_interval(i, write_sizes.min(), write_sizes.max(), read_min));
        let block = interval.unwrap_or(write_sizes.min());
        let divides_every_write = match write_sizes {
            crate::job::spec::BlockSizes::Split(v) => {
                v.iter().all(|(b, _)| b.is_multiple_of(block))
            }
            other => other.min().is_multiple_of(block) && other.max().is_multiple_of(block),
        };
        if !divides_every_write || !job.workload.blockalign[1].is_multiple_of(block) {
            let at = self.given(opt::VERIFY_INTERVAL).unwrap_or(setting);
            return Err(at.invalid_with_hint(
                format!("each write must hold whole verified blocks of {block} bytes"),
                "make verify_interval divide bs and blockalign, e.g. verify_interval=4k",
            ));
        }
        let header_offset = self
            .parse(opt::VERIFY_OFFSET, |t| units::parse_size(t, self.kb_base))?
            .unwrap_or(0);
        if kind.has_header() && header_offset + VERIFY_HEADER_LEN > block {
            let at = self.given(opt::VERIFY_OFFSET).unwrap_or(setting);
            return Err(at.invalid_with_hint(
                format!(
                    "the {VERIFY_HEADER_LEN}-byte header does not fit at offset {header_offset} \
                     of a {block}-byte block"
                ),
                "use a smaller verify_offset or a larger verify_interval",
            ));
        }
        let only = self.bool(opt::VERIFY_ONLY)?;
        if only && job.exec.time_based {
            return Err(self.problem(
                "verify_only=1 replays a size-based job; time_based has no fixed set of blocks \
                 (drop time_based)",
            ));
        }
        let pattern_interval = self.parse(opt::VERIFY_PATTERN_INTERVAL, |t| {
            units::parse_size(t, self.kb_base)
        })?;
        let backlog = self.count(opt::VERIFY_BACKLOG)?.unwrap_or(0);
        let trim = self.trim_verify(job)?;
        Ok(Some(VerifySpec {
            kind,
            pattern,
            pattern_interval: pattern_interval.filter(|&i| i > 0),
            interval,
            header_offset,
            after_writes: self.bool(opt::DO_VERIFY)?,
            only,
            backlog,
            backlog_batch: self
                .count(opt::VERIFY_BACKLOG_BATCH)?
                .filter(|&n| n > 0)
                .unwrap_or(backlog),
            write_sequence: self.write_sequence(job)?,
            header_seed: self
                .given(opt::VERIFY_HEADER_SEED)
                .map(|setting| setting.bool())
                .transpose()?,
            fatal: self.bool(opt::VERIFY_FATAL)?,
            dump: self.bool(opt::VERIFY_DUMP)?,
            trim,
            state_save: self.bool(opt::VERIFY_STATE_SAVE)?,
            state_load: self.bool(opt::VERIFY_STATE_LOAD)?,
            state_files: StateFiles::default(),
        }))
    }
}

impl Layers<'_> {
    /// `trim_percentage` and `trim_backlog` both set (fio trims nothing without
    /// either), in a job whose `rw=` trims (fio 3.33 aborts any other).
    /// `verify_write_sequence`, off by default where fio turns it off: with
    /// `norandommap` and several writes queued at once (two in-flight writes of
    /// one offset may land in either order).
    fn write_sequence(&self, job: &JobSpec) -> Result<bool, JobError> {
        let unordered =
            !job.workload.randommap && job.engine.kind.def().is_async && job.queue.iodepth > 1;
        match self.given(opt::VERIFY_WRITE_SEQUENCE) {
            Some(setting) => setting.bool(),
            None => Ok(!unordered),
        }
    }

    fn trim_verify(&self, job: &JobSpec) -> Result<Option<TrimVerify>, JobError> {
        let percentage = self.percent(opt::TRIM_PERCENTAGE)?;
        let backlog = self.count(opt::TRIM_BACKLOG)?.unwrap_or(0);
        if percentage == 0 || backlog == 0 {
            return Ok(None);
        }
        if !job.workload.rw.trims() {
            let at = self
                .given(opt::TRIM_PERCENTAGE)
                .expect("a percentage was given");
            return Err(at.invalid_with_hint(
                "trims verified blocks only in a job whose rw= trims",
                "use rw=trimwrite",
            ));
        }
        Ok(Some(TrimVerify {
            percentage,
            zero: self.bool(opt::TRIM_VERIFY_ZERO)?,
            backlog,
            batch: self
                .count(opt::TRIM_BACKLOG_BATCH)?
                .filter(|&n| n > 0)
                .unwrap_or(backlog),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::resolve::tests::{error, job};

    #[test]
    fn verify_options_resolve() {
        assert_eq!(job(&["--rw=write"]).verify, None);
        assert_eq!(job(&["--rw=write", "--verify=null"]).verify, None);
        let spec = job(&[
            "--rw=randwrite",
            "--bs=8k",
            "--verify=sha256",
            "--verify_interval=4k",
            "--verify_offset=512",
            "--verify_backlog=16",
            "--verify_fatal=1",
            "--verify_dump=1",
        ])
        .verify
        .unwrap();
        assert_eq!(spec.kind, VerifyKind::Sha256);
        assert_eq!(
            (
                spec.interval,
                spec.header_offset,
                spec.backlog,
                spec.backlog_batch
            ),
            (Some(4096), 512, 16, 16),
            "expected the interval, offset, backlog and its batch (the backlog by default)"
        );
        assert!(
            spec.write_sequence && spec.header_seed.is_none(),
            "expected fio's defaults"
        );
        let set = job(&[
            "--rw=write",
            "--verify=md5",
            "--verify_backlog=16",
            "--verify_backlog_batch=4",
            "--verify_write_sequence=0",
            "--verify_header_seed=1",
            "--experimental_verify=1",
        ])
        .verify
        .unwrap();
        let trims = |extra: &[&str]| {
            let args = [&["--rw=trimwrite", "--verify=md5"][..], extra].concat();
            job(&args).verify.unwrap().trim
        };
        assert_eq!(
            trims(&["--trim_percentage=10"]),
            None,
            "expected no trims without trim_backlog, as in fio"
        );
        assert_eq!(
            trims(&["--trim_percentage=10", "--trim_backlog=8"]),
            Some(TrimVerify {
                percentage: 10,
                zero: true,
                backlog: 8,
                batch: 8
            }),
            "expected trim_backlog_batch to default to trim_backlog"
        );
        assert_eq!(
            (set.backlog_batch, set.write_sequence, set.header_seed),
            (4, false, Some(true)),
            "expected the batch, no sequence check and the seed check as set"
        );
        assert!(spec.fatal && spec.dump && spec.after_writes && !spec.only);
        let pattern = job(&["--rw=write", "--verify=pattern", "--verify_pattern=0xff"]);
        let pattern = pattern.verify.unwrap();
        assert_eq!(
            (pattern.kind, pattern.pattern.map(|p| p.bytes)),
            (VerifyKind::Pattern, Some(vec![0xff])),
            "expected the strict pattern ff"
        );
        let alone = job(&["--rw=write", "--verify_pattern=%o"]).verify.unwrap();
        assert_eq!(
            (alone.kind, alone.pattern.map(|p| p.offsets_at)),
            (VerifyKind::PatternHdr, Some(vec![0])),
            "expected verify_pattern alone to turn on pattern_hdr, as in fio"
        );
        let clamped = job(&[
            "--rw=write",
            "--bs=4k",
            "--verify=md5",
            "--verify_interval=64k",
        ]);
        assert_eq!(
            clamped.verify.unwrap().interval,
            Some(4096),
            "expected verify_interval larger than bs clamped to bs, as in fio"
        );
        let strict = job(&[
            "--rw=write",
            "--bs=512",
            "--verify=pattern",
            "--verify_pattern=0x01",
            "--verify_offset=500",
            "--verify_pattern_interval=128",
        ]);
        assert_eq!(
            strict.verify.unwrap().pattern_interval,
            Some(128),
            "expected a strict pattern to need no room for a header"
        );
    }

    #[test]
    fn verify_interval_is_clamped_as_in_fio() {
        for (bs, given, expected) in [
            ("bs=4k", "2222", 4096),
            ("bs=4k", "3791", 4096),
            ("bs=4k", "1k", 1024),
            ("bs=4k,2k", "4k", 2048),
            ("bsrange=4k-16k", "8k", 4096),
            ("bssplit=4k/50:6k/50", "4k", 2048),
        ] {
            let args = [
                "--rw=randrw",
                "--verify=md5",
                &format!("--{bs}")[..],
                &format!("--verify_interval={given}")[..],
            ];
            let interval = job(&args).verify.unwrap().interval;
            assert_eq!(
                interval,
                Some(expected),
                "{bs} verify_interval={given}: expected fio's interval {expected}, got {interval:?}"
            );
        }
        let offset_past = error(&[
            "--name=t",
            "--filename=/tmp/f",
            "--rw=write",
            "--bs=4k",
            "--verify=md5",
            "--verify_interval=2222",
            "--verify_offset=4040",
        ]);
        assert!(
            offset_past.contains("header does not fit at offset 4040 of a 4096-byte block"),
            "expected the header check against the clamped interval, got: {offset_past}"
        );
    }

    #[test]
    fn write_sequence_is_off_by_default_where_fio_turns_it_off() {
        for (args, expected) in [
            (
                &["--ioengine=libaio", "--iodepth=32", "--norandommap"][..],
                false,
            ),
            (&["--ioengine=libaio", "--iodepth=32"], true),
            (&["--ioengine=libaio", "--iodepth=1", "--norandommap"], true),
            (&["--ioengine=psync", "--iodepth=32", "--norandommap"], true),
            (
                &[
                    "--ioengine=libaio",
                    "--iodepth=32",
                    "--norandommap",
                    "--verify_write_sequence=1",
                ],
                true,
            ),
        ] {
            let all = [&["--rw=randwrite", "--verify=md5"][..], args].concat();
            let seen = job(&all).verify.unwrap().write_sequence;
            assert_eq!(
                seen, expected,
                "{args:?}: expected verify_write_sequence={expected} as in fio, got {seen}"
            );
        }
    }

    #[test]
    fn verify_misuse_names_the_option() {
        for (args, fragment) in [
            (
                &["--rw=write", "--verify=pattern"][..],
                "needs verify_pattern",
            ),
            (&["--rw=write", "--verify=crc32"], "not implemented"),
            (
                &["--rw=write", "--verify=md5", "--ioengine=null"],
                "ioengine=null",
            ),
            (
                &[
                    "--rw=write",
                    "--bs=4k",
                    "--verify=md5",
                    "--blockalign=2k",
                    "--verify_interval=4k",
                ],
                "verify_interval",
            ),
            (
                &[
                    "--rw=write",
                    "--bs=4k",
                    "--verify=md5",
                    "--verify_offset=4090",
                ],
                "header does not fit",
            ),
            (
                &[
                    "--rw=write",
                    "--verify=md5",
                    "--verify_only=1",
                    "--runtime=1",
                    "--time_based",
                ],
                "time_based",
            ),
            (
                &[
                    "--rw=write",
                    "--verify=md5",
                    "--trim_percentage=10",
                    "--trim_backlog=8",
                ],
                "trim_percentage=10: trims verified blocks only in a job whose rw= trims",
            ),
        ] {
            let e = error(&[&["--name=t", "--filename=/tmp/f"], args].concat());
            assert!(e.contains(fragment), "{args:?}: {e}");
        }
    }
}
