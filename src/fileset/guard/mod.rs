//! The destructive-write guard: iolens never writes to a block device that
//! holds anything the system recognises (a filesystem, a partition table, a
//! RAID/LVM member, an encrypted volume, swap) or that is in use (mounted in any
//! mount namespace, a mounted partition, swap, held by device-mapper/md),
//! unless told to.

mod in_use;
mod signature;

use super::TargetError;
use std::path::Path;

pub(crate) use in_use::device_in_use;
pub(crate) use signature::probe as read_signature;

/// What `--allow-destructive` and `allow_mounted_write=1` lift.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct GuardOverrides {
    /// `--allow-destructive` (alias `--allow-device-write`): write whatever the device holds.
    pub destructive: bool,
    /// fio's `allow_mounted_write=1`: write even when the device is in use.
    pub mounted: bool,
}

/// Refuse to write to a device that is in use or holds recognisable data.
pub(crate) fn check_device_is_free_to_overwrite(
    path: &Path,
    allow: GuardOverrides,
) -> Result<(), TargetError> {
    if allow.destructive {
        return Ok(());
    }
    let refuse = |why: &str, flag: &str| {
        TargetError::Config(format!(
            "{}: {why}; writing would destroy it (pass {flag} to write anyway)",
            path.display()
        ))
    };
    if !allow.mounted {
        if let Some(use_) = device_in_use(path) {
            return Err(refuse(
                &use_,
                "--allow-destructive, or allow_mounted_write=1",
            ));
        }
    }
    match read_signature(path).map_err(|e| TargetError::io(path, "probe what it holds", e))? {
        Some(what) => Err(refuse(
            &format!("the device holds {what}"),
            "--allow-destructive",
        )),
        None => Ok(()),
    }
}
