//! fio as the oracle for generated file names: `filename_format` with
//! subdirectories (made inside `directory=`, mode 0700, kept by `unlink=1`, which
//! removes only the files), a `..` that leads out refused, and generated names
//! without `size=` (an existing file used whole, a missing one refused). Each
//! case runs iolens in one scratch directory and, where fio is installed, fio in
//! another, and compares the trees they leave and the bytes they move.

use crate::fio_match::{entries, fio, iolens_json, Counts};
use crate::support::{assert_failed_saying, command, isolated, scratch, stderr};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Every entry under `dir`, relative: "d 700 a/b" for a directory, "f 16384 a/b/c" for
/// a file (its size), sorted.
fn tree(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(at) = todo.pop() {
        for entry in std::fs::read_dir(&at).expect("list a scratch directory") {
            let path = entry.expect("a directory entry").path();
            let meta = std::fs::symlink_metadata(&path).expect("stat an entry");
            let name = path.strip_prefix(dir).unwrap().display().to_string();
            if meta.is_dir() {
                let mode = meta.permissions().mode() & 0o777;
                found.push(format!("d {mode:o} {name}"));
                todo.push(path);
            } else {
                found.push(format!("f {} {name}", meta.len()));
            }
        }
    }
    found.sort();
    found
}

/// What a run left: the tree of its directory and its entries' counts.
type Outcome = (Vec<String>, Vec<Counts>);

/// The job `args` (plus directory= and JSON output) under iolens in a fresh scratch
/// directory: its tree afterwards and its entries' counts; fio's likewise where installed.
fn both(args: &[&str]) -> (Outcome, Option<Outcome>) {
    let run = |runner: &dyn Fn(&Path, &[&str]) -> Option<serde_json::Value>| {
        let dir = scratch();
        let directory = format!("--directory={}", dir.path().display());
        let mut all = args.to_vec();
        all.extend([directory.as_str(), "--output-format=json"]);
        let doc = runner(dir.path(), &all)?;
        let counts = entries(&doc).into_iter().map(|e| e.2).collect();
        Some((tree(dir.path()), counts))
    };
    let iolens = run(&|dir, all| {
        let (doc, code) = iolens_json(dir, all);
        assert_eq!(
            code, 0,
            "expected iolens {all:?} to succeed, saw {code}: {doc}"
        );
        Some(doc)
    })
    .expect("iolens ran");
    (iolens, run(&|dir, all| fio(dir, all)))
}

const SUBDIRS: &[&str] = &[
    "--name=j",
    "--filename_format=$jobname/$CLIENTUID.x/$jobnum/$filenum",
    "--rw=write",
    "--bs=4k",
    "--size=32k",
    "--nrfiles=2",
    "--numjobs=2",
];

#[test]
fn filename_format_makes_subdirectories_inside_the_directory_as_fio_does() {
    let wanted: Vec<String> = [
        "d 700 j",
        "d 700 j/.x",
        "d 700 j/.x/0",
        "d 700 j/.x/1",
        "f 16384 j/.x/0/0",
        "f 16384 j/.x/0/1",
        "f 16384 j/.x/1/0",
        "f 16384 j/.x/1/1",
    ]
    .map(String::from)
    .to_vec();
    let ((made, counts), fio_side) = both(SUBDIRS);
    assert_eq!(
        made, wanted,
        "expected iolens to make the subdirectories and files on the right, saw the left"
    );
    assert_eq!(
        counts,
        vec![[[0, 0], [32768, 8]]; 2],
        "expected each clone to write its 32 KiB in 8 writes, saw the left"
    );
    if let Some((fio_made, fio_counts)) = fio_side {
        assert_eq!(
            fio_made, made,
            "expected fio's tree (left) to be iolens' (right)"
        );
        assert_eq!(
            fio_counts, counts,
            "expected fio's counts (left) to be iolens' (right)"
        );
    }
}

#[test]
fn unlink_removes_the_files_and_keeps_the_directories_as_fio_does() {
    let args = [SUBDIRS, &["--unlink=1"]].concat();
    let ((left, _), fio_side) = both(&args);
    let wanted: Vec<String> = ["d 700 j", "d 700 j/.x", "d 700 j/.x/0", "d 700 j/.x/1"]
        .map(String::from)
        .to_vec();
    assert_eq!(
        left, wanted,
        "expected unlink=1 to leave the directories (right) and no file, saw the left"
    );
    if let Some((fio_left, _)) = fio_side {
        assert_eq!(
            fio_left, left,
            "expected fio to leave (left) what iolens left (right)"
        );
    }
}

#[test]
fn a_name_that_climbs_back_inside_is_used_and_one_that_leads_out_is_refused() {
    let ((made, _), _) = both(&[
        "--name=j",
        "--filename_format=$jobname/../shared.$filenum",
        "--rw=write",
        "--bs=4k",
        "--size=8k",
    ]);
    let wanted: Vec<String> = ["d 700 j", "f 8192 shared.0"].map(String::from).to_vec();
    assert_eq!(
        made, wanted,
        "expected $jobname/../shared.0 to land in the directory (right), saw the left"
    );

    let outer = scratch();
    let inner = outer.path().join("inner");
    std::fs::create_dir(&inner).unwrap();
    let out = command()
        .args([
            "run",
            "--no-history",
            "--name=j",
            &format!("--directory={}", inner.display()),
            "--filename_format=$jobname/../../escape.$filenum",
            "--rw=write",
            "--bs=4k",
            "--size=8k",
        ])
        .output()
        .expect("run iolens");
    assert_failed_saying(&out, 2, "leads out of the directory");
    assert_eq!(
        tree(outer.path()),
        ["d 755 inner"],
        "expected nothing made beside or in the directory"
    );
}

#[test]
fn generated_names_without_size_use_the_existing_files_whole_as_fio_does() {
    let args = ["--name=k", "--rw=read", "--bs=64k", "--nrfiles=2"];
    let run_in = |dir: &Path, runner: &dyn Fn(&Path, &[&str]) -> Option<serde_json::Value>| {
        std::fs::write(dir.join("k.0.0"), vec![1u8; 1 << 20]).unwrap();
        std::fs::write(dir.join("k.0.1"), vec![2u8; 2 << 20]).unwrap();
        let directory = format!("--directory={}", dir.display());
        let mut all = args.to_vec();
        all.extend([directory.as_str(), "--output-format=json"]);
        runner(dir, &all).map(|doc| entries(&doc).into_iter().map(|e| e.2).collect::<Vec<_>>())
    };
    let dir = scratch();
    let seen = run_in(dir.path(), &|d, all| {
        let (doc, code) = iolens_json(d, all);
        assert_eq!(
            code, 0,
            "expected iolens to read the existing files, saw {code}: {doc}"
        );
        Some(doc)
    });
    let wanted: Vec<Counts> = vec![[[3 << 20, 48], [0, 0]]];
    assert_eq!(
        seen,
        Some(wanted.clone()),
        "expected 3 MiB read (1 MiB + 2 MiB files) in 48 reads, saw the left"
    );
    assert_eq!(
        tree(dir.path()),
        ["f 1048576 k.0.0", "f 2097152 k.0.1"],
        "expected the files' lengths kept"
    );
    let fio_dir = scratch();
    if let Some(fio_seen) = run_in(fio_dir.path(), &|d, all| fio(d, all)) {
        assert_eq!(
            fio_seen, wanted,
            "expected fio to read what iolens read (right)"
        );
    }
}

#[test]
fn generated_names_without_size_and_no_file_are_refused_as_fio_does() {
    let dir = scratch();
    let directory = format!("--directory={}", dir.path().display());
    let args = ["--name=k", "--rw=read", "--bs=4k", directory.as_str()];
    let out = command()
        .args([&["run", "--no-history"][..], &args].concat())
        .output()
        .expect("run iolens");
    assert_eq!(
        out.status.code(),
        Some(2),
        "expected a missing generated file without size= refused, saw: {}",
        stderr(&out)
    );
    let message = stderr(&out);
    assert!(
        message.contains("k.0.0 does not exist") && message.contains("set size="),
        "expected the refusal to name k.0.0 and the fix size=, saw: {message}"
    );
    if let Ok(fio_out) = isolated("fio").args(args).current_dir(dir.path()).output() {
        assert!(
            stderr(&fio_out).contains("you need to specify size="),
            "expected fio to refuse the job too, saw: {}",
            stderr(&fio_out)
        );
    }
    assert!(
        tree(dir.path()).is_empty(),
        "expected nothing created, saw {:?}",
        tree(dir.path())
    );
}

/// A write job of two passes over [32 KiB, 96 KiB) of a 96 KiB file, in a fresh
/// scratch directory: what it wrote, and the file's length and allocated bytes after.
fn two_passes(
    runner: &dyn Fn(&Path, &[&str]) -> Option<serde_json::Value>,
    unlink_each_loop: &str,
) -> Option<(Vec<Counts>, u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let dir = scratch();
    let directory = format!("--directory={}", dir.path().display());
    let each = format!("--unlink_each_loop={unlink_each_loop}");
    let args = [
        "--name=u",
        "--rw=write",
        "--bs=4k",
        "--size=64k",
        "--offset=32k",
        "--loops=2",
        each.as_str(),
        directory.as_str(),
        "--output-format=json",
    ];
    let doc = runner(dir.path(), &args)?;
    let counts = entries(&doc).into_iter().map(|e| e.2).collect();
    let meta = std::fs::metadata(dir.path().join("u.0.0")).expect("the job's file is left");
    Some((counts, meta.len(), meta.blocks() * 512))
}

#[test]
fn unlink_each_loop_gives_each_pass_a_fresh_file_as_fio_does() {
    let iolens = |dir: &Path, args: &[&str]| {
        let (doc, code) = iolens_json(dir, args);
        assert_eq!(
            code, 0,
            "expected iolens {args:?} to succeed, saw {code}: {doc}"
        );
        Some(doc)
    };
    let wrote = vec![[[0, 0], [128 << 10, 32]]];
    let (counts, len, allocated) = two_passes(&iolens, "1").expect("iolens ran");
    assert_eq!(
        counts, wrote,
        "expected two passes of 64 KiB (right), saw the left"
    );
    assert_eq!(
        len,
        96 << 10,
        "expected the file 96 KiB long after the last pass"
    );
    // the last pass wrote only [32 KiB, 96 KiB) of the fresh file: the first 32 KiB are a hole
    assert!(
        allocated < len,
        "expected the emptied file's first 32 KiB left a hole (allocated < {len}), saw {allocated} allocated"
    );
    let (_, kept_len, kept_allocated) = two_passes(&iolens, "0").expect("iolens ran");
    assert!(
        kept_allocated >= kept_len,
        "expected without unlink_each_loop the laid-out file fully allocated ({kept_len}), saw {kept_allocated}"
    );
    if let Some((fio_counts, fio_len, fio_allocated)) = two_passes(&|d, a| fio(d, a), "1") {
        assert_eq!(
            (fio_counts, fio_len, fio_allocated),
            (counts, len, allocated),
            "expected fio's counts, length and allocation (left) to be iolens' (right)"
        );
    }
}

#[test]
fn write_barrier_and_create_serialize_change_nothing_as_in_fio() {
    let args = [
        "--name=b",
        "--rw=write",
        "--bs=4k",
        "--size=32k",
        "--nrfiles=2",
        "--write_barrier=2",
        "--create_serialize=0",
    ];
    let wanted = vec![[[0, 0], [32 << 10, 8]]];
    let ((made, counts), fio_side) = both(&args);
    assert_eq!(
        counts, wanted,
        "expected 8 plain 4 KiB writes (right), saw the left"
    );
    assert_eq!(
        made,
        ["f 16384 b.0.0", "f 16384 b.0.1"],
        "expected the two files laid out"
    );
    if let Some(fio_outcome) = fio_side {
        assert_eq!(
            fio_outcome,
            (made, counts),
            "expected fio's files and counts (left) to be iolens' (right)"
        );
    }
}

/// The tree a job leaves under a root holding `cwd/` (where it runs, with `job_file`
/// in it as `j.fio`), `d1/` and `d2/`; `{root}` in `args` is the root. The job file is
/// left out of the tree. None when the runner is fio and fio is not installed.
fn placed(
    job_file: &str,
    args: &[&str],
    runner: &dyn Fn(&Path, &[&str]) -> Option<serde_json::Value>,
) -> Option<Vec<String>> {
    let root = scratch();
    for dir in ["cwd", "d1", "d2"] {
        std::fs::create_dir(root.path().join(dir)).unwrap();
    }
    let at_root = |text: &str| text.replace("{root}", &root.path().display().to_string());
    let cwd = root.path().join("cwd");
    std::fs::write(cwd.join("j.fio"), at_root(job_file)).unwrap();
    std::fs::write(root.path().join("d1/old.dat"), vec![7u8; 32768]).unwrap();
    let args: Vec<String> = args
        .iter()
        .map(|a| at_root(a))
        .chain(["--output-format=json".to_string()])
        .collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    runner(&cwd, &args)?;
    let left = tree(root.path()).into_iter().filter(|e| {
        let ours = e.ends_with(" cwd") || e.ends_with(" d1") || e.ends_with(" d2");
        !ours && !e.ends_with("j.fio") && e != "f 32768 d1/old.dat"
    });
    Some(left.collect())
}

/// fio's placement (add_file, set_name_idx): directory= goes before every filename=
/// name with a `/`, an absolute one too; several directories are dealt to the clones of
/// generated names in turn, filename= names take the first; a global filename= is
/// placed only by a directory= known when it is read (the command line or [global]);
/// a percent sign may be doubled as configparser writes it; missing directories on
/// the way to a name are made.
#[test]
fn directory_places_filename_as_fio_does() {
    const BASE: &str = "[global]\nrw=write\nbs=4k\nsize=16k\n";
    let cases: &[(&str, &str, &[&str], &[&str])] = &[
        (
            "command-line directory, section filename",
            "[a]\nfilename=f.dat\n",
            &["--directory={root}/d1", "j.fio"],
            &["f 16384 d1/f.dat"],
        ),
        (
            "section directory after the section's filename",
            "[a]\nfilename=f.dat\ndirectory={root}/d2\n",
            &["j.fio"],
            &["f 16384 d2/f.dat"],
        ),
        (
            "global filename, section directory",
            "[global]\nfilename=g.dat\n[a]\ndirectory={root}/d2\n",
            &["j.fio"],
            &["f 16384 cwd/g.dat"],
        ),
        (
            "absolute filename behind the directory",
            "[a]\nfilename=/abs.dat\n",
            &["--directory={root}/d1", "j.fio"],
            &["f 16384 d1/abs.dat"],
        ),
        (
            "directories dealt to clones, filename= takes the first",
            "[x]\nnumjobs=3\n[y]\nfilename=g\nnumjobs=2\n",
            &["--directory={root}/d1:{root}/d2", "j.fio"],
            &[
                "f 16384 d1/g",
                "f 16384 d1/x.0.0",
                "f 16384 d1/x.2.0",
                "f 16384 d2/x.1.0",
            ],
        ),
        (
            "missing directories on the way are made",
            "[a]\nfilename=sub/dir/h\n",
            &["j.fio"],
            &[
                "d 700 cwd/sub",
                "d 700 cwd/sub/dir",
                "f 16384 cwd/sub/dir/h",
            ],
        ),
        (
            "a doubled percent sign of an existing file in the directory",
            "[a]\nfilename=old.dat\nrw=read\nsize=100%%\n",
            &["--directory={root}/d1", "j.fio"],
            &[],
        ),
    ];
    for (case, job, args, made) in cases {
        let job_file = format!("{BASE}{job}");
        let wanted: Vec<String> = made.iter().map(|e| e.to_string()).collect();
        let iolens_ran = |dir: &Path, all: &[&str]| {
            let (doc, code) = iolens_json(dir, all);
            assert_eq!(code, 0, "{case}: expected iolens {all:?} to succeed: {doc}");
            Some(doc)
        };
        let made = placed(&job_file, args, &iolens_ran).expect("iolens ran");
        assert_eq!(
            made, wanted,
            "{case}: expected iolens to leave the right tree, saw the left"
        );
        if let Some(fio_made) = placed(&job_file, args, &|dir, all| fio(dir, all)) {
            assert_eq!(
                fio_made, made,
                "{case}: expected fio's tree (left) to be iolens' (right)"
            );
        }
    }
}
