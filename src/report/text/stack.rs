//! A target's I/O stack (`model::TargetStack`) in words: one line a layer,
//! indented by depth (`doctor`), or one line a target, layers joined by
//! arrows (the report's system block).

use crate::model::{Layer, TargetStack};
use std::fmt::Write;

/// The target, then each layer on its own line, two spaces deeper per level.
pub(crate) fn stack_text(stack: &TargetStack) -> String {
    let mut out = format!("{}\n", stack.target);
    for layer in &stack.layers {
        let indent = "  ".repeat(layer.depth as usize + 1);
        let _ = writeln!(out, "{indent}{}", describe(&layer.layer));
    }
    out
}

/// One line: `stack of T: ext4 (data=journal) → loop3 (no direct I/O) → xfs → vda`;
/// a device over several members lists them in brackets, separated by `+`.
pub(crate) fn stack_line(stack: &TargetStack) -> String {
    let layers = if stack.layers.is_empty() {
        "unknown".to_string()
    } else {
        chain(stack, 0)
    };
    format!("stack of {}: {layers}", stack.target)
}

/// Layer `index` and what is below it.
fn chain(stack: &TargetStack, index: usize) -> String {
    let layer = &stack.layers[index];
    let below = stack.below(index);
    // The layers right below this one: each starts a branch (an md or dm member).
    let branches: Vec<String> = below
        .iter()
        .enumerate()
        .filter(|(_, l)| l.depth == layer.depth + 1)
        .map(|(offset, _)| chain(stack, index + 1 + offset))
        .collect();
    let label = label(&layer.layer);
    match branches.as_slice() {
        [] => label,
        [only] => format!("{label} → {only}"),
        many => format!("{label} → [{}]", many.join(" + ")),
    }
}

/// A layer in a few words, for the one-line form.
fn label(layer: &Layer) -> String {
    match layer {
        Layer::Filesystem {
            fs_type,
            data_path_options,
            ..
        } if !data_path_options.is_empty() => {
            format!("{fs_type} ({})", data_path_options.join(", "))
        }
        Layer::Filesystem { fs_type, .. } | Layer::Virtual { fs_type, .. } => fs_type.clone(),
        Layer::Memory { fs_type, .. } => format!("{fs_type} (RAM)"),
        Layer::Fuse { fs_type, .. } => format!("{fs_type} (FUSE daemon)"),
        Layer::Network {
            fs_type, source, ..
        } => format!("{fs_type} ({source})"),
        Layer::Partition { name, .. } => name.clone(),
        Layer::DeviceMapper { name, dm_name } => format!("{name} ({dm_name})"),
        Layer::Raid { name, level } => match level {
            Some(level) => format!("{name} ({level})"),
            None => name.clone(),
        },
        Layer::Loop {
            name, direct_io, ..
        } => format!(
            "{name} ({})",
            if *direct_io {
                "direct I/O"
            } else {
                "no direct I/O"
            }
        ),
        Layer::Zram { name, algorithm } => match algorithm {
            Some(algorithm) => format!("{name} (zram, {algorithm})"),
            None => format!("{name} (zram)"),
        },
        Layer::Disk { name, .. } => name.clone(),
    }
}

/// A layer in a sentence a storage engineer reads at once.
fn describe(layer: &Layer) -> String {
    match layer {
        Layer::Filesystem {
            fs_type,
            mount_point,
            source,
            data_path_options,
        } => {
            let options = if data_path_options.is_empty() {
                String::new()
            } else {
                format!(" ({})", data_path_options.join(", "))
            };
            format!("{fs_type} on {source}, mounted at {mount_point}{options}")
        }
        Layer::Memory {
            fs_type,
            mount_point,
        } => format!("{fs_type} at {mount_point}: no device, the data lives in RAM"),
        Layer::Fuse {
            fs_type,
            mount_point,
            source,
        } => format!(
            "{fs_type} at {mount_point} (from {source}), a user-space filesystem (FUSE): what reaches storage is up to its daemon"
        ),
        Layer::Network {
            fs_type,
            mount_point,
            source,
        } => format!(
            "{fs_type} at {mount_point}: the data lives on another machine ({fs_type} from {source})"
        ),
        Layer::Virtual {
            fs_type,
            mount_point,
        } => format!(
            "{fs_type} at {mount_point}: no device of its own (a virtual filesystem over others)"
        ),
        Layer::Partition { name, disk } => format!("{name}: partition of {disk}"),
        Layer::DeviceMapper { name, dm_name } => {
            format!("{name}: device-mapper device {dm_name:?}, over the devices below")
        }
        Layer::Raid { name, level } => format!(
            "{name}: md RAID ({}), over the devices below",
            level.as_deref().unwrap_or("level unknown")
        ),
        Layer::Loop {
            name,
            direct_io: true,
            backing_file,
        } => format!("{name}: backing file {backing_file}, direct I/O"),
        Layer::Loop {
            name,
            direct_io: false,
            backing_file,
        } => format!(
            "{name}: backing file {backing_file}, no direct I/O (reads and writes go through the backing file's page cache)"
        ),
        Layer::Zram { name, algorithm } => match algorithm {
            Some(algorithm) => format!("{name}: compressed RAM disk ({algorithm})"),
            None => format!("{name}: compressed RAM disk"),
        },
        Layer::Disk {
            name,
            model,
            rotational,
        } => {
            let mut text = format!("{name}: disk");
            match rotational {
                Some(true) => text.push_str(", rotational"),
                Some(false) => text.push_str(", non-rotational"),
                None => {}
            }
            if let Some(model) = model {
                let _ = write!(text, ", model {model:?}");
            }
            text
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ext4_on_a_loop_over_xfs() -> TargetStack {
        TargetStack::of(
            "/mnt/x/f.dat",
            vec![
                (
                    0,
                    Layer::filesystem("ext4", "/mnt/x", "/dev/loop3", &["data=journal"]),
                ),
                (
                    1,
                    Layer::Loop {
                        name: "loop3".into(),
                        direct_io: false,
                        backing_file: "/data/img".into(),
                    },
                ),
                (2, Layer::filesystem("xfs", "/data", "/dev/vda", &[])),
                (
                    3,
                    Layer::Disk {
                        name: "vda".into(),
                        model: Some("QEMU HARDDISK".into()),
                        rotational: Some(false),
                    },
                ),
            ],
        )
    }

    #[test]
    fn each_layer_on_its_own_line_indented_by_depth() {
        assert_eq!(
            stack_text(&ext4_on_a_loop_over_xfs()),
            "/mnt/x/f.dat\n\
             \x20 ext4 on /dev/loop3, mounted at /mnt/x (data=journal)\n\
             \x20   loop3: backing file /data/img, no direct I/O (reads and writes go through the backing file's page cache)\n\
             \x20     xfs on /dev/vda, mounted at /data\n\
             \x20       vda: disk, non-rotational, model \"QEMU HARDDISK\"\n"
        );
    }

    #[test]
    fn one_line_joins_the_layers_with_arrows() {
        assert_eq!(
            stack_line(&ext4_on_a_loop_over_xfs()),
            "stack of /mnt/x/f.dat: ext4 (data=journal) → loop3 (no direct I/O) → xfs → vda"
        );
    }

    #[test]
    fn the_members_of_a_raid_are_branches() {
        let disk = |name: &str| Layer::Disk {
            name: name.into(),
            model: None,
            rotational: None,
        };
        let partition = |name: &str, disk: &str| Layer::Partition {
            name: name.into(),
            disk: disk.into(),
        };
        let raid = TargetStack::of(
            "/dev/md0",
            vec![
                (
                    0,
                    Layer::Raid {
                        name: "md0".into(),
                        level: Some("raid1".into()),
                    },
                ),
                (1, partition("sda1", "sda")),
                (2, disk("sda")),
                (1, partition("sdb1", "sdb")),
                (2, disk("sdb")),
            ],
        );
        assert_eq!(
            stack_line(&raid),
            "stack of /dev/md0: md0 (raid1) → [sda1 → sda + sdb1 → sdb]"
        );
        assert!(stack_text(&raid).contains(
            "  md0: md RAID (raid1), over the devices below\n    sda1: partition of sda\n      sda: disk\n"
        ));
    }

    #[test]
    fn stacks_without_a_device_say_where_the_data_goes() {
        let one = |layer: Layer| stack_text(&TargetStack::of("/t", vec![(0, layer)]));
        assert_eq!(
            one(Layer::Memory {
                fs_type: "tmpfs".into(),
                mount_point: "/dev/shm".into()
            }),
            "/t\n  tmpfs at /dev/shm: no device, the data lives in RAM\n"
        );
        assert!(one(Layer::Fuse {
            fs_type: "fuse.sshfs".into(),
            mount_point: "/mnt/s".into(),
            source: "me@there:/".into()
        })
        .ends_with("a user-space filesystem (FUSE): what reaches storage is up to its daemon\n"));
        assert!(one(Layer::Network {
            fs_type: "nfs4".into(),
            mount_point: "/mnt/n".into(),
            source: "host:/export".into()
        })
        .ends_with("on another machine (nfs4 from host:/export)\n"));
        assert_eq!(
            one(Layer::Zram {
                name: "zram0".into(),
                algorithm: Some("lzo-rle".into())
            }),
            "/t\n  zram0: compressed RAM disk (lzo-rle)\n"
        );
        assert_eq!(
            stack_line(&TargetStack::of("/t", vec![])),
            "stack of /t: unknown"
        );
    }
}
