//! Where the job's I/O stopped short of the media, read from the target's
//! stack (`model::stack`) and the ledger: `no-device` (tmpfs, FUSE or a
//! network filesystem: the number measured RAM, a daemon or a server, never
//! "the device") and `loop-without-direct-io` (a direct-I/O job on a loop
//! device that reads and writes its backing file through the page cache:
//! the disk below saw little of the job's bytes).

use super::{bytes_text, stack_of};
use crate::model::{Finding, JobLedger, Layer, NoDevice, RunReport, Severity, TargetStack};

/// Below this a job moved too little for a share to mean anything.
const MIN_JOB_BYTES: u64 = 4 << 20;
/// The disk below a buffered loop saw less than this share of the job's bytes.
const BELOW_SHARE_MAX: f64 = 0.5;

pub(super) fn no_device(report: &RunReport) -> Vec<Finding> {
    let mut findings = Vec::new();
    for series in &report.observations.jobs {
        for path in &series.targets {
            let Some(stack) = stack_of(report, path) else {
                continue;
            };
            let (Some(kind), Some(top)) = (stack.top_has_no_device(), stack.top()) else {
                continue;
            };
            let fs = top.fs_type().unwrap_or("?");
            let (what, advice) = match kind {
                NoDevice::Memory => (
                    "there is no device: this measured RAM",
                    "benchmark a file on a disk-backed filesystem, or the device itself",
                ),
                NoDevice::Fuse => (
                    "a user-space filesystem (FUSE): this measured its daemon and whatever it stores to, which iolens cannot see",
                    "benchmark the storage under the FUSE daemon directly, or say in the result that it includes the daemon",
                ),
                NoDevice::Network => (
                    "a network filesystem: this measured the network and the server, not a local device",
                    "say so with the result, or benchmark the server's storage on the server",
                ),
                NoDevice::Virtual => continue,
            };
            findings.push(Finding {
                code: "no-device".into(),
                severity: Severity::Warning,
                title: format!("job '{}' ran on {path}, on {fs}: {what}", series.name),
                evidence: vec![format!(
                    "{path} is on {fs} mounted at {}, with no block device of this machine below it",
                    mount_point(top)
                )],
                advice: advice.into(),
                at_ns: None,
            });
        }
    }
    findings
}

/// Where a filesystem layer is mounted ("?" for a device layer).
fn mount_point(layer: &Layer) -> &str {
    match layer {
        Layer::Filesystem { mount_point, .. }
        | Layer::Memory { mount_point, .. }
        | Layer::Fuse { mount_point, .. }
        | Layer::Network { mount_point, .. }
        | Layer::Virtual { mount_point, .. } => mount_point,
        _ => "?",
    }
}

pub(super) fn loop_without_direct_io(report: &RunReport) -> Vec<Finding> {
    let obs = &report.observations;
    let mut findings = Vec::new();
    for series in obs.jobs.iter().filter(|s| s.direct) {
        let Some(ledger) = obs.ledger.iter().find(|l| l.job == series.name) else {
            continue;
        };
        if ledger.job_bytes() < MIN_JOB_BYTES {
            continue;
        }
        for path in &series.targets {
            let Some(stack) = stack_of(report, path) else {
                continue;
            };
            findings.extend(
                buffered_loops(stack)
                    .filter_map(|(name, backing)| stopped_at_loop(ledger, name, backing)),
            );
        }
    }
    findings
}

/// (loop name, backing file) of each loop device without direct I/O whose
/// backing file is on a device (a loop over tmpfs is a RAM disk by design).
fn buffered_loops(stack: &TargetStack) -> impl Iterator<Item = (&str, &str)> {
    stack
        .layers
        .iter()
        .enumerate()
        .filter_map(|(i, l)| match &l.layer {
            Layer::Loop {
                name,
                direct_io: false,
                backing_file,
            } if stack
                .below(i)
                .iter()
                .any(|b| b.layer.device_name().is_some()) =>
            {
                Some((name.as_str(), backing_file.as_str()))
            }
            _ => None,
        })
}

fn stopped_at_loop(ledger: &JobLedger, name: &str, backing: &str) -> Option<Finding> {
    let via = format!("backing file of {name}");
    let below = ledger.layers.iter().find(|l| l.via == via)?;
    let job = ledger.job_bytes();
    if below.moved_bytes() as f64 >= BELOW_SHARE_MAX * job as f64 {
        return None;
    }
    Some(Finding {
        code: "loop-without-direct-io".into(),
        severity: Severity::Warning,
        title: format!(
            "direct I/O of job '{}' stopped at {name}: it has no direct I/O, so {} of the job's {} reached the disk below",
            ledger.job,
            bytes_text(below.moved_bytes()),
            bytes_text(job)
        ),
        evidence: vec![
            format!("{name} reads and writes its backing file {backing} through that file's page cache (loop/dio = 0)"),
            format!(
                "{} ({via}) read {} and wrote {} while the job ran",
                below.device,
                bytes_text(below.read_bytes),
                bytes_text(below.write_bytes)
            ),
        ],
        advice: format!("turn direct I/O on for the loop device (losetup --direct-io=on /dev/{name}), or benchmark the disk below it"),
        at_ns: Some(ledger.from_ns),
    })
}

#[cfg(test)]
mod tests {
    use super::super::fixture::*;
    use super::*;
    use crate::model::LayerTraffic;

    fn on_stack(direct: bool, layers: Vec<(u32, Layer)>) -> RunReport {
        let mut report = run(20);
        add_job(&mut report, "j", direct, io(1000, 0));
        report.environment.stacks = vec![TargetStack::of(TARGET, layers)];
        report
    }

    fn tmpfs() -> Layer {
        Layer::Memory {
            fs_type: "tmpfs".into(),
            mount_point: "/dev/shm".into(),
        }
    }

    fn buffered_loop_over_disk(below_read: u64) -> RunReport {
        let mut report = on_stack(
            true,
            vec![
                (
                    0,
                    Layer::Loop {
                        name: "loop7".into(),
                        direct_io: false,
                        backing_file: "/data/img".into(),
                    },
                ),
                (1, Layer::filesystem("xfs", "/data", "/dev/vda", &[])),
                (
                    2,
                    Layer::Disk {
                        name: "vda".into(),
                        model: None,
                        rotational: None,
                    },
                ),
            ],
        );
        report.observations.ledger.push(JobLedger {
            job: "j".into(),
            job_read_bytes: 64 << 20,
            layers: vec![
                LayerTraffic {
                    device: "loop7".into(),
                    via: format!("holds {TARGET}"),
                    read_bytes: 64 << 20,
                    ..Default::default()
                },
                LayerTraffic {
                    device: "vda".into(),
                    via: "backing file of loop7".into(),
                    read_bytes: below_read,
                    ..Default::default()
                },
            ],
            ..Default::default()
        });
        report
    }

    #[test]
    fn a_target_on_tmpfs_measured_ram() {
        let found = no_device(&on_stack(true, vec![(0, tmpfs())]));
        assert_eq!(codes(&found), ["no-device"]);
        assert!(found[0].title.contains("this measured RAM"), "{found:?}");
    }

    #[test]
    fn a_target_on_a_disk_has_a_device() {
        let layers = vec![(0, Layer::filesystem("ext4", "/", "/dev/vda", &[]))];
        assert!(no_device(&on_stack(true, layers)).is_empty());
    }

    #[test]
    fn a_buffered_loop_whose_disk_saw_little_is_named() {
        let found = loop_without_direct_io(&buffered_loop_over_disk(1 << 20));
        assert_eq!(codes(&found), ["loop-without-direct-io"]);
        assert!(found[0]
            .advice
            .contains("losetup --direct-io=on /dev/loop7"));
    }

    #[test]
    fn silent_when_the_disk_below_saw_the_bytes_or_the_loop_is_a_ram_disk() {
        assert!(loop_without_direct_io(&buffered_loop_over_disk(64 << 20)).is_empty());
        let ram_disk = on_stack(
            true,
            vec![
                (
                    0,
                    Layer::Loop {
                        name: "loop7".into(),
                        direct_io: false,
                        backing_file: "/dev/shm/img".into(),
                    },
                ),
                (1, tmpfs()),
            ],
        );
        assert!(loop_without_direct_io(&ram_disk).is_empty());
    }
}
