//! The I/O stack under a target (`model::TargetStack`), walked from the file or
//! block device a job opens down to what stores its bytes: the file's
//! filesystem (from `/proc/self/mountinfo`), then through `/sys` partitions,
//! device-mapper and md members, loop devices (and their backing file's own
//! stack), zram, and the disks. Also zram's `mm_stat`.

use super::diskstats::{block_dir, disk_of_partition, split_dev};
use super::environment::{mount_of, read_value, selected_choice};
use crate::model::{Layer, StackLayer, TargetStack, ZramStat};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// The stack under `path` (a file, a directory or a block device node) on this machine.
pub(crate) fn walk(path: &Path) -> TargetStack {
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let host = Host {
        sys: Path::new("/sys"),
        mountinfo: &mountinfo,
        stat: &stat,
    };
    walk_on(&host, path)
}

/// Parse `/sys/block/zramN/mm_stat`: orig_data_size compr_data_size
/// mem_used_total mem_limit mem_used_max same_pages pages_compacted
/// huge_pages …; kernels before 4.19 stop before huge_pages.
pub(crate) fn parse_mm_stat(text: &str) -> Option<ZramStat> {
    let fields: Vec<u64> = text
        .split_whitespace()
        .map(str::parse)
        .collect::<Result<_, _>>()
        .ok()?;
    if fields.len() < 6 {
        return None;
    }
    Some(ZramStat {
        orig_data_bytes: fields[0],
        compr_data_bytes: fields[1],
        mem_used_bytes: fields[2],
        same_pages: fields[5],
        huge_pages: fields.get(7).copied().unwrap_or(0),
    })
}

/// What a path is, as far as the walk needs it.
#[derive(Debug, Clone, PartialEq)]
enum Node {
    /// A file or directory on the filesystem of device `dev`; `canonical` is its path with links resolved.
    File { dev: (u64, u64), canonical: PathBuf },
    /// A block device node for device `dev`.
    BlockDevice { dev: (u64, u64) },
}

fn stat(path: &Path) -> Option<Node> {
    let meta = std::fs::metadata(path).ok()?;
    if meta.file_type().is_block_device() {
        return Some(Node::BlockDevice {
            dev: split_dev(meta.rdev()),
        });
    }
    Some(Node::File {
        dev: split_dev(meta.dev()),
        canonical: std::fs::canonicalize(path).ok()?,
    })
}

/// Where the walk reads the machine: a sysfs root, the mount table and stat,
/// so the tests can hand it a fake machine.
struct Host<'a> {
    sys: &'a Path,
    mountinfo: &'a str,
    stat: &'a dyn Fn(&Path) -> Option<Node>,
}

/// Loop over a file on a dm over a partition of a loop…: deeper than real
/// stacks go, and a bound against a loop device backed by a file on itself.
const MAX_DEPTH: u32 = 16;

fn walk_on(host: &Host, path: &Path) -> TargetStack {
    let mut layers = Vec::new();
    walk_path(host, path, 0, &mut layers);
    TargetStack {
        target: path.display().to_string(),
        layers,
    }
}

/// The layers under a file or block device node, from `depth` down.
fn walk_path(host: &Host, path: &Path, depth: u32, layers: &mut Vec<StackLayer>) {
    if depth > MAX_DEPTH {
        return;
    }
    match (host.stat)(path) {
        Some(Node::BlockDevice { dev }) => {
            if let Some(dir) = block_dir(host.sys, dev) {
                walk_device(host, &dir, depth, layers);
            }
        }
        Some(Node::File { dev, canonical }) => {
            walk_filesystem(host, dev, &canonical, depth, layers)
        }
        None => {}
    }
}

/// The filesystem holding a file of device `dev`, then what stores its data.
fn walk_filesystem(
    host: &Host,
    dev: (u64, u64),
    canonical: &Path,
    depth: u32,
    layers: &mut Vec<StackLayer>,
) {
    let Some(mount) = mount_of(host.mountinfo, dev, canonical) else {
        return;
    };
    let at = |layer| StackLayer { depth, layer };
    let fs_type = mount.fs_type.clone();
    let mount_point = mount.mount_point.clone();
    if is_in_memory(&fs_type) {
        layers.push(at(Layer::Memory {
            fs_type,
            mount_point,
        }));
        return;
    }
    if is_network(&fs_type) {
        layers.push(at(Layer::Network {
            fs_type,
            mount_point,
            source: mount.source,
        }));
        return;
    }
    let device = device_of_mount(host, dev, &mount.source);
    if fs_type == "fuse" || fs_type.starts_with("fuse.") || fs_type == "fuseblk" {
        layers.push(at(Layer::Fuse {
            fs_type,
            mount_point,
            source: mount.source,
        }));
    } else if device.is_some() {
        layers.push(at(Layer::Filesystem {
            data_path_options: data_path_options(&mount.mount_options),
            fs_type,
            mount_point,
            source: mount.source,
        }));
    } else {
        layers.push(at(Layer::Virtual {
            fs_type,
            mount_point,
        }));
    }
    // fuseblk (ntfs-3g, exfat-fuse) is a daemon over a real device: walk it too.
    if let Some(dir) = device {
        walk_device(host, &dir, depth + 1, layers);
    }
}

/// The /sys directory of the device a filesystem is on: its st_dev's, or, for
/// filesystems that give their files an anonymous st_dev (btrfs), its source's.
fn device_of_mount(host: &Host, dev: (u64, u64), source: &str) -> Option<PathBuf> {
    block_dir(host.sys, dev).or_else(|| {
        // Only a device node: other sources (`overlay`, `server:/x`) name no path here.
        let source = Path::new(source);
        if !source.starts_with("/dev") {
            return None;
        }
        match (host.stat)(source)? {
            Node::BlockDevice { dev } => block_dir(host.sys, dev),
            Node::File { .. } => None,
        }
    })
}

/// Filesystems whose data lives in RAM.
fn is_in_memory(fs_type: &str) -> bool {
    matches!(fs_type, "tmpfs" | "ramfs" | "hugetlbfs" | "devtmpfs")
}

/// Filesystems whose data lives on another machine.
fn is_network(fs_type: &str) -> bool {
    matches!(
        fs_type,
        "nfs"
            | "nfs4"
            | "cifs"
            | "smb3"
            | "smbfs"
            | "ceph"
            | "9p"
            | "glusterfs"
            | "lustre"
            | "virtiofs"
            | "afs"
            | "beegfs"
    )
}

/// The mount and filesystem options (mountinfo's, comma-separated) that change
/// where or how a file's data bytes travel, each once, in the kernel's order.
/// Left out: `data=ordered` (ext4's default), `dirsync` and
/// `journal_async_commit` (they change metadata writes only), `ro`.
fn data_path_options(options: &str) -> Vec<String> {
    let mut kept: Vec<String> = Vec::new();
    for option in options.split(',') {
        let changes_data_path = matches!(
            option,
            // ext4: data goes through the journal first, so every block is written twice.
            "data=journal"
            // ext4: data is no longer written before the commit of the metadata that points at it.
            | "data=writeback"
            // Every write waits for the device, as with O_SYNC.
            | "sync"
            // No cache flushes: fsync returns before the device's cache holds the data durably.
            | "nobarrier" | "barrier=0"
            // btrfs: overwrites in place, without copy-on-write, checksums or compression.
            | "nodatacow"
            // btrfs: no checksums to compute on write or verify on read.
            | "nodatasum"
            // btrfs: small random writes trigger rewrites of the extents around them.
            | "autodefrag"
            // Loads and stores go straight to persistent memory, past the page cache.
            | "dax" | "dax=always" | "dax=inode"
        )
            // btrfs: data is compressed (CPU on the way, fewer bytes on the device).
            || matches!(
                option.split_once('=').map_or(option, |(name, _)| name),
                "compress" | "compress-force"
            );
        if changes_data_path && !kept.iter().any(|k| k == option) {
            kept.push(option.to_string());
        }
    }
    kept
}

/// A block device's layer from its /sys directory `dir` (links resolved),
/// then the layers below it.
fn walk_device(host: &Host, dir: &Path, depth: u32, layers: &mut Vec<StackLayer>) {
    if depth > MAX_DEPTH {
        return;
    }
    let Some(name) = dir.file_name().and_then(|n| n.to_str()).map(str::to_string) else {
        return;
    };
    let at = |layer| StackLayer { depth, layer };
    if let Some(disk_dir) = disk_of_partition(dir) {
        let disk = disk_dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        layers.push(at(Layer::Partition { name, disk }));
        walk_device(host, disk_dir, depth + 1, layers);
    } else if let Some(dm_name) = read_value(dir.join("dm/name")) {
        layers.push(at(Layer::DeviceMapper { name, dm_name }));
        walk_members(host, dir, depth + 1, layers);
    } else if dir.join("md").is_dir() {
        let level = read_value(dir.join("md/level"));
        layers.push(at(Layer::Raid { name, level }));
        walk_members(host, dir, depth + 1, layers);
    } else if let Some(backing_file) = read_value(dir.join("loop/backing_file")) {
        let direct_io = read_value(dir.join("loop/dio")).as_deref() == Some("1");
        layers.push(at(Layer::Loop {
            name,
            direct_io,
            backing_file: backing_file.clone(),
        }));
        walk_path(host, Path::new(&backing_file), depth + 1, layers);
    } else if name.starts_with("zram") || dir.join("comp_algorithm").exists() {
        let algorithm = read_value(dir.join("comp_algorithm")).and_then(|a| selected_choice(&a));
        layers.push(at(Layer::Zram { name, algorithm }));
    } else {
        layers.push(at(Layer::Disk {
            name,
            model: read_value(dir.join("device/model")),
            rotational: read_value(dir.join("queue/rotational")).map(|r| r != "0"),
        }));
    }
}

/// The devices a dm or md device is built on (`slaves/`), in name order.
fn walk_members(host: &Host, dir: &Path, depth: u32, layers: &mut Vec<StackLayer>) {
    let mut members: Vec<PathBuf> = std::fs::read_dir(dir.join("slaves"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| std::fs::canonicalize(e.path()).ok())
        .collect();
    members.sort();
    for member in members {
        walk_device(host, &member, depth, layers);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// A fake machine: a sysfs tree in a temporary directory, a mount table,
    /// and what stat says of the paths the walk asks about.
    struct Fake {
        sys: tempfile::TempDir,
        mountinfo: String,
        nodes: HashMap<PathBuf, Node>,
    }

    impl Fake {
        fn new() -> Fake {
            Fake {
                sys: tempfile::tempdir().unwrap(),
                mountinfo: String::new(),
                nodes: HashMap::new(),
            }
        }

        /// A block device at `place` (below /sys/devices) numbered `dev`, with its files.
        fn device(&mut self, place: &str, dev: (u64, u64), files: &[(&str, &str)]) -> PathBuf {
            let dir = self.sys.path().join("devices").join(place);
            for (file, text) in files {
                let path = dir.join(file);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(path, text).unwrap();
            }
            std::fs::create_dir_all(&dir).unwrap();
            let links = self.sys.path().join("dev/block");
            std::fs::create_dir_all(&links).unwrap();
            std::os::unix::fs::symlink(&dir, links.join(format!("{}:{}", dev.0, dev.1))).unwrap();
            let node = format!("/dev/{}", dir.file_name().unwrap().to_str().unwrap());
            self.nodes.insert(node.into(), Node::BlockDevice { dev });
            dir
        }

        /// `member` (a device directory) under `slaves/` of `dir`.
        fn member(&self, dir: &Path, member: &Path) {
            std::fs::create_dir_all(dir.join("slaves")).unwrap();
            let name = member.file_name().unwrap();
            std::os::unix::fs::symlink(member, dir.join("slaves").join(name)).unwrap();
        }

        fn mount(&mut self, dev: (u64, u64), mount_point: &str, fs: &str) {
            let (major, minor) = dev;
            self.mountinfo.push_str(&format!(
                "1 1 {major}:{minor} / {mount_point} rw,relatime - {fs}\n"
            ));
        }

        fn file(&mut self, path: &str, dev: (u64, u64)) {
            let canonical = PathBuf::from(path);
            self.nodes
                .insert(path.into(), Node::File { dev, canonical });
        }

        fn walk(&self, path: &str) -> Vec<(u32, Layer)> {
            let stat = |p: &Path| self.nodes.get(p).cloned();
            let host = Host {
                sys: self.sys.path(),
                mountinfo: &self.mountinfo,
                stat: &stat,
            };
            let stack = walk_on(&host, Path::new(path));
            assert_eq!(stack.target, path);
            stack
                .layers
                .into_iter()
                .map(|l| (l.depth, l.layer))
                .collect()
        }
    }

    fn disk(name: &str, model: Option<&str>, rotational: bool) -> Layer {
        Layer::Disk {
            name: name.into(),
            model: model.map(str::to_string),
            rotational: Some(rotational),
        }
    }

    fn partition(name: &str, disk: &str) -> Layer {
        Layer::Partition {
            name: name.into(),
            disk: disk.into(),
        }
    }

    #[test]
    fn ext4_on_a_partition_of_a_disk() {
        let mut fake = Fake::new();
        let rotating = [
            ("device/model", "QEMU HARDDISK   \n"),
            ("queue/rotational", "1\n"),
        ];
        fake.device("pci/block/sda", (8, 0), &rotating);
        fake.device("pci/block/sda/sda1", (8, 1), &[("partition", "1\n")]);
        fake.mount((8, 1), "/mnt/x", "ext4 /dev/sda1 rw,data=journal,commit=5");
        fake.file("/mnt/x/f.dat", (8, 1));
        assert_eq!(
            fake.walk("/mnt/x/f.dat"),
            [
                (
                    0,
                    Layer::filesystem("ext4", "/mnt/x", "/dev/sda1", &["data=journal"])
                ),
                (1, partition("sda1", "sda")),
                (2, disk("sda", Some("QEMU HARDDISK"), true)),
            ]
        );
    }

    #[test]
    fn a_loop_device_without_direct_io_leads_to_its_backing_files_stack() {
        let mut fake = Fake::new();
        fake.device("pci/block/vda", (254, 0), &[("queue/rotational", "0\n")]);
        let backing = [("loop/backing_file", "/data/img\n"), ("loop/dio", "0\n")];
        fake.device("virtual/block/loop3", (7, 3), &backing);
        fake.mount((254, 0), "/data", "xfs /dev/vda rw,attr2,inode64");
        fake.mount((7, 3), "/mnt/x", "ext4 /dev/loop3 rw,data=ordered");
        fake.file("/mnt/x/f.dat", (7, 3));
        fake.file("/data/img", (254, 0));
        assert_eq!(
            fake.walk("/mnt/x/f.dat"),
            [
                (0, Layer::filesystem("ext4", "/mnt/x", "/dev/loop3", &[])),
                (
                    1,
                    Layer::Loop {
                        name: "loop3".into(),
                        direct_io: false,
                        backing_file: "/data/img".into(),
                    }
                ),
                (2, Layer::filesystem("xfs", "/data", "/dev/vda", &[])),
                (3, disk("vda", None, false)),
            ]
        );
    }

    #[test]
    fn a_loop_device_over_a_file_on_itself_stops() {
        let mut fake = Fake::new();
        fake.device(
            "virtual/block/loop0",
            (7, 0),
            &[("loop/backing_file", "/l/img")],
        );
        fake.mount((7, 0), "/l", "ext4 /dev/loop0 rw");
        fake.file("/l/img", (7, 0));
        let layers = fake.walk("/dev/loop0");
        assert!(layers.len() <= 2 * (MAX_DEPTH as usize + 1), "{layers:?}");
        assert!(matches!(layers[0].1, Layer::Loop { .. }));
    }

    #[test]
    fn tmpfs_fuse_and_nfs_have_no_device_below() {
        let mut fake = Fake::new();
        fake.mount((0, 23), "/dev/shm", "tmpfs tmpfs rw,size=1024k");
        fake.mount((0, 50), "/mnt/s", "fuse.sshfs me@there:/ rw,user_id=0");
        fake.mount((0, 51), "/mnt/n", "nfs4 host:/export rw,vers=4.2");
        fake.file("/dev/shm/f", (0, 23));
        fake.file("/mnt/s/f", (0, 50));
        fake.file("/mnt/n/f", (0, 51));
        assert_eq!(
            fake.walk("/dev/shm/f"),
            [(
                0,
                Layer::Memory {
                    fs_type: "tmpfs".into(),
                    mount_point: "/dev/shm".into()
                }
            )]
        );
        assert_eq!(
            fake.walk("/mnt/s/f"),
            [(
                0,
                Layer::Fuse {
                    fs_type: "fuse.sshfs".into(),
                    mount_point: "/mnt/s".into(),
                    source: "me@there:/".into()
                }
            )]
        );
        assert_eq!(
            fake.walk("/mnt/n/f"),
            [(
                0,
                Layer::Network {
                    fs_type: "nfs4".into(),
                    mount_point: "/mnt/n".into(),
                    source: "host:/export".into()
                }
            )]
        );
    }

    #[test]
    fn btrfs_with_compression_is_found_through_its_source() {
        let mut fake = Fake::new();
        fake.device("pci/block/vdb", (253, 16), &[("queue/rotational", "0")]);
        // btrfs lists an anonymous device number in the mount table and gives
        // a subvolume's files another one.
        let options = "rw,relatime,compress=zstd:3,ssd,space_cache=v2,subvolid=5,subvol=/";
        fake.mount((0, 40), "/b", &format!("btrfs /dev/vdb {options}"));
        fake.file("/b/f", (0, 41));
        assert_eq!(
            fake.walk("/b/f"),
            [
                (
                    0,
                    Layer::filesystem("btrfs", "/b", "/dev/vdb", &["compress=zstd:3"])
                ),
                (1, disk("vdb", None, false)),
            ]
        );
    }

    #[test]
    fn md_raid1_lists_both_members() {
        let mut fake = Fake::new();
        for (disk, major) in [("sda", 8), ("sdb", 8)] {
            let minor = if disk == "sda" { 0 } else { 16 };
            fake.device(&format!("pci/block/{disk}"), (major, minor), &[]);
            let part = format!("pci/block/{disk}/{disk}1");
            fake.device(&part, (major, minor + 1), &[("partition", "1")]);
        }
        let md = fake.device("virtual/block/md0", (9, 0), &[("md/level", "raid1\n")]);
        for member in ["sda/sda1", "sdb/sdb1"] {
            fake.member(&md, &fake.sys.path().join("devices/pci/block").join(member));
        }
        let unknown = |name: &str| Layer::Disk {
            name: name.into(),
            model: None,
            rotational: None,
        };
        assert_eq!(
            fake.walk("/dev/md0"),
            [
                (
                    0,
                    Layer::Raid {
                        name: "md0".into(),
                        level: Some("raid1".into())
                    }
                ),
                (1, partition("sda1", "sda")),
                (2, unknown("sda")),
                (1, partition("sdb1", "sdb")),
                (2, unknown("sdb")),
            ]
        );
    }

    #[test]
    fn device_mapper_and_zram() {
        let mut fake = Fake::new();
        let vdc = fake.device("pci/block/vdc", (253, 32), &[("queue/rotational", "1")]);
        let dm = fake.device("virtual/block/dm-0", (252, 0), &[("dm/name", "vg-data\n")]);
        fake.member(&dm, &vdc);
        let algorithms = [("comp_algorithm", "lzo [lz4] zstd\n")];
        fake.device("virtual/block/zram0", (251, 0), &algorithms);
        assert_eq!(
            fake.walk("/dev/dm-0"),
            [
                (
                    0,
                    Layer::DeviceMapper {
                        name: "dm-0".into(),
                        dm_name: "vg-data".into()
                    }
                ),
                (1, disk("vdc", None, true)),
            ]
        );
        assert_eq!(
            fake.walk("/dev/zram0"),
            [(
                0,
                Layer::Zram {
                    name: "zram0".into(),
                    algorithm: Some("lz4".into())
                }
            )]
        );
    }

    #[test]
    fn only_options_that_change_the_data_path_are_kept() {
        assert_eq!(
            data_path_options("rw,noatime,sync,rw,sync,dax=never,compress-force=lzo,nobarrier"),
            ["sync", "compress-force=lzo", "nobarrier"]
        );
        assert!(data_path_options("rw,relatime,data=ordered,dirsync,discard").is_empty());
    }

    #[test]
    fn parses_a_zram_mm_stat_line() {
        let line =
            "  8679424  2187337  2768896        0  2768896      329        0       17        0\n";
        let stat = parse_mm_stat(line).unwrap();
        assert_eq!(
            stat,
            ZramStat {
                orig_data_bytes: 8_679_424,
                compr_data_bytes: 2_187_337,
                mem_used_bytes: 2_768_896,
                same_pages: 329,
                huge_pages: 17,
            }
        );
        assert_eq!(parse_mm_stat("1 2 3"), None);
        assert_eq!(parse_mm_stat("1 2 3 4 5 x 7"), None);
    }

    #[test]
    fn walks_the_working_directory_of_this_machine() {
        let stack = walk(Path::new(env!("CARGO_MANIFEST_DIR")));
        assert!(stack.top().and_then(Layer::fs_type).is_some(), "{stack:?}");
    }
}
