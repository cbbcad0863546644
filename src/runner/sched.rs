//! Applies a job's `cpus_allowed`, `nice` and `prio` to the worker thread itself, before
//! its engine is set up, so the engine's own threads (io_uring's poller) inherit them.

use super::result::IoFailure;
use crate::job::spec::SchedSpec;
use iolens_sys::sched;

/// The CPUs worker `worker_index` may use: all of the set, or one of it under `split`.
fn cpus_for(spec: &SchedSpec, worker_index: u32) -> &[usize] {
    match spec.split_cpus && !spec.cpus.is_empty() {
        true => {
            let i = worker_index as usize % spec.cpus.len();
            &spec.cpus[i..=i]
        }
        false => &spec.cpus,
    }
}

/// Sets what the job asks for on the calling thread; the first refusal is the worker's error.
pub(super) fn apply(spec: &SchedSpec, worker_index: u32) -> Result<(), IoFailure> {
    let failed = |what: String, e: std::io::Error| IoFailure {
        message: format!("{what}: {e}"),
        errno: e.raw_os_error().unwrap_or(0),
    };
    let cpus = cpus_for(spec, worker_index);
    if !cpus.is_empty() {
        sched::set_thread_affinity(cpus)
            .map_err(|e| failed(format!("cpus_allowed {cpus:?}"), e))?;
    }
    if let Some(nice) = spec.nice {
        sched::set_thread_nice(nice).map_err(|e| failed(format!("nice={nice}"), e))?;
    }
    if let Some((class, level)) = spec.ioprio {
        sched::set_thread_ioprio(class, level)
            .map_err(|e| failed(format!("prioclass={class} prio={level}"), e))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_gives_each_worker_one_cpu_in_turn() {
        let spec = SchedSpec {
            cpus: vec![2, 5],
            split_cpus: true,
            ..SchedSpec::default()
        };
        assert_eq!(cpus_for(&spec, 0), &[2]);
        assert_eq!(cpus_for(&spec, 1), &[5]);
        assert_eq!(cpus_for(&spec, 2), &[2]);
        let shared = SchedSpec {
            split_cpus: false,
            ..spec
        };
        assert_eq!(cpus_for(&shared, 1), &[2, 5]);
    }

    #[test]
    fn applies_to_the_calling_thread() {
        let cpu = sched::thread_affinity().unwrap()[0];
        let spec = SchedSpec {
            cpus: vec![cpu],
            ioprio: Some((2, 7)),
            ..SchedSpec::default()
        };
        std::thread::spawn(move || {
            apply(&spec, 0).unwrap();
            assert_eq!(sched::thread_affinity().unwrap(), vec![cpu]);
            assert_eq!(sched::thread_ioprio().unwrap(), (2, 7));
        })
        .join()
        .unwrap();
        let impossible = SchedSpec {
            cpus: vec![4000],
            ..SchedSpec::default()
        };
        let error = apply(&impossible, 0).unwrap_err();
        assert!(
            error.message.starts_with("cpus_allowed [4000]"),
            "{}",
            error.message
        );
    }
}
