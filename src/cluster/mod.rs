//! Many hosts, one run: iolens started as MPI ranks (`mpirun`, `srun`). This file
//! reads the launch from the launcher's environment, decides with `--mpi` whether
//! the run is a cluster run, and gives job files the rank's variables; `link.rs`
//! (cargo feature `mpi`) holds every MPI call.

#[cfg(feature = "mpi")]
mod link;

#[cfg(feature = "mpi")]
pub(crate) use link::MpiLink;

use crate::runner::ranks::ClusterLink;

/// Whether this binary was built with MPI (cargo feature `mpi`).
pub(crate) const BUILT_WITH_MPI: bool = cfg!(feature = "mpi");

/// `--mpi=`: whether a launch as several ranks runs as one cluster run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum MpiMode {
    /// A cluster run when the launcher started several ranks.
    #[default]
    Auto,
    /// Always start MPI (a single rank too).
    On,
    /// Never: every rank runs on its own.
    Off,
}

/// Where the launcher put this process: its rank among how many, and its rank on
/// its host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Launch {
    pub rank: u32,
    pub ranks: u32,
    pub local_rank: u32,
    /// The launcher the variables came from, for messages.
    pub launcher: &'static str,
}

/// The launchers' variables: (launcher, rank, number of ranks, local rank).
/// Open MPI's mpirun, MPICH's hydra (also Slurm's PMI-2) and Slurm's srun.
const SOURCES: [(&str, &str, &str, &str); 3] = [
    (
        "Open MPI",
        "OMPI_COMM_WORLD_RANK",
        "OMPI_COMM_WORLD_SIZE",
        "OMPI_COMM_WORLD_LOCAL_RANK",
    ),
    ("PMI", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"),
    // SLURM_STEP_NUM_TASKS, not SLURM_NTASKS: a batch script has the latter but
    // is one process, not a rank of a step
    (
        "Slurm",
        "SLURM_PROCID",
        "SLURM_STEP_NUM_TASKS",
        "SLURM_LOCALID",
    ),
];

impl Launch {
    /// The launch the environment (`var`) describes; None when no launcher started
    /// this process. PMIx's rank (`PMIX_RANK`) stands in for a launcher's own.
    pub(crate) fn from_env(var: impl Fn(&str) -> Option<String>) -> Option<Launch> {
        let number = |name: &str| var(name).and_then(|v| v.trim().parse::<u32>().ok());
        SOURCES.iter().find_map(|&(launcher, rank, ranks, local)| {
            let ranks = number(ranks)?;
            let rank = number(rank).or_else(|| number("PMIX_RANK"))?;
            (rank < ranks).then(|| Launch {
                rank,
                ranks,
                local_rank: number(local).unwrap_or(0),
                launcher,
            })
        })
    }

    /// This process's launch, from its own environment.
    pub(crate) fn of_this_process() -> Option<Launch> {
        Launch::from_env(|name| std::env::var(name).ok())
    }
}

/// How to get a build that runs as MPI ranks.
pub(crate) const HOW_TO_BUILD: &str = "build iolens with MPI: cargo build --release --features mpi (needs Open MPI or MPICH, e.g. the packages libopenmpi-dev and openmpi-bin, and libclang-dev)";

/// Whether this run is a cluster run: `mode` as asked, `launch` as found, `built`
/// whether this binary has MPI. Err: the line to exit 2 with.
pub(crate) fn decide(mode: MpiMode, launch: Option<Launch>, built: bool) -> Result<bool, NoMpi> {
    let several = launch.filter(|l| l.ranks > 1);
    match (mode, several, built) {
        (MpiMode::Off, _, _) => Ok(false),
        (MpiMode::On, _, true) => Ok(true),
        (MpiMode::On, _, false) => Err(NoMpi::AskedFor),
        (MpiMode::Auto, Some(_), true) => Ok(true),
        (MpiMode::Auto, Some(launch), false) => Err(NoMpi::Launched(launch)),
        (MpiMode::Auto, None, _) => Ok(false),
    }
}

/// A run that needs MPI in a build without it.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum NoMpi {
    /// `--mpi=on`.
    #[error("--mpi=on: this iolens is built without MPI; {HOW_TO_BUILD}")]
    AskedFor,
    /// Started by a launcher as one of several ranks.
    #[error(
        "started by {} as rank {} of {}, but this iolens is built without MPI; {HOW_TO_BUILD}, or pass --mpi=off to run every rank on its own",
        .0.launcher, .0.rank, .0.ranks
    )]
    Launched(Launch),
}

/// The link to the other ranks when `on` (MPI started; it ends when the link is
/// dropped); None for a run on its own.
#[cfg(feature = "mpi")]
pub(crate) fn connect(on: bool) -> Result<Option<Box<dyn ClusterLink>>, String> {
    Ok(match on {
        true => Some(Box::new(MpiLink::start()?)),
        false => None,
    })
}

/// Without MPI built in, `decide` never turns a run on.
#[cfg(not(feature = "mpi"))]
pub(crate) fn connect(on: bool) -> Result<Option<Box<dyn ClusterLink>>, String> {
    assert!(!on, "decide() turns MPI on only in a build with it");
    Ok(None)
}

/// The variables a job file may use besides the environment: `${RANK}`,
/// `${NRANKS}`, `${LOCAL_RANK}` (0, 1 and 0 without a launcher) and `${HOSTNAME}`.
pub(crate) fn variable(name: &str, launch: Option<Launch>) -> Option<String> {
    match name {
        "RANK" => Some(launch.map_or(0, |l| l.rank).to_string()),
        "NRANKS" => Some(launch.map_or(1, |l| l.ranks).to_string()),
        "LOCAL_RANK" => Some(launch.map_or(0, |l| l.local_rank).to_string()),
        "HOSTNAME" => Some(hostname()),
        _ => None,
    }
}

/// This host's name, as the kernel has it.
pub(crate) fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|name| name.trim().to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn each_launcher_is_read_from_its_variables() {
        type Expected = Option<(u32, u32, u32, &'static str)>;
        let cases: [(&[(&str, &str)], Expected); 6] = [
            (
                &[
                    ("OMPI_COMM_WORLD_RANK", "3"),
                    ("OMPI_COMM_WORLD_SIZE", "4"),
                    ("OMPI_COMM_WORLD_LOCAL_RANK", "1"),
                ],
                Some((3, 4, 1, "Open MPI")),
            ),
            (
                &[
                    ("PMI_RANK", "2"),
                    ("PMI_SIZE", "8"),
                    ("MPI_LOCALRANKID", "0"),
                ],
                Some((2, 8, 0, "PMI")),
            ),
            (
                &[
                    ("SLURM_PROCID", "5"),
                    ("SLURM_STEP_NUM_TASKS", "16"),
                    ("SLURM_LOCALID", "1"),
                ],
                Some((5, 16, 1, "Slurm")),
            ),
            (
                &[("PMIX_RANK", "7"), ("SLURM_STEP_NUM_TASKS", "9")],
                Some((7, 9, 0, "Slurm")),
            ),
            // a batch script: one process of an allocation of 16 tasks
            (&[("SLURM_PROCID", "0"), ("SLURM_NTASKS", "16")], None),
            (
                &[("OMPI_COMM_WORLD_RANK", "4"), ("OMPI_COMM_WORLD_SIZE", "4")],
                None,
            ),
        ];
        for (vars, expected) in cases {
            let found =
                Launch::from_env(env(vars)).map(|l| (l.rank, l.ranks, l.local_rank, l.launcher));
            assert_eq!(
                found, expected,
                "expected {expected:?} from {vars:?}, saw {found:?}"
            );
        }
    }

    #[test]
    fn several_ranks_without_mpi_built_in_are_refused_with_how_to_build() {
        let four = Some(Launch {
            rank: 1,
            ranks: 4,
            local_rank: 1,
            launcher: "Open MPI",
        });
        let one = four.map(|l| Launch {
            rank: 0,
            ranks: 1,
            ..l
        });
        assert_eq!(decide(MpiMode::Auto, four, true), Ok(true));
        assert_eq!(decide(MpiMode::Auto, one, true), Ok(false));
        assert_eq!(decide(MpiMode::Auto, None, true), Ok(false));
        assert_eq!(decide(MpiMode::Off, four, false), Ok(false));
        assert_eq!(decide(MpiMode::On, None, true), Ok(true));
        let refused = decide(MpiMode::Auto, four, false).unwrap_err();
        assert_eq!(
            refused.to_string(),
            format!(
                "started by Open MPI as rank 1 of 4, but this iolens is built without MPI; \
                 {HOW_TO_BUILD}, or pass --mpi=off to run every rank on its own"
            ),
            "expected the launch, how to build and --mpi=off"
        );
        assert!(HOW_TO_BUILD.contains("--features mpi"));
        let refused = decide(MpiMode::On, None, false).unwrap_err();
        assert_eq!(
            refused.to_string(),
            format!("--mpi=on: this iolens is built without MPI; {HOW_TO_BUILD}"),
            "expected how to build"
        );
    }

    #[test]
    fn rank_variables_default_to_a_single_rank() {
        let launch = Some(Launch {
            rank: 2,
            ranks: 4,
            local_rank: 0,
            launcher: "Slurm",
        });
        let vars = ["RANK", "NRANKS", "LOCAL_RANK"];
        let seen: Vec<_> = vars.iter().map(|v| variable(v, launch)).collect();
        assert_eq!(seen, [Some("2".into()), Some("4".into()), Some("0".into())]);
        let alone: Vec<_> = vars.iter().map(|v| variable(v, None)).collect();
        assert_eq!(
            alone,
            [Some("0".into()), Some("1".into()), Some("0".into())]
        );
        assert_eq!(variable("HOSTNAME", None), Some(hostname()));
        assert_eq!(
            variable("HOME", launch),
            None,
            "expected other names left to the environment"
        );
    }
}
