//! Planning the regions: which (path, start, len) each clone of a job does I/O
//! on, from filename= or the generated names, offset= and size=, checked
//! against fio's rules before anything is created or opened.

use super::{contain, PlannedRegion, TargetError};
use crate::job::spec::{BlockSizes, JobSpec, SizeOrPercent};
use iolens_sys::fd;
use std::fs::File;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

/// The (path, start, len) regions of each worker of a job, before opening.
pub(super) fn plan_job(
    job_index: usize,
    job: &JobSpec,
) -> Result<Vec<Vec<PlannedRegion>>, TargetError> {
    (0..job.exec.numjobs)
        .map(|w| checked_regions(job_index, job, w, clone_regions(job_index, job, w)?))
        .collect()
}

/// The regions of clone `w` of a job: on its filename= files, else on its generated names.
fn clone_regions(
    job_index: usize,
    job: &JobSpec,
    w: u32,
) -> Result<Vec<PlannedRegion>, TargetError> {
    let t = &job.target;
    let mut regions = Vec::new();
    if !t.filenames.is_empty() {
        for path in &t.filenames {
            let files = t.filenames.len() as u64;
            regions.push(named_region(job_index, job, w, path, files)?);
        }
        return Ok(regions);
    }
    // Generated names live in `directory` (default: the current directory).
    let nrfiles = t.nrfiles.max(1);
    let paths = (0..nrfiles).map(|f| generated_path(t, &job.name, w, f));
    // fio: without size= a generated name, like a given one, is an existing file used whole
    if t.size.is_none() && t.filesize.is_none() {
        for path in paths {
            regions.push(named_region(job_index, job, w, &path?, nrfiles.into())?);
        }
        return Ok(regions);
    }
    let total = match t.size {
        Some(SizeOrPercent::Bytes(b)) => b,
        _ => t.filesize.map(|f| f * u64::from(nrfiles)).ok_or_else(|| {
            TargetError::Config(format!(
                "job '{}': size= is a percentage, but without filename= there is no file it is a percentage of (give size= in bytes, e.g. size=1g, or filename=)",
                job.name
            ))
        })?,
    };
    let filesize = t.filesize.unwrap_or(total / u64::from(nrfiles));
    for path in paths {
        let offset = start_of(t, w, filesize);
        // fio: with filesize= the region is what lies past the offset
        // (a start past the file's end is refused); without it the file
        // grows to hold size/nrfiles past the offset
        let len = match t.filesize {
            Some(fs) if offset > fs => {
                return Err(TargetError::Config(format!(
                    "job '{}' (job {}, clone {w}): its start, offset= + {w} x offset_increment= = {offset} bytes, lies past filesize={fs} (fio refuses it too); lower offset= or offset_increment=, or raise filesize=",
                    job.name,
                    job_index + 1
                )))
            }
            Some(fs) => fs - offset,
            None => filesize,
        };
        regions.push((path?, offset, len));
    }
    Ok(regions)
}

/// fio: a clone's regions (at most size=) must hold the smallest block.
fn checked_regions(
    job_index: usize,
    job: &JobSpec,
    w: u32,
    regions: Vec<PlannedRegion>,
) -> Result<Vec<PlannedRegion>, TargetError> {
    let t = &job.target;
    let held: u64 = regions.iter().map(|r| r.2).sum();
    let held = match t.size {
        Some(SizeOrPercent::Bytes(size)) => held.min(size),
        _ => held,
    };
    if held < smallest_block(job) {
        return Err(TargetError::Config(format!(
            "job '{}' (job {}, clone {w}): the region to do I/O on holds {held} bytes, less than the smallest block {} (check size=, offset=, offset_increment= and filesize=)",
            job.name,
            job_index + 1,
            smallest_block(job)
        )));
    }
    Ok(regions)
}

/// The `directory=` clone `w`'s generated names live in (None for `filename=` names,
/// which are used as given, and for names in the current directory).
pub(super) fn generated_inside(job: &JobSpec, w: u32) -> Option<PathBuf> {
    let t = &job.target;
    t.filenames
        .is_empty()
        .then(|| t.directory_of_clone(w))
        .flatten()
}

/// Where clone `w`'s file `f` of a job without filename= lives: its generated name in
/// `directory` (which it must not lead out of), else in the current directory.
fn generated_path(
    t: &crate::job::spec::TargetSpec,
    job_name: &str,
    w: u32,
    f: u32,
) -> Result<PathBuf, TargetError> {
    let name = generated_name(&t.filename_format, job_name, w, f, t.rank);
    match t.directory_of_clone(w) {
        Some(d) => {
            let path = d.join(name);
            contain::check_inside(&d, &path)?;
            Ok(path)
        }
        None => Ok(PathBuf::from(name)),
    }
}

/// The region of clone `w` on `path`, an existing file or device (or one `size=` lays
/// out), one of the job's `files` named or generated files.
fn named_region(
    job_index: usize,
    job: &JobSpec,
    w: u32,
    path: &Path,
    files: u64,
) -> Result<PlannedRegion, TargetError> {
    let t = &job.target;
    let existing = existing_size(path)?;
    let base_size = existing.unwrap_or(0);
    let offset = start_of(t, w, base_size);
    let device = is_block_device(path);
    let whole = t.size.is_none() && t.filesize.is_none();
    // fio: without size= (and on a device always) the region ends at the end
    if let Some(end) = existing.filter(|&end| end > 0 && offset >= end) {
        if whole || device {
            return Err(TargetError::Config(format!(
                "job '{}' (job {}, clone {w}): its start, offset= + {w} x offset_increment= = {offset} bytes, is not before the end of {} ({end} bytes), which leaves nothing to do I/O on (fio refuses it too); lower offset= or offset_increment= (or numjobs=)",
                job.name,
                job_index + 1,
                path.display()
            )));
        }
    }
    let len = match (t.size, t.filesize, existing) {
        // fio: a percentage of the file past the offset, whole blocks
        (Some(SizeOrPercent::Percent(p)), _, _) => {
            let len = SizeOrPercent::Percent(p)
                .resolve(base_size)
                .min(base_size.saturating_sub(offset));
            len - len % smallest_block(job)
        }
        (Some(s), _, _) => s.resolve(base_size) / files,
        (None, Some(fs), _) => fs,
        // fio: no size= is the whole file or device past the offset
        (None, None, Some(end)) if end > 0 => end - offset,
        (None, None, found) => {
            let state = if found.is_some() {
                "is empty"
            } else {
                "does not exist"
            };
            return Err(TargetError::Config(format!(
                "job '{}': {} {state}, and without size= a job uses the whole existing file (fio refuses it too: it needs size=); set size= (e.g. size=1g) to have it laid out",
                job.name,
                path.display()
            )));
        }
    };
    if matches!(t.size, Some(SizeOrPercent::Percent(_))) && existing.is_none() {
        return Err(TargetError::Config(format!(
            "job '{}': size= is a percentage but {} does not exist yet (give size= in bytes, e.g. size=1g)",
            job.name,
            path.display()
        )));
    }
    // fio stops at a device's end; a job asking for more is refused
    if device && offset + len > base_size {
        return Err(TargetError::Config(format!(
            "job '{}' (job {}, clone {w}): its region, {len} bytes from offset= + {w} x offset_increment= = {offset}, ends past the end of {}: the device holds {base_size} bytes (lower size=, offset= or offset_increment=, or leave size= out to use the rest of the device)",
            job.name,
            job_index + 1,
            path.display()
        )));
    }
    Ok((path.to_path_buf(), offset, len))
}

/// fio: offset= (plus offset_increment per clone) applies to every file, named or
/// generated; a percentage is of the file's size.
fn start_of(t: &crate::job::spec::TargetSpec, w: u32, file_size: u64) -> u64 {
    t.offset.resolve(file_size) + u64::from(w) * t.offset_increment.resolve(file_size)
}

/// fio's `filename_format` expansion: its keywords in any case, `$clientuid` the
/// `rank` of a run on several ranks (fio's client in its client/server mode), else
/// empty; other `$words` are kept as written. A rank not placed by `$clientuid`
/// ends the name (`.rank3`), so ranks never share a generated file.
fn generated_name(
    format: &str,
    job_name: &str,
    worker: u32,
    file: u32,
    rank: Option<u32>,
) -> String {
    let format = match rank {
        Some(rank) if !format.to_ascii_lowercase().contains("$clientuid") => {
            format!("{format}.rank{rank}")
        }
        _ => format.to_string(),
    };
    let keywords = [
        ("$jobname", job_name.to_string()),
        ("$jobnum", worker.to_string()),
        ("$filenum", file.to_string()),
        (
            "$clientuid",
            rank.map(|r| r.to_string()).unwrap_or_default(),
        ),
    ];
    keywords.iter().fold(format, |name, (keyword, value)| {
        let mut out = String::with_capacity(name.len());
        let mut rest = name.as_str();
        while let Some(at) = rest.to_ascii_lowercase().find(keyword) {
            out.push_str(&rest[..at]);
            out.push_str(value);
            rest = &rest[at + keyword.len()..];
        }
        out.push_str(rest);
        out
    })
}

pub(super) fn is_block_device(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_block_device())
}

/// Current size of a path: file length or block device size; None if absent.
pub(super) fn existing_size(path: &Path) -> Result<Option<u64>, TargetError> {
    match std::fs::metadata(path) {
        Ok(m) if m.file_type().is_block_device() => {
            let f = File::open(path).map_err(|e| TargetError::io(path, "open", e))?;
            fd::blk_size_bytes(&f)
                .map(Some)
                .map_err(|e| TargetError::io(path, "read device size (BLKGETSIZE64)", e))
        }
        Ok(m) => Ok(Some(m.len())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(TargetError::io(path, "stat", e)),
    }
}

/// The smallest block size of the directions the job uses (fio's `td_min_bs`).
fn smallest_block(job: &JobSpec) -> u64 {
    job.workload
        .used_block_sizes()
        .map(BlockSizes::min)
        .min()
        .unwrap_or(1)
        .max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(args: &[&str]) -> JobSpec {
        crate::testutil::job_spec(args)
    }

    #[test]
    fn without_size_each_clone_uses_the_rest_of_the_existing_file() {
        let dir = crate::testutil::scratch_dir();
        let path = dir.path().join("whole");
        std::fs::write(&path, vec![1u8; 8 << 20]).unwrap();
        let filename = format!("--filename={}", path.display());
        let regions = |extra: &[&str]| {
            let mut args = vec!["--name=w", filename.as_str(), "--bs=64k"];
            args.extend_from_slice(extra);
            plan_job(0, &job(&args)).map(|plan| {
                plan.iter()
                    .map(|worker| (worker[0].1, worker[0].2))
                    .collect::<Vec<_>>()
            })
        };
        let mib = 1u64 << 20;
        for (extra, want) in [
            (&[][..], vec![(0, 8 * mib)]),
            (&["--size=0"][..], vec![(0, 8 * mib)]),
            (&["--offset=1m"][..], vec![(mib, 7 * mib)]),
            (
                &["--numjobs=2", "--offset_increment=4m"][..],
                vec![(0, 8 * mib), (4 * mib, 4 * mib)],
            ),
        ] {
            let seen = regions(extra).unwrap();
            assert_eq!(
                seen, want,
                "expected (start, len) per clone {want:?} with {extra:?}, saw {seen:?}"
            );
        }
        let past = regions(&["--numjobs=3", "--offset_increment=4m"])
            .unwrap_err()
            .to_string();
        assert!(
            past.contains("clone 2") && past.contains("is not before the end of"),
            "expected clone 2 (starting at 8 MiB, the file's end) refused, saw: {past}"
        );
        let missing = format!("--filename={}", dir.path().join("absent").display());
        let message = plan_job(0, &job(&["--name=m", &missing, "--size=0"]))
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("does not exist") && message.contains("set size="),
            "expected a missing file without size= refused with the fix, saw: {message}"
        );
        std::fs::write(dir.path().join("empty"), b"").unwrap();
        let empty = format!("--filename={}", dir.path().join("empty").display());
        let message = plan_job(0, &job(&["--name=e", &empty]))
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("is empty") && message.contains("set size="),
            "expected an empty file without size= refused with the fix, saw: {message}"
        );
    }

    #[test]
    fn generated_names_carry_the_rank_of_a_run_on_several_ranks() {
        assert_eq!(
            generated_name("$jobname.$jobnum.$filenum", "j", 2, 3, Some(5)),
            "j.2.3.rank5",
            "expected the rank after a name that does not place it"
        );
        assert_eq!(
            generated_name("$ClientUID/$jobname.$jobnum", "j", 0, 1, Some(5)),
            "5/j.0",
            "expected $clientuid to place the rank"
        );
    }

    #[test]
    fn filename_format_names_the_generated_files_and_lets_clones_share_them() {
        assert_eq!(
            generated_name("$jobname.$jobnum.$filenum", "j", 2, 3, None),
            "j.2.3"
        );
        // fio: keywords in any case; $clientuid is empty outside client/server mode
        assert_eq!(
            generated_name(
                "$JobName/$jobnum/data-$FILENUM.$clientuid$other",
                "j",
                0,
                1,
                None
            ),
            "j/0/data-1.$other"
        );
        let dir = crate::testutil::scratch_dir();
        let directory = format!("--directory={}", dir.path().display());
        let spec = job(&[
            "--name=f",
            &directory,
            "--size=64k",
            "--nrfiles=2",
            "--numjobs=2",
            "--filename_format=shared.$filenum",
        ]);
        let plan = plan_job(0, &spec).unwrap();
        let names = |w: usize| -> Vec<PathBuf> { plan[w].iter().map(|r| r.0.clone()).collect() };
        assert_eq!(
            names(0),
            [dir.path().join("shared.0"), dir.path().join("shared.1")]
        );
        assert_eq!(names(0), names(1));
    }

    #[test]
    fn generated_files_start_at_the_offset_and_a_start_past_filesize_is_refused() {
        let dir = crate::testutil::scratch_dir();
        let directory = format!("--directory={}", dir.path().display());
        let args = |increment: &str| {
            job(&[
                "--name=o",
                &directory,
                "--size=64k",
                "--nrfiles=2",
                "--filesize=32k",
                "--offset=16k",
                "--numjobs=2",
                increment,
            ])
        };
        let plan = plan_job(0, &args("--offset_increment=8k")).unwrap();
        let regions: Vec<(u64, u64)> = plan[1].iter().map(|r| (r.1, r.2)).collect();
        assert_eq!(
            regions,
            [(24 << 10, 8 << 10); 2],
            "clone 1: expected each file from 24k to its 32k end, saw {regions:?}"
        );
        let err = plan_job(0, &args("--offset_increment=20k")).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("offset_increment=") && text.contains("filesize=32768"),
            "expected a refusal naming offset_increment= and filesize=, saw: {text}"
        );
        // fio: clone 1 keeps 2 x 1k past 31k, less than one 4k block
        let err = plan_job(0, &args("--offset_increment=15k")).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("clone 1") && text.contains("holds 2048 bytes"),
            "expected a refusal of clone 1 holding 2048 bytes, saw: {text}"
        );
    }

    #[test]
    fn generated_files_start_at_the_offset_of_their_worker() {
        // fio (write_iolog): size=1m nrfiles=2 offset=256k offset_increment=128k
        // numjobs=2 writes each file of job N from 256k + N×128k
        let dir = crate::testutil::scratch_dir();
        let directory = format!("--directory={}", dir.path().display());
        let spec = job(&[
            "--name=g",
            &directory,
            "--size=1m",
            "--nrfiles=2",
            "--numjobs=2",
            "--offset=256k",
            "--offset_increment=128k",
        ]);
        let plan = plan_job(0, &spec).unwrap();
        let starts: Vec<Vec<(u64, u64)>> = plan
            .iter()
            .map(|worker| worker.iter().map(|r| (r.1 / 1024, r.2 / 1024)).collect())
            .collect();
        assert_eq!(
            starts,
            [[(256, 512), (256, 512)], [(384, 512), (384, 512)]],
            "expected (start KiB, len KiB) per worker and file, saw {starts:?}"
        );
        // the null engine's generated target starts at the offset as well
        let null = job(&["--name=n", "--ioengine=null", "--size=1m", "--offset=512k"]);
        let plan = plan_job(0, &null).unwrap();
        assert_eq!(
            (plan[0][0].1, plan[0][0].2),
            (512 * 1024, 1 << 20),
            "expected the null job's region at 512k, 1m long; saw {:?}",
            plan[0][0]
        );
    }
}
