//! The option-space fuzzer: runs of the real binary with random values for random options
//! of the whole option table (`iolens::fuzzing::option_values`), each run held to 2 GiB of
//! address space and a minute of CPU, in a 64 MiB tmpfs, with a deadline after which it is
//! sent SIGINT and then must end. No run may panic, abort on an allocation or hang; a
//! finding fails the test with the command line that reproduces it. The first half of the
//! runs has a fixed seed, the second a seed from the clock (printed with any finding).

use crate::differential::gen::Rng;
use crate::support::{limited, unmount};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long the runs may take together, beside the cargo test's other tests.
const BUDGET: Duration = Duration::from_secs(90);
/// A run still going after this is sent SIGINT; one still going this long after that hangs.
const DEADLINE: Duration = Duration::from_secs(20);
const FIXED_SEED: u64 = 0x1015_1e45;
/// Options whose large values cost the machine, not iolens' robustness: kept small.
const SMALL: &[(&str, &[&str])] = &[
    ("numjobs", &["1", "2", "4", "0", "x"]),
    ("nrfiles", &["1", "3", "16", "0", "x"]),
    ("openfiles", &["1", "3", "0"]),
];

/// One of `from`, picked by `rng`.
fn pick<'a, T>(rng: &mut Rng, from: &'a [T]) -> &'a T {
    &from[(rng.next() % from.len() as u64) as usize]
}

/// A 64 MiB tmpfs, unmounted on drop.
struct Tmpfs(tempfile::TempDir);

impl Tmpfs {
    fn mount() -> Option<Tmpfs> {
        let dir = crate::support::scratch();
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=64m,mode=0777", "tmpfs"])
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        mounted.then_some(Tmpfs(dir))
    }

    fn path(&self) -> &Path {
        self.0.path()
    }

    /// Remove what the last run left.
    fn empty(&self) {
        for entry in std::fs::read_dir(self.path()).unwrap() {
            let path = entry.unwrap().path();
            let _ = std::fs::remove_dir_all(&path).or_else(|_| std::fs::remove_file(&path));
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        unmount(self.path());
    }
}

/// One run's words after `run`: a small base job (1 MiB, 2 s), then `count` random options.
fn random_words(
    rng: &mut Rng,
    options: &[(&'static str, Vec<String>)],
    count: usize,
) -> Vec<String> {
    let mut words: Vec<String> = ["--no-history", "--name=fz", "--size=1m", "--runtime=2"]
        .map(String::from)
        .to_vec();
    for _ in 0..count {
        let (name, values) = pick(rng, options);
        // half the time the option's example, so that most runs get past the checks
        let value = match SMALL.iter().find(|(small, _)| small == name) {
            Some((_, small)) => pick(rng, small).to_string(),
            None if rng.next().is_multiple_of(2) => values[0].clone(),
            None => pick(rng, values).clone(),
        };
        words.push(format!("--{name}={value}"));
    }
    words
}

/// One run's exit code, and what is wrong with it, if anything: a panic, an abort, a hang.
fn run(dir: &Path, words: &[String]) -> (Option<i32>, Option<String>) {
    let Some(mut command) = limited(&["--as=2147483648", "--cpu=60"]) else {
        return (None, None);
    };
    let mut child = command
        .arg("run")
        .args(words)
        .current_dir(dir)
        .env("TMPDIR", dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join(".stderr")).unwrap())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let mut interrupted = false;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if !interrupted && started.elapsed() > DEADLINE {
            interrupted = true;
            let _ = Command::new("kill")
                .args(["-s", "INT", &child.id().to_string()])
                .status();
        }
        if started.elapsed() > 2 * DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            return (None, Some("still running after SIGINT (a hang)".into()));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stderr = std::fs::read_to_string(dir.join(".stderr")).unwrap_or_default();
    let said = |what: &str| {
        stderr
            .lines()
            .find(|l| l.contains(what))
            .map(str::to_string)
    };
    let finding = if status.code() == Some(101) || said("panicked").is_some() {
        Some(said("panicked").unwrap_or_else(|| "exit 101".into()))
    } else if let Some(line) = ["memory allocation of", "(SIGABRT)", "(SIGSEGV)", "(SIGBUS)"]
        .into_iter()
        .find_map(said)
    {
        // an abort of the process, or of a worker process (its parent names the signal)
        Some(line)
    } else if status.code().is_none() {
        Some(format!("killed: {status}"))
    } else {
        None
    };
    (status.code(), finding)
}

#[test]
fn random_values_of_every_option_never_panic_abort_or_hang() {
    if !crate::support::is_root() {
        eprintln!("skipping: the runs go in a tmpfs, which needs root to mount");
        return;
    }
    let Some(tmpfs) = Tmpfs::mount() else {
        eprintln!("skipping: cannot mount a tmpfs");
        return;
    };
    let options = iolens::fuzzing::option_values();
    let clock_seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    let start = Instant::now();
    let mut findings = Vec::new();
    for (half, seed) in (1..).zip([FIXED_SEED, clock_seed]) {
        let mut rng = Rng::new(seed);
        let (mut runs, mut refused) = (0, 0);
        while start.elapsed() < BUDGET / 2 * half {
            let count = 1 + (rng.next() % 4) as usize;
            let words = random_words(&mut rng, &options, count);
            let (code, finding) = run(tmpfs.path(), &words);
            refused += usize::from(code == Some(2));
            if let Some(what) = finding {
                findings.push(format!(
                    "seed {seed:#x}, run {runs}: {what}\n  iolens run {}",
                    words.join(" ")
                ));
            }
            tmpfs.empty();
            runs += 1;
        }
        eprintln!("option fuzz: seed {seed:#x}: {runs} runs, {refused} of them refused (exit 2)");
    }
    assert!(findings.is_empty(), "{}", findings.join("\n"));
}
