//! Runs on several MPI ranks: the launch read from the launcher's variables, the
//! rank's variables in job files, and (built with `--features mpi`, with Open
//! MPI's mpirun) real 4-rank runs on this machine.

use crate::support::{command, scratch};

/// The environment Open MPI's mpirun gives rank `rank` of `ranks`.
fn as_open_mpi_rank(cmd: &mut std::process::Command, rank: u32, ranks: u32) {
    cmd.env("OMPI_COMM_WORLD_RANK", rank.to_string())
        .env("OMPI_COMM_WORLD_SIZE", ranks.to_string())
        .env("OMPI_COMM_WORLD_LOCAL_RANK", rank.to_string());
}

#[cfg(not(feature = "mpi"))]
#[test]
fn several_ranks_without_mpi_built_in_exit_2_saying_how_to_build() {
    let dir = scratch();
    let mut cmd = command();
    cmd.current_dir(dir.path()).args([
        "run",
        "--no-history",
        "--name=m",
        "--ioengine=null",
        "--size=1m",
    ]);
    as_open_mpi_rank(&mut cmd, 1, 4);
    let out = cmd.output().expect("run iolens");
    crate::support::assert_failed_saying(&out, 2, "started by Open MPI as rank 1 of 4");
    crate::support::assert_failed_saying(&out, 2, "cargo build --release --features mpi");
}

#[test]
fn job_files_read_the_rank_variables_and_mpi_off_runs_a_rank_on_its_own() {
    let dir = scratch();
    let job = dir.path().join("r.fio");
    std::fs::write(
        &job,
        "[r]\nfilename=f.${RANK}.of.${NRANKS}.${LOCAL_RANK}.${HOSTNAME}\nsize=(${RANK}*4k+4k)\nrw=write\nbs=4k\n",
    )
    .unwrap();
    let mut cmd = command();
    cmd.current_dir(dir.path())
        .args(["run", "--no-history", "--mpi=off", "--output-format=json"])
        .arg(&job);
    as_open_mpi_rank(&mut cmd, 2, 4);
    let out = cmd.output().expect("run iolens");
    let doc = crate::support::json(&out);
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let file = dir.path().join(format!("f.2.of.4.2.{}", host.trim()));
    let len = std::fs::metadata(&file).map(|m| m.len()).ok();
    assert_eq!(
        len,
        Some(12 * 1024),
        "expected {} of (2*4k+4k) bytes, saw {len:?}",
        file.display()
    );
    assert_eq!(
        doc["jobs"][0]["write"]["io_bytes"], 12288,
        "expected --mpi=off to report the rank's own job as a run on its own"
    );
}

/// mpirun, when this build has MPI and the machine has Open MPI; else why not.
#[cfg(feature = "mpi")]
fn mpirun(ranks: u32, dir: &std::path::Path, args: &[&str]) -> Option<std::process::Output> {
    let mut cmd = mpirun_command(ranks, dir, args)?;
    Some(cmd.output().expect("run mpirun"))
}

/// The mpirun command of `mpirun`, not yet started.
#[cfg(feature = "mpi")]
fn mpirun_command(
    ranks: u32,
    dir: &std::path::Path,
    args: &[&str],
) -> Option<std::process::Command> {
    if std::process::Command::new("mpirun")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: mpirun (Open MPI) is not installed");
        return None;
    }
    let mut cmd = crate::support::isolated("mpirun");
    cmd.env(
        "IOLENS_DB",
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("it-history.db"),
    )
    .current_dir(dir)
    // a rank that waits forever fails the test instead of stalling the suite
    .args(["--timeout", "300"])
    .args(["--allow-run-as-root", "--oversubscribe", "-np"])
    .arg(ranks.to_string())
    .arg(env!("CARGO_BIN_EXE_iolens"))
    .args(args);
    Some(cmd)
}

/// Job `m` on 4 ranks from `dir`: each writes `size` to its own file in `data`
/// with psync, reported in `formats`.
#[cfg(feature = "mpi")]
fn write_on_four_ranks(
    dir: &std::path::Path,
    data: &std::path::Path,
    size: &str,
    formats: &str,
) -> Option<std::process::Output> {
    std::fs::create_dir(data).unwrap();
    let directory = format!("--directory={}", data.display());
    let size = format!("--size={size}");
    let formats = format!("--output-format={formats}");
    mpirun(
        4,
        dir,
        &[
            "run",
            "--no-history",
            "--name=m",
            "--ioengine=psync",
            &directory,
            &size,
            "--rw=write",
            "--bs=4k",
            &formats,
        ],
    )
}

#[cfg(feature = "mpi")]
#[test]
fn four_ranks_print_one_client_document_whose_all_clients_entry_sums_them() {
    let dir = scratch();
    let data = dir.path().join("data");
    let Some(out) = write_on_four_ranks(dir.path(), &data, "64k", "json") else {
        return;
    };
    let doc = crate::support::json(&out);
    let entries = doc["client_stats"]
        .as_array()
        .expect("a client_stats array");
    let names: Vec<(&str, u64)> = entries
        .iter()
        .map(|e| (e["jobname"].as_str().unwrap(), e["rank"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        names,
        [("m", 0), ("m", 1), ("m", 2), ("m", 3), ("All clients", 3)],
        "expected one entry per rank, then fio's All clients entry"
    );
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    for e in entries {
        assert_eq!(
            e["hostname"],
            host.trim(),
            "expected each entry's host, saw {e}"
        );
        assert!(
            e.get("elapsed").is_none(),
            "fio's client leaves out elapsed"
        );
    }
    let bytes: Vec<u64> = entries
        .iter()
        .map(|e| e["write"]["io_bytes"].as_u64().unwrap())
        .collect();
    assert_eq!(
        bytes,
        [65536, 65536, 65536, 65536, 4 * 65536],
        "expected each rank's 64 KiB and their sum"
    );
    let mut files: Vec<String> = std::fs::read_dir(&data)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(
        files,
        ["m.0.0.rank0", "m.0.0.rank1", "m.0.0.rank2", "m.0.0.rank3"],
        "expected each rank's generated file to carry its rank"
    );
    assert!(
        !dir.path().join("iolens-ranks").exists(),
        "expected the rank files (and their default directory) gone after a run that ended well"
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        text.matches("\"fio version\"").count(),
        1,
        "expected one document, from the first rank only"
    );
}

#[cfg(feature = "mpi")]
#[test]
fn a_rank_slowed_by_its_rate_is_named_as_the_straggler() {
    let dir = scratch();
    // rank 3 of 4 is held to an eighth of the others' rate (integer division): 2 s against
    // 0.26 s, far past the noise of 4 ranks sharing the machine with other tests
    std::fs::write(
        dir.path().join("slow.fio"),
        "[s]\nioengine=psync\nsize=2m\nbs=4k\nrw=write\nrate_iops=(2000-${RANK}/3*1750)\n",
    )
    .unwrap();
    let Some(out) = mpirun(4, dir.path(), &["run", "--no-history", "slow.fio"]) else {
        return;
    };
    let text = crate::support::stdout(&out);
    assert!(
        out.status.success(),
        "expected the run to work, saw: {}",
        crate::support::stderr(&out)
    );
    let table: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("Ranks: 4 on 1 host(s)"))
        .take(7)
        .collect();
    assert!(
        table.len() == 7 && table[6].trim_start().starts_with("spread: MB/s"),
        "expected the ranks' table (a line per rank, then the spread), saw: {table:#?}"
    );
    let disk_blocks = text.matches("  disks of ").count();
    assert!(
        disk_blocks <= 1,
        "expected the one host's disks once (its first rank's), saw {disk_blocks} blocks:\n{text}"
    );
    let findings: Vec<&str> = text.lines().filter(|l| l.contains("(straggler)")).collect();
    assert_eq!(
        findings.len(),
        1,
        "expected one straggler finding, saw {findings:?}\n{text}"
    );
    assert!(
        findings[0].contains("rank 3 on "),
        "expected rank 3 named as the straggler, saw {findings:?}"
    );
}

#[cfg(feature = "mpi")]
#[test]
fn a_time_based_group_ends_on_every_rank_when_the_first_rank_ends() {
    let dir = scratch();
    // rank 0 runs for 1 s, the others would run for 3 s, 5 s and 7 s on their own (a
    // time expression counts in microseconds, as in fio)
    std::fs::write(
        dir.path().join("t.fio"),
        "[t]\nioengine=null\nsize=1m\nbs=4k\nrw=read\ntime_based\nruntime=((1+2*${RANK})*1000000)\n",
    )
    .unwrap();
    let Some(out) = mpirun(
        4,
        dir.path(),
        &["run", "--no-history", "--output-format=json", "t.fio"],
    ) else {
        return;
    };
    let doc = crate::support::json(&out);
    let runtimes: Vec<u64> = doc["client_stats"]
        .as_array()
        .expect("a client_stats array")
        .iter()
        .map(|e| e["job_runtime"].as_u64().unwrap())
        .collect();
    // generous: the stop reaches a rank within a few polls, far less than the 2 s
    // a rank would run on past rank 0's end
    assert!(
        runtimes.len() == 5 && runtimes.iter().all(|&ms| (900..2500).contains(&ms)),
        "expected every rank to end with rank 0 after about 1000 ms, saw job_runtime {runtimes:?}"
    );
}

#[cfg(feature = "mpi")]
#[test]
fn a_killed_rank_leaves_rank_files_that_merge_turns_into_a_partial_report() {
    let dir = scratch();
    // the first group ends on every rank; before the second, rank 3 is killed
    write_kill_job(dir.path(), "kill -9 $PPID");
    let Some(out) = mpirun(4, dir.path(), &["run", "--no-history", "kill.fio"]) else {
        return;
    };
    assert!(
        !out.status.success(),
        "expected mpirun to fail when a rank is killed, saw: {}",
        crate::support::stderr(&out)
    );
    let ranks = dir.path().join("iolens-ranks");
    let (out, said) = merge_partial(&ranks, "json");
    for rank in 0..4 {
        assert!(
            said.contains(&format!("iolens merge: rank {rank} on "))
                && said.contains("1 of 2 groups ended"),
            "expected rank {rank} listed with the groups it ended, saw: {said}"
        );
    }
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("merge prints JSON");
    let entries: Vec<(String, u64)> = doc["client_stats"]
        .as_array()
        .expect("a client_stats array")
        .iter()
        .map(|e| {
            (
                e["jobname"].as_str().unwrap().to_string(),
                e["write"]["io_bytes"].as_u64().unwrap(),
            )
        })
        .collect();
    let first = ("first".to_string(), 262_144);
    assert_eq!(
        entries,
        [
            first.clone(),
            first.clone(),
            first.clone(),
            first,
            ("All clients".to_string(), 4 * 262_144)
        ],
        "expected every rank's first group and their sum"
    );
    assert!(
        !said.contains("these rank files hold"),
        "expected no run of a --repeat series named for a plain run, saw: {said}"
    );
    // a rank that never wrote its file is named
    std::fs::remove_file(ranks.join("rank-00002.json")).unwrap();
    let (_, said) = merge_partial(&ranks, "normal");
    assert!(
        said.contains("iolens merge: rank 2 of 4: no result file"),
        "expected the missing rank 2 listed, saw: {said}"
    );
}

/// `kill.fio` in `dir`: two stonewalled groups writing 256 KiB, rank 3 running
/// `kill` (a shell command; `kill -9 $PPID` kills the rank) before the second.
#[cfg(feature = "mpi")]
fn write_kill_job(dir: &std::path::Path, kill: &str) {
    std::fs::write(
        dir.join("kill.fio"),
        format!(
            "[global]\nioengine=psync\nsize=256k\nbs=4k\nrw=write\n\
             [first]\n\
             [second]\nstonewall\nexec_prerun=[ ${{RANK}} != 3 ] || {kill}\n"
        ),
    )
    .unwrap();
}

/// `iolens merge` of the rank files in `ranks`, which must exit 1 (a partial
/// report); its output and its stderr.
#[cfg(feature = "mpi")]
fn merge_partial(ranks: &std::path::Path, formats: &str) -> (std::process::Output, String) {
    let out = command()
        .args(["merge", &format!("--output-format={formats}")])
        .arg(ranks)
        .output()
        .expect("run iolens merge");
    let said = crate::support::stderr(&out);
    assert_eq!(
        out.status.code(),
        Some(1),
        "expected exit 1 for a partial report, saw: {said}"
    );
    (out, said)
}

/// The processes (other than zombies) whose working directory is `dir`.
#[cfg(feature = "mpi")]
fn processes_in(dir: &std::path::Path) -> Vec<String> {
    let dir = dir.canonicalize().expect("a scratch dir");
    std::fs::read_dir("/proc")
        .expect("read /proc")
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.parse::<u32>().is_ok())
        })
        .filter(|e| std::fs::read_link(e.path().join("cwd")).is_ok_and(|cwd| cwd == dir))
        .filter_map(|e| std::fs::read_to_string(e.path().join("cmdline")).ok())
        .filter(|cmdline| !cmdline.is_empty())
        .collect()
}

#[cfg(feature = "mpi")]
#[test]
fn ctrl_c_under_mpirun_leaves_every_ranks_file_even_of_ranks_waiting_at_the_barrier() {
    let dir = scratch();
    // ranks 0-2 wait at the cluster barrier for rank 3, still in its setup
    std::fs::write(
        dir.path().join("long.fio"),
        "[long]\nioengine=null\nsize=1g\ntime_based\nruntime=600\n\
         exec_prerun=touch ready.${RANK} && [ ${RANK} != 3 ] || sleep 600\n",
    )
    .unwrap();
    let Some(mut cmd) = mpirun_command(4, dir.path(), &["run", "--no-history", "long.fio"]) else {
        return;
    };
    // mpirun waits this long between SIGTERM and SIGKILL: ample for 4 ranks
    // sharing a busy machine (the default, 1 s, was enough on an idle one)
    cmd.env("OMPI_MCA_odls_base_sigkill_timeout", "10");
    let mut mpirun = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start mpirun");
    let ready = |r: u32| dir.path().join(format!("ready.{r}")).exists();
    let started = std::time::Instant::now();
    while !(0..4).all(ready) {
        let ended = mpirun.try_wait().expect("look at mpirun");
        assert!(
            ended.is_none() && started.elapsed() < std::time::Duration::from_secs(120),
            "expected every rank to run its exec_prerun, saw mpirun {ended:?} after {:?}",
            started.elapsed()
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let pid = i32::try_from(mpirun.id()).expect("a pid");
    std::process::Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .expect("send SIGINT to mpirun");
    let out = mpirun.wait_with_output().expect("wait for mpirun");
    let said = crate::support::stderr(&out);
    assert!(
        said.contains(
            "stopped before the ranks' results were gathered: this report is rank 0's alone"
        ),
        "expected rank 0 to say its report is its own, saw: {said}"
    );
    let ranks = dir.path().join("iolens-ranks");
    let missing: Vec<u32> = (0..4)
        .filter(|&r| !ranks.join(format!("rank-{r:05}.json")).exists())
        .collect();
    assert!(
        missing.is_empty(),
        "expected every rank's file in {}, saw none of ranks {missing:?}; mpirun said: {said}",
        ranks.display()
    );
    let mut left = processes_in(dir.path());
    while !left.is_empty() && started.elapsed() < std::time::Duration::from_secs(120) {
        std::thread::sleep(std::time::Duration::from_millis(100));
        left = processes_in(dir.path());
    }
    assert!(
        left.is_empty(),
        "expected no process left of the run, saw: {left:?}"
    );
    let (_, said) = merge_partial(&ranks, "json");
    for rank in 0..4 {
        assert!(
            said.lines().any(|l| {
                l.starts_with(&format!("iolens merge: rank {rank} on "))
                    && l.ends_with(": stopped by a signal")
            }),
            "expected rank {rank} listed as stopped, saw: {said}"
        );
    }
    assert!(
        said.contains("interrupted: the results are partial"),
        "expected the merged report marked interrupted, saw: {said}"
    );
}

/// --warmup 1 --repeat 3 on 4 ranks: every rank runs every run, each a cluster run;
/// the first rank prints one document whose 3 repetitions each hold the 4 ranks and
/// their sum, stores the repetitions once, and names rank 3 (held to an eighth of
/// the others' rate) as the straggler of each repetition and over all of them.
#[cfg(feature = "mpi")]
#[test]
fn repetitions_on_four_ranks_are_cluster_runs_summarised_by_the_first_rank() {
    let dir = scratch();
    std::fs::write(
        dir.path().join("slow.fio"),
        "[s]\nioengine=null\nsize=2m\nbs=4k\nrw=write\nrate_iops=(2000-${RANK}/3*1750)\n",
    )
    .unwrap();
    let db = format!("--db={}", dir.path().join("h.db").display());
    let args = [
        "run",
        &db,
        "--warmup=1",
        "--repeat=3",
        "--output-format=iolens-json",
        "slow.fio",
    ];
    let Some(out) = mpirun(4, dir.path(), &args) else {
        return;
    };
    let doc = crate::support::json(&out);
    let said = crate::support::stderr(&out);
    assert_eq!(
        (said.matches("iolens: repetition ").count(), doc["warmup"].as_u64()),
        (3, Some(1)),
        "expected the first rank alone to say each of 3 repetitions after 1 warm-up run, saw: {said}"
    );
    let reps = doc["repetitions"].as_array().expect("a --repeat document");
    assert_eq!(reps.len(), 3, "expected 3 repetitions, saw {}", reps.len());
    let two_mib = 2 * 1024 * 1024;
    for (i, rep) in reps.iter().enumerate() {
        let ranks: Vec<u64> = rep["cluster"]["ranks"]
            .as_array()
            .expect("each repetition a cluster run")
            .iter()
            .map(|r| r["total"]["dirs"][1]["io_bytes"].as_u64().unwrap())
            .collect();
        let all = &rep["cluster"]["all_clients"]["jobs"][0]["dirs"][1]["io_bytes"];
        assert_eq!(
            (ranks, all.as_u64()),
            (vec![two_mib; 4], Some(4 * two_mib)),
            "expected repetition {} to hold each rank's 2 MiB and their sum",
            i + 1
        );
        let stragglers: Vec<&str> = rep["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["code"] == "straggler")
            .map(|f| f["title"].as_str().unwrap())
            .collect();
        assert!(
            stragglers.len() == 1 && stragglers[0].starts_with("rank 3 on "),
            "expected rank 3 named the straggler of repetition {}, saw {stragglers:?}",
            i + 1
        );
    }
    let over_all: Vec<&str> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "repeated-straggler")
        .map(|f| f["title"].as_str().unwrap())
        .collect();
    assert!(
        over_all.len() == 1
            && over_all[0].starts_with("rank 3 on ")
            && over_all[0].ends_with("in every repetition (3 of 3)"),
        "expected rank 3 named over the repetitions, saw {over_all:?}"
    );
    let history = command()
        .args(["history", &db, "--job", "s"])
        .output()
        .unwrap();
    let rows = crate::support::stdout(&history);
    assert_eq!(
        rows.lines().filter(|l| l.contains(" s,s,s,s ")).count(),
        3,
        "expected the 3 repetitions stored once, by the first rank, saw:\n{rows}"
    );
    assert!(
        !dir.path().join("iolens-ranks").exists(),
        "expected the rank files gone after a series that ended well"
    );
}

/// A rank killed in the second repetition: the rank files say which repetition
/// they hold, and `iolens merge` reports that one, partial.
#[cfg(feature = "mpi")]
#[test]
fn rank_files_of_a_repetition_cut_short_say_which_repetition_they_hold() {
    let dir = scratch();
    // rank 3 makes `seen` before the second group of the first repetition, and is
    // killed before that of the second
    write_kill_job(dir.path(), "mkdir seen || kill -9 $PPID");
    let Some(out) = mpirun(
        4,
        dir.path(),
        &["run", "--no-history", "--repeat=2", "kill.fio"],
    ) else {
        return;
    };
    assert!(
        !out.status.success(),
        "expected mpirun to fail when a rank is killed, saw: {}",
        crate::support::stderr(&out)
    );
    let (_, said) = merge_partial(&dir.path().join("iolens-ranks"), "normal");
    assert!(
        said.contains("these rank files hold repetition 2/2 of the run")
            && said.contains("1 of 2 groups ended"),
        "expected the rank files of repetition 2, each with its first group, saw: {said}"
    );
}

/// fio's formats stay refused with --repeat on ranks, by every rank alike (none
/// is left waiting for the others).
#[cfg(feature = "mpi")]
#[test]
fn repeat_with_a_fio_format_is_refused_on_every_rank() {
    let dir = scratch();
    let args = [
        "run",
        "--no-history",
        "--repeat=2",
        "--output-format=json",
        "--name=m",
        "--ioengine=null",
        "--size=64k",
    ];
    let Some(out) = mpirun(2, dir.path(), &args) else {
        return;
    };
    let said = crate::support::stderr(&out);
    assert!(
        !out.status.success()
            && said
                .matches("--repeat writes normal or iolens-json output")
                .count()
                == 2,
        "expected both ranks to refuse --repeat with fio's json, saw: {said}"
    );
}

/// The disks a run of `job` on its own reports (fio's `disk_util` names).
#[cfg(feature = "mpi")]
fn disks_of_a_run_on_its_own(dir: &std::path::Path, job: &[&str]) -> Vec<String> {
    let out = crate::support::command()
        .current_dir(dir)
        .args(["run", "--no-history", "--output-format=json"])
        .args(job)
        .output()
        .expect("run iolens");
    let doc = crate::support::json(&out);
    let disks = doc["disk_util"].as_array().expect("a disk_util array");
    disks
        .iter()
        .map(|d| d["name"].as_str().unwrap_or("no name").to_string())
        .collect()
}

#[cfg(feature = "mpi")]
#[test]
fn each_hosts_disks_name_their_host_and_the_html_has_the_ranks_section() {
    let dir = scratch();
    let job = [
        "--name=d",
        "--ioengine=psync",
        "--size=256k",
        "--rw=write",
        "--bs=4k",
    ];
    // the disks behind the scratch directory, as one process sees them
    let expected = disks_of_a_run_on_its_own(dir.path(), &job);
    let html = dir.path().join("r.html");
    let html_flag = format!("--html={}", html.display());
    let mut args = vec![
        "run",
        "--no-history",
        "--output-format=json,iolens-json",
        &html_flag,
    ];
    args.extend(job);
    let Some(out) = mpirun(4, dir.path(), &args) else {
        return;
    };
    assert!(
        out.status.success(),
        "expected the run to work, saw: {}",
        crate::support::stderr(&out)
    );
    let docs: Vec<serde_json::Value> = serde_json::Deserializer::from_slice(&out.stdout)
        .into_iter()
        .collect::<Result<_, _>>()
        .unwrap_or_else(|e| {
            panic!(
                "expected two JSON documents ({e}), saw: {}",
                crate::support::stdout(&out)
            )
        });
    let [fio, native] = &docs[..] else {
        panic!(
            "expected fio's document and iolens', saw {} documents",
            docs.len()
        );
    };
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let host = host.trim();
    // 4 ranks on one host: its first rank samples its disks, once
    let disks: Vec<(String, &str, u64)> = fio["disk_util"]
        .as_array()
        .expect("a disk_util array")
        .iter()
        .map(|d| {
            (
                d["name"].as_str().unwrap_or("no name").to_string(),
                d["hostname"].as_str().unwrap_or("no hostname"),
                d["rank"].as_u64().unwrap_or(u64::MAX),
            )
        })
        .collect();
    let wanted: Vec<(String, &str, u64)> = expected
        .iter()
        .map(|name| (name.clone(), host, 0))
        .collect();
    assert_eq!(
        disks, wanted,
        "expected the disks of a run on its own, once, each naming the host and rank 0"
    );
    let per_rank: Vec<usize> = native["cluster"]["ranks"]
        .as_array()
        .expect("the ranks in iolens' document")
        .iter()
        .map(|r| r["report"]["disks"].as_array().map_or(0, Vec::len))
        .collect();
    assert_eq!(
        (native["disks"].as_array().map(Vec::len), per_rank),
        (Some(0), vec![expected.len(), 0, 0, 0]),
        "expected no disks at the top of iolens' document and the host's in its first rank's report"
    );
    let page = std::fs::read_to_string(&html).expect("the HTML report");
    let section = page
        .split("<h2 id=\"cluster\">Ranks</h2>")
        .nth(1)
        .and_then(|rest| rest.split("<h2").next())
        .unwrap_or_else(|| panic!("expected the Ranks section in {page}"));
    for rank in 0..4 {
        let row = format!("<td>{rank}</td><td>{host}</td>");
        assert!(
            section.contains(&row),
            "expected rank {rank}'s row in {section}"
        );
    }
    let bars = section.matches("class=\"bar MB/s\"").count();
    assert_eq!(bars, 4, "expected a bar per rank in {section}");
    let headings = section
        .matches(&format!("<h3>Disks of {host} (sampled by rank 0)</h3>"))
        .count();
    assert_eq!(
        headings,
        usize::from(!expected.is_empty()),
        "expected the host's disks once in {section}"
    );
}

#[cfg(feature = "mpi")]
#[test]
fn a_rank_whose_job_is_refused_ends_every_rank_with_its_reason() {
    let dir = crate::support::scratch();
    // rank 3 alone gets size=0 for a file that does not exist: refused there only
    std::fs::write(
        dir.path().join("job.fio"),
        "[x]\nioengine=psync\nrw=read\nbs=4k\nsize=((3-${RANK})*1048576)\nfilename=f${RANK}\n",
    )
    .unwrap();
    let Some(out) = mpirun(4, dir.path(), &["run", "job.fio"]) else {
        return;
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(1),
        "expected every rank ended with exit 1, saw {:?}: {stderr}",
        out.status
    );
    assert!(
        stderr.contains("iolens: rank 3 on ") && stderr.contains("f3 does not exist"),
        "expected rank 3's refusal, named with its rank and host, saw: {stderr}"
    );
    assert!(
        !stderr.contains("--timeout"),
        "expected the ranks to end at once, not at mpirun's timeout: {stderr}"
    );
}

#[cfg(feature = "mpi")]
#[test]
fn the_system_text_and_the_observed_series_hold_every_rank_on_rank_0s_host() {
    let dir = scratch();
    let data = dir.path().join("data");
    let Some(out) = write_on_four_ranks(dir.path(), &data, "1m", "normal,iolens-json") else {
        return;
    };
    assert!(
        out.status.success(),
        "expected the run to work, saw: {}",
        crate::support::stderr(&out)
    );
    let stdout = crate::support::stdout(&out);
    let (text, json) = stdout
        .split_once("\n{")
        .unwrap_or_else(|| panic!("expected the text, then iolens' document, saw: {stdout}"));
    let doc: serde_json::Value = serde_json::from_str(&format!("{{{json}"))
        .unwrap_or_else(|e| panic!("expected iolens' document ({e}), saw: {json}"));
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let host = host.trim();
    assert_eq!(
        &doc["cluster"]["observed_hosts"],
        &serde_json::json!([{
            "hostname": host,
            "observer": 0,
            "ranks": [0, 1, 2, 3],
            "jobs": doc["jobs"],
        }]),
        "expected one observed host, by rank 0, with its 4 ranks (here every rank's jobs)"
    );
    // 4 ranks on one host: what its sampler saw the jobs write is every rank's
    // 1 MiB (rank 0's alone before the pairing)
    let series_written: u64 = doc["observations"]["jobs"]
        .as_array()
        .expect("the observed series")
        .iter()
        .flat_map(|j| j["intervals"].as_array().expect("intervals").iter())
        .map(|i| i["bytes"][1].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(
        series_written,
        4 << 20,
        "expected the observed series to hold the 4 ranks' writes"
    );
    assert!(
        text.contains(&format!(
            "observed on {host} by rank 0, where ranks 0, 1, 2, 3 of 4 ran\n"
        )),
        "expected the system text to name the host and its ranks, saw: {text}"
    );
    // the device line is there when the scratch directory has a block device behind it
    for line in text
        .lines()
        .filter(|l| l.trim_start().starts_with("device "))
    {
        assert!(
            line.ends_with(&format!("the ranks on {host} read 0 B, wrote 4.0 MiB")),
            "expected the device line to weigh the host's 4 ranks' 4 MiB, saw: {line}"
        );
    }
}

/// Every process of a test's run (those whose working directory is the test's
/// scratch directory: mpirun, its ranks, their commands), continued and killed
/// when dropped, also when the test fails: a rank the test stopped is left to
/// no one else.
#[cfg(feature = "mpi")]
struct RunReaper<'a>(&'a std::path::Path);

#[cfg(feature = "mpi")]
impl Drop for RunReaper<'_> {
    fn drop(&mut self) {
        let dir = self.0.canonicalize().expect("a scratch dir");
        for entry in std::fs::read_dir("/proc").expect("read /proc").flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            if std::fs::read_link(entry.path().join("cwd")).is_ok_and(|cwd| cwd == dir) {
                for signal in ["-CONT", "-KILL"] {
                    let _ = std::process::Command::new("kill")
                        .args([signal, &pid.to_string()])
                        .status();
                }
            }
        }
    }
}

/// What `found` finds, waited for while mpirun runs; panics if mpirun ends
/// first or nothing is found within two minutes (`what` says what was awaited).
#[cfg(feature = "mpi")]
fn wait_for<T>(what: &str, mpirun: &mut std::process::Child, found: impl Fn() -> Option<T>) -> T {
    let started = std::time::Instant::now();
    loop {
        if let Some(it) = found() {
            return it;
        }
        let ended = mpirun.try_wait().expect("look at mpirun");
        assert!(
            ended.is_none() && started.elapsed() < std::time::Duration::from_secs(120),
            "expected {what}, saw mpirun {ended:?} after {:?}",
            started.elapsed()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The pid rank 3's exec_prerun wrote to rank.pid in `dir` (whole: written aside
/// and renamed).
#[cfg(feature = "mpi")]
fn rank_pid(dir: &std::path::Path, mpirun: &mut std::process::Child) -> u32 {
    let file = dir.join("rank.pid");
    wait_for("rank.pid written by rank 3's exec_prerun", mpirun, || {
        let pid = std::fs::read_to_string(&file).ok()?;
        Some(pid.trim().parse().expect("a pid"))
    })
}

/// This machine's name, as iolens names a rank's host.
#[cfg(feature = "mpi")]
fn hostname() -> String {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname").expect("the host name");
    name.trim().to_string()
}

/// Stop (SIGSTOP) process `pid`, as a frozen host or a debugger would.
#[cfg(feature = "mpi")]
fn freeze(pid: u32) {
    let status = std::process::Command::new("kill")
        .args(["-STOP", &pid.to_string()])
        .status()
        .expect("run kill");
    assert!(status.success(), "expected rank process {pid} stopped");
}

/// 4 ranks of `iolens run --no-history --io-timeout=5s JOB` (the silence limit is
/// then 5 s) in `dir`, started, its output piped.
#[cfg(feature = "mpi")]
fn start_limited(dir: &std::path::Path, job: &str) -> Option<std::process::Child> {
    let args = ["run", "--no-history", "--io-timeout=5s", job];
    let mut cmd = mpirun_command(4, dir, &args)?;
    Some(
        cmd.stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("start mpirun"),
    )
}

/// What ended a run in which rank 3 was stopped at `frozen_at`: mpirun's stderr,
/// after checking that the run failed, not before the 5 s limit, and that every
/// rank left its file, with `notes` among what `iolens merge` says of them.
#[cfg(feature = "mpi")]
fn ended_on_hung_rank(
    dir: &std::path::Path,
    mpirun: std::process::Child,
    frozen_at: std::time::Instant,
    notes: &[String],
) -> String {
    let out = mpirun.wait_with_output().expect("wait for mpirun");
    let after = frozen_at.elapsed();
    let said = crate::support::stderr(&out);
    assert!(
        !out.status.success(),
        "expected the run to fail once rank 3 was silent, saw {:?}: {said}",
        out.status
    );
    // silence counts from rank 3's last word, up to a second before it was stopped
    assert!(
        after >= std::time::Duration::from_secs(4),
        "expected the others to wait the 5 s limit for rank 3 (less up to a second), saw the run end {after:?} after it was stopped: {said}"
    );
    let ranks = dir.join("iolens-ranks");
    let (_, merged) = merge_partial(&ranks, "json");
    for note in notes {
        assert!(
            merged.lines().any(|l| l.contains(note.as_str())),
            "expected `iolens merge` to say {note:?}, saw: {merged}"
        );
    }
    said
}

#[cfg(feature = "mpi")]
#[test]
fn a_rank_stopped_in_its_setup_ends_the_run_at_the_cluster_barrier_naming_it() {
    let dir = scratch();
    let _reaper = RunReaper(dir.path());
    // the second group's exec_prerun of rank 3 says its pid, then sleeps: the
    // test stops rank 3 while the others wait at the cluster barrier
    std::fs::write(
        dir.path().join("stop.fio"),
        "[global]\nioengine=null\nsize=1m\n[first]\n[second]\nstonewall\n\
         exec_prerun=[ ${RANK} != 3 ] || (sleep 1 && echo $PPID > rank.part && mv rank.part rank.pid && sleep 60)\n",
    )
    .unwrap();
    let Some(mut mpirun) = start_limited(dir.path(), "stop.fio") else {
        return;
    };
    let pid = rank_pid(dir.path(), &mut mpirun);
    freeze(pid);
    // every rank ended the first group only, and wrote it
    let notes: Vec<String> = (0..4)
        .map(|rank| format!("rank {rank} on {}: 1 of 2 groups ended", hostname()))
        .collect();
    let said = ended_on_hung_rank(dir.path(), mpirun, std::time::Instant::now(), &notes);
    let expected = format!("iolens: rank 3 on {}: silent for ", hostname());
    let line = said.lines().find(|l| l.starts_with(&expected));
    assert!(
        line.is_some_and(|l| l
            .contains(" s while running exec_prerun [ 3 != 3 ] || (sleep 1 && echo")
            && l.contains("taken as hung")
            && l.contains("every rank's results so far are in iolens-ranks")),
        "expected rank 3, its host and its exec_prerun named, saw: {said}"
    );
}

#[cfg(feature = "mpi")]
#[test]
fn a_rank_slow_but_alive_in_its_setup_is_waited_for() {
    use crate::fault_fs::{Fault, FaultFs, Op, Rule};
    let dir = scratch();
    let _reaper = RunReaper(dir.path());
    // rank 3's file is on a filesystem that answers each read late: its
    // pre_read takes several of the 5 s limits, telling its progress all along
    let Some(slow) = FaultFs::mount("f.3", 8 << 20) else {
        return;
    };
    std::os::unix::fs::symlink(slow.file(), dir.path().join("f.3")).unwrap();
    slow.inject(Rule::always(
        Op::Read,
        0..8 << 20,
        Fault::Delay(std::time::Duration::from_secs(1)),
    ));
    std::fs::write(
        dir.path().join("slow.fio"),
        "[slow]\nioengine=psync\nrw=read\nbs=4k\nsize=8m\nio_size=4k\npre_read=1\n\
         filename=f.${RANK}\n",
    )
    .unwrap();
    let Some(mpirun) = start_limited(dir.path(), "slow.fio") else {
        return;
    };
    let started = std::time::Instant::now();
    let out = mpirun.wait_with_output().expect("wait for mpirun");
    let took = started.elapsed();
    let said = crate::support::stderr(&out);
    assert!(
        out.status.success() && !said.contains("taken as hung"),
        "expected the slow rank waited for, saw {:?}: {said}",
        out.status
    );
    assert!(
        took > std::time::Duration::from_secs(10) && slow.fired() > 8,
        "expected rank 3's pre_read to take over two limits (this test's premise), saw {took:?} and {} slow reads",
        slow.fired()
    );
}

#[cfg(feature = "mpi")]
#[test]
fn a_rank_stopped_in_a_group_bound_by_size_ends_the_run_naming_it() {
    let dir = scratch();
    let _reaper = RunReaper(dir.path());
    // every rank writes 4 MiB, a 4 KiB write every 4 ms; rank 3 is stopped once its
    // file grows. A think time, not a rate: a rate catches up after the stop (as fio's
    // does), so rank 3, resumed by mpirun before its SIGTERM, could end its group whole
    std::fs::write(
        dir.path().join("size.fio"),
        "[global]\nioengine=null\nsize=1m\n[first]\n\
         [second]\nstonewall\nioengine=psync\nrw=write\nbs=4k\nsize=4m\nthinktime=4000\n\
         fallocate=none\nfilename=f.${RANK}\n\
         exec_prerun=[ ${RANK} != 3 ] || (echo $PPID > rank.part && mv rank.part rank.pid)\n",
    )
    .unwrap();
    let Some(mut mpirun) = start_limited(dir.path(), "size.fio") else {
        return;
    };
    let pid = rank_pid(dir.path(), &mut mpirun);
    let f3 = dir.path().join("f.3");
    wait_for("rank 3 to start writing f.3", &mut mpirun, || {
        std::fs::metadata(&f3).ok().filter(|m| m.len() > 0)
    });
    freeze(pid);
    // rank 3 is named (it ended one group, or, resumed by mpirun's SIGCONT and
    // SIGTERM as it ends the run, it was stopped by a signal)
    let notes = [format!("iolens merge: rank 3 on {}: ", hostname())];
    let said = ended_on_hung_rank(dir.path(), mpirun, std::time::Instant::now(), &notes);
    for rank in 0..3 {
        let file = dir.path().join(format!("iolens-ranks/rank-{rank:05}.json"));
        let saved: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&file).unwrap_or_default()).unwrap_or_default();
        let groups = saved["rank"]["groups"].as_array().map(Vec::len);
        assert_eq!(
            groups,
            Some(2),
            "expected rank {rank}'s file with both groups it ended, saw {}",
            file.display()
        );
    }
    // resumed, rank 3 names no other rank and no worker of its own
    assert!(
        !said.lines().any(|l| l.contains("watchdog:")
            || (0..3).any(|r| l.starts_with(&format!("iolens: rank {r} on ")))),
        "expected no line blaming the ranks that ended the run or rank 3's workers, saw: {said}"
    );
    assert!(
        said.lines().any(|l| l.starts_with("iolens: rank 3 on ")
            && l.contains(" s while running group 2")
            && l.contains("taken as hung")),
        "expected rank 3 named with the group it ran, saw: {said}"
    );
}
