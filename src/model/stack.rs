//! The I/O stack of a target: every layer a byte passes through from the file
//! or device a job opens down to what finally stores it (a disk, RAM, a FUSE
//! daemon, a server). Walked once per run (`observe::stack`), printed by
//! `doctor`, recorded in the run's environment and read by the diagnose rules
//! so a finding can name the layer that explains a gap.

use serde::{Deserialize, Serialize};

/// The stack under one target, top (what the job opens) first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct TargetStack {
    pub target: String,
    /// Depth-first, top first; a layer's `depth` is one more than the layer
    /// above it (a loop device's backing file starts again with its filesystem).
    pub layers: Vec<StackLayer>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct StackLayer {
    pub depth: u32,
    #[serde(flatten)]
    pub layer: Layer,
}

/// One layer of a stack.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum Layer {
    /// A filesystem on a block device.
    Filesystem {
        fs_type: String,
        mount_point: String,
        source: String,
        /// Mount options that change the data path (`data=journal`,
        /// `compress=zstd:3`, `dax`, `sync`, …), as the kernel lists them.
        data_path_options: Vec<String>,
    },
    /// A filesystem with no device: its data lives in RAM (tmpfs, ramfs, hugetlbfs).
    Memory {
        fs_type: String,
        mount_point: String,
    },
    /// A filesystem served by a user-space daemon (FUSE).
    Fuse {
        fs_type: String,
        mount_point: String,
        source: String,
    },
    /// A filesystem on another machine (NFS, CIFS, Ceph, 9p, …).
    Network {
        fs_type: String,
        mount_point: String,
        source: String,
    },
    /// Any other filesystem without a block device (overlay, proc, …).
    Virtual {
        fs_type: String,
        mount_point: String,
    },
    /// A partition of `disk`.
    Partition { name: String, disk: String },
    /// A device-mapper device (`dm_name`: LVM volume, crypt, thin, …); its members follow.
    DeviceMapper { name: String, dm_name: String },
    /// An md RAID device; its members follow.
    Raid { name: String, level: Option<String> },
    /// A loop device over `backing_file`; the file's own stack follows.
    Loop {
        name: String,
        /// `loop/dio`: the loop device reads and writes its backing file with
        /// O_DIRECT; without it every I/O goes through the backing file's page cache.
        direct_io: bool,
        backing_file: String,
    },
    /// A compressed RAM block device.
    Zram {
        name: String,
        algorithm: Option<String>,
    },
    /// A disk: what finally stores the bytes.
    Disk {
        name: String,
        model: Option<String>,
        rotational: Option<bool>,
    },
}

/// Where a stack finally stores its bytes when that is not a device of this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NoDevice {
    Memory,
    Fuse,
    Network,
    Virtual,
}

impl Layer {
    /// The block device's name under /sys/block for layers that are block devices.
    pub(crate) fn device_name(&self) -> Option<&str> {
        match self {
            Layer::Partition { name, .. }
            | Layer::DeviceMapper { name, .. }
            | Layer::Raid { name, .. }
            | Layer::Loop { name, .. }
            | Layer::Zram { name, .. }
            | Layer::Disk { name, .. } => Some(name),
            _ => None,
        }
    }

    /// A filesystem's type, for the filesystem layers.
    pub(crate) fn fs_type(&self) -> Option<&str> {
        match self {
            Layer::Filesystem { fs_type, .. }
            | Layer::Memory { fs_type, .. }
            | Layer::Fuse { fs_type, .. }
            | Layer::Network { fs_type, .. }
            | Layer::Virtual { fs_type, .. } => Some(fs_type),
            _ => None,
        }
    }

    /// What stores the data when this layer is a filesystem without a device.
    pub(crate) fn no_device(&self) -> Option<NoDevice> {
        match self {
            Layer::Memory { .. } => Some(NoDevice::Memory),
            Layer::Fuse { .. } => Some(NoDevice::Fuse),
            Layer::Network { .. } => Some(NoDevice::Network),
            Layer::Virtual { .. } => Some(NoDevice::Virtual),
            _ => None,
        }
    }
}

impl TargetStack {
    /// The first layer: the target's own filesystem, or the device itself.
    pub(crate) fn top(&self) -> Option<&Layer> {
        self.layers.first().map(|l| &l.layer)
    }

    /// The target's own filesystem stores its data without a local device.
    pub(crate) fn top_has_no_device(&self) -> Option<NoDevice> {
        self.top().and_then(Layer::no_device)
    }

    #[cfg(test)]
    /// Loop devices in the stack that go through their backing file's page cache.
    pub(crate) fn buffered_loops(&self) -> impl Iterator<Item = &StackLayer> {
        self.layers.iter().filter(|l| {
            matches!(
                l.layer,
                Layer::Loop {
                    direct_io: false,
                    ..
                }
            )
        })
    }

    /// The layers below `index` (deeper than it, until the stack comes back to its depth).
    pub(crate) fn below(&self, index: usize) -> &[StackLayer] {
        let Some(at) = self.layers.get(index) else {
            return &[];
        };
        let rest = &self.layers[index + 1..];
        let end = rest
            .iter()
            .position(|l| l.depth <= at.depth)
            .unwrap_or(rest.len());
        &rest[..end]
    }
}

/// Builders for the tests of the modules that walk, print and check stacks.
#[cfg(test)]
impl TargetStack {
    pub(crate) fn of(target: &str, layers: Vec<(u32, Layer)>) -> TargetStack {
        TargetStack {
            target: target.into(),
            layers: layers
                .into_iter()
                .map(|(depth, layer)| StackLayer { depth, layer })
                .collect(),
        }
    }
}

#[cfg(test)]
impl Layer {
    pub(crate) fn filesystem(
        fs_type: &str,
        mount_point: &str,
        source: &str,
        data_path_options: &[&str],
    ) -> Layer {
        Layer::Filesystem {
            fs_type: fs_type.into(),
            mount_point: mount_point.into(),
            source: source.into(),
            data_path_options: data_path_options.iter().map(|o| o.to_string()).collect(),
        }
    }
}

/// `/sys/block/zramN/mm_stat` at one moment, bytes (the kernel's first eight fields).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct ZramStat {
    /// Data written to the device and stored, before compression.
    pub orig_data_bytes: u64,
    /// The same after compression.
    pub compr_data_bytes: u64,
    /// Memory the device uses, allocator overhead included.
    pub mem_used_bytes: u64,
    /// Pages that held one repeated value (zeros, mostly): stored as that value, no memory.
    pub same_pages: u64,
    /// Pages stored uncompressed (they did not compress).
    pub huge_pages: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layer(depth: u32, layer: Layer) -> StackLayer {
        StackLayer { depth, layer }
    }

    fn loop_over_ext4() -> TargetStack {
        TargetStack {
            target: "/mnt/f".into(),
            layers: vec![
                layer(
                    0,
                    Layer::Filesystem {
                        fs_type: "ext4".into(),
                        mount_point: "/mnt".into(),
                        source: "/dev/loop3".into(),
                        data_path_options: vec![],
                    },
                ),
                layer(
                    1,
                    Layer::Loop {
                        name: "loop3".into(),
                        direct_io: false,
                        backing_file: "/data/img".into(),
                    },
                ),
                layer(
                    2,
                    Layer::Filesystem {
                        fs_type: "xfs".into(),
                        mount_point: "/data".into(),
                        source: "/dev/vda".into(),
                        data_path_options: vec![],
                    },
                ),
                layer(
                    3,
                    Layer::Disk {
                        name: "vda".into(),
                        model: None,
                        rotational: Some(false),
                    },
                ),
            ],
        }
    }

    #[test]
    fn the_layers_below_a_loop_are_its_backing_files_stack() {
        let stack = loop_over_ext4();
        assert_eq!(stack.below(1).len(), 2);
        assert_eq!(stack.below(3).len(), 0);
        assert_eq!(stack.buffered_loops().count(), 1);
        assert_eq!(stack.top_has_no_device(), None);
        assert_eq!(stack.layers[3].layer.device_name(), Some("vda"));
    }

    #[test]
    fn a_layer_serialises_with_its_kind_beside_its_fields() {
        let json = serde_json::to_value(loop_over_ext4()).unwrap();
        assert_eq!(json["layers"][1]["kind"], "loop");
        assert_eq!(json["layers"][1]["direct_io"], false);
        assert_eq!(json["layers"][1]["depth"], 1);
        let back: TargetStack = serde_json::from_value(json).unwrap();
        assert_eq!(back, loop_over_ext4());
    }
}
