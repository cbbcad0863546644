//! Refusals that name the right thing: a job for an engine iolens lacks is refused for
//! its `ioengine=`, an engine's option alone names its engine, a plugin's option names
//! the external engine; and an ignored option warns once per run.

use crate::support::{iolens, scratch, stderr};
use std::path::Path;

/// `iolens run` on a job file written in `dir`: its exit code and stderr.
fn run_file(dir: &Path, name: &str, text: &str) -> (Option<i32>, String) {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    let out = crate::support::command()
        .current_dir(dir)
        .args(["run", "--no-history", name])
        .output()
        .expect("run iolens");
    (out.status.code(), stderr(&out))
}

#[test]
fn an_engine_iolens_lacks_is_named_before_its_options() {
    let dir = scratch();
    let cases = [
        (
            "rbd.fio",
            "[global]\npool=rbd\nioengine=rbd\nrbdname=img\n[a]\nrw=randread\n",
            "iolens: rbd.fio:3: ioengine=rbd: not supported by iolens: this ioengine is not \
             implemented (instead: ioengine=io_uring, libaio or psync)\n",
        ),
        (
            "pool.fio",
            "[a]\nsize=1m\npool=rbd\n",
            "iolens: pool.fio:3: pool=rbd: not supported by iolens: an option of ioengine=rbd, \
             rados or dfs, which iolens does not have (instead: ioengine=io_uring, libaio or psync)\n",
        ),
        (
            "spdk.fio",
            "[global]\nspdk_json_conf=bdev.json\nioengine=/usr/local/lib/spdk_bdev\n[a]\nfilename=Nvme0n1\n",
            "iolens: spdk.fio:3: ioengine=/usr/local/lib/spdk_bdev: not supported by iolens: an \
             external engine (a fio plugin, loaded with ioengine=PATH), which iolens cannot load \
             (instead: ioengine=io_uring, libaio or psync)\n",
        ),
        (
            "conf.fio",
            "[a]\nsize=1m\nspdk_json_conf=bdev.json\n",
            "iolens: conf.fio:3: spdk_json_conf=bdev.json: not supported by iolens: needs the \
             external engine spdk_bdev (a fio plugin, loaded with ioengine=PATH), which iolens \
             cannot load (instead: ioengine=io_uring, libaio or psync)\n",
        ),
    ];
    for (name, text, expected) in cases {
        assert_eq!(
            run_file(dir.path(), name, text),
            (Some(2), expected.to_string()),
            "expected {name} to be refused (exit 2) in one line naming file, line, option and fix"
        );
    }
    let out = iolens(&[
        "run",
        "--no-history",
        "--name=a",
        "--spdk_json_conf=bdev.json",
        "--ioengine=spdk_bdev",
    ]);
    assert!(
        out.status.code() == Some(2)
            && stderr(&out).starts_with(
                "iolens: command line argument 3: ioengine=spdk_bdev: not supported by iolens: \
                 an external engine"
            ),
        "expected the command line's engine to be named first, got {:?}: {}",
        out.status.code(),
        stderr(&out)
    );
}

#[test]
fn an_ignored_option_in_global_warns_once_for_all_sections() {
    let dir = scratch();
    let (code, said) = run_file(
        dir.path(),
        "ignored.fio",
        "[global]\nioengine=null\nsize=64k\ndisk_util=0\n[a]\n[b]\n[c]\ndisk_util=0\n",
    );
    let lines: Vec<&str> = said.lines().filter(|l| l.contains("disk_util")).collect();
    assert_eq!(
        (code, lines),
        (
            Some(0),
            vec!["iolens: warning: ignored.fio:4: disk_util=0: ignored: device statistics are always collected"]
        ),
        "expected the run to succeed with one warning about disk_util, not one per section"
    );
}
