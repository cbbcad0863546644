//! Block devices (loop devices over /dev/shm): need root; skipped with a reason otherwise.

use crate::support::{iolens, json, stderr, write_to_device, LoopDevice};

#[test]
fn direct_random_writes_to_a_loop_device_with_libaio() {
    let Some(dev) = LoopDevice::create(64 << 20) else {
        return;
    };
    let out = iolens(&[
        "run",
        "--output-format=json",
        "--name=w",
        &format!("--filename={}", dev.path()),
        "--rw=randwrite",
        "--bs=4k",
        "--direct=1",
        "--ioengine=libaio",
        "--iodepth=16",
        "--numjobs=2",
        "--thread",
        "--norandommap",
        "--group_reporting",
        "--runtime=1",
        "--time_based",
    ]);
    let report = json(&out);
    let write = &report["jobs"][0]["write"];
    assert!(write["total_ios"].as_u64().unwrap() > 100, "{write}");
    let disk = report["disk_util"].as_array().unwrap();
    assert!(
        disk.iter()
            .any(|d| d["write_ios"].as_u64().unwrap_or(0) > 0),
        "the loop device saw no writes: {disk:?}"
    );
}

/// What a test writes on a blank device to make it hold something, and what
/// the refusal must then name.
struct Holding {
    /// A shell command making it; `$DEV` is the device, `$DIR` an empty directory.
    make: &'static str,
    /// The program the command needs (skipped with a reason when missing).
    needs: &'static str,
    named: &'static str,
}

#[test]
fn a_device_holding_anything_blkid_knows_is_not_written_without_the_flag() {
    // Before libblkid decided, a 13-entry table let minix, bfs, cramfs and squashfs
    // through; every kind here is one the system's own library recognises.
    let kinds = [
        Holding { make: "mkfs.ext4 -q -F $DEV", needs: "mkfs.ext4", named: "a filesystem (ext4)" },
        Holding { make: "mkfs.minix $DEV", needs: "mkfs.minix", named: "a filesystem (minix)" },
        Holding { make: "mkfs.bfs $DEV", needs: "mkfs.bfs", named: "a filesystem (bfs)" },
        Holding { make: "mkfs.cramfs $DIR $DEV", needs: "mkfs.cramfs", named: "a filesystem (cramfs)" },
        Holding {
            make: "mksquashfs $DIR $DIR.img -noappend -quiet && dd if=$DIR.img of=$DEV conv=notrunc status=none",
            needs: "mksquashfs",
            named: "a filesystem (squashfs)",
        },
        Holding { make: "mkswap $DEV", needs: "mkswap", named: "swap space" },
        // A DOS partition table with one partition, as fdisk would write it.
        Holding {
            make: r"printf '\0\0\0\0\203\0\0\0\0\10\0\0\0\40\0\0' | dd of=$DEV bs=1 seek=446 conv=notrunc status=none && printf '\125\252' | dd of=$DEV bs=1 seek=510 conv=notrunc status=none",
            needs: "dd",
            named: "a partition table (dos)",
        },
    ];
    for kind in kinds {
        if !program_exists(kind.needs) {
            eprintln!("skipped {}: {} is not installed", kind.named, kind.needs);
            continue;
        }
        let Some(dev) = LoopDevice::create(16 << 20) else {
            return;
        };
        let dir = crate::support::scratch();
        std::fs::create_dir(dir.path().join("empty")).unwrap();
        let made = std::process::Command::new("sh")
            .args(["-c", kind.make])
            .env("DEV", dev.path())
            .env("DIR", dir.path().join("empty"))
            .env("PATH", "/usr/sbin:/sbin:/usr/bin:/bin")
            .stdout(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        assert!(made, "could not make {} with `{}`", kind.named, kind.make);
        let before = std::fs::read(dev.backing()).unwrap();
        let out = write_to_device(dev.path(), &[]);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{}: {}",
            kind.named,
            stderr(&out)
        );
        assert!(
            stderr(&out).contains(&format!("the device holds {}", kind.named))
                && stderr(&out).contains("--allow-destructive"),
            "expected the refusal to name {}: {}",
            kind.named,
            stderr(&out)
        );
        assert!(
            std::fs::read(dev.backing()).unwrap() == before,
            "the guard let {} be overwritten",
            kind.named
        );
    }
}

#[test]
fn the_flag_lets_a_device_holding_a_filesystem_be_written() {
    let Some(dev) = LoopDevice::create(16 << 20) else {
        return;
    };
    if !program_exists("mkfs.ext4") {
        eprintln!("skipped: mkfs.ext4 is not installed");
        return;
    }
    let made = std::process::Command::new("mkfs.ext4")
        .args(["-q", "-F", dev.path()])
        .status();
    assert!(made.is_ok_and(|s| s.success()), "mkfs.ext4 failed");
    let out = write_to_device(dev.path(), &["--allow-device-write"]);
    assert!(out.status.success(), "{}", stderr(&out));
}

/// Whether `program` is on PATH or in /usr/sbin, /sbin.
fn program_exists(program: &str) -> bool {
    std::env::var("PATH")
        .unwrap_or_default()
        .split(':')
        .chain(["/usr/sbin", "/sbin"])
        .any(|dir| std::path::Path::new(dir).join(program).is_file())
}

#[test]
fn misaligned_direct_io_on_a_device_names_the_sector_size() {
    let Some(dev) = LoopDevice::create(16 << 20) else {
        return;
    };
    let out = iolens(&[
        "run",
        "--name=r",
        &format!("--filename={}", dev.path()),
        "--rw=randread",
        "--bs=256",
        "--direct=1",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("logical sector"), "{}", stderr(&out));
}

#[test]
fn randtrim_discards_on_a_loop_device() {
    let Some(dev) = LoopDevice::create(16 << 20) else {
        return;
    };
    let out = iolens(&[
        "run",
        "--output-format=json",
        "--name=t",
        &format!("--filename={}", dev.path()),
        "--rw=randtrim",
        "--bs=64k",
        "--size=4m",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let trim = &json(&out)["jobs"][0]["trim"];
    assert_eq!(trim["io_bytes"], 4 << 20, "{trim}");
    assert_eq!(trim["total_ios"], 64);
}

#[test]
fn the_signature_probe_leaves_no_page_of_the_device_cached() {
    // libblkid reads through the page cache; pages iolens itself put there would make a
    // direct-I/O run start polluted (seed 000), so they are dropped after the probe.
    if !crate::support::is_root() || !program_exists("mkfs.minix") {
        eprintln!("skipped: needs root and mkfs.minix");
        return;
    }
    let dir = crate::support::scratch();
    let image = dir.path().join("minix.img");
    std::fs::File::create(&image)
        .unwrap()
        .set_len(16 << 20)
        .unwrap();
    let made = std::process::Command::new("mkfs.minix")
        .arg(&image)
        .stdout(std::process::Stdio::null())
        .status();
    assert!(made.is_ok_and(|s| s.success()), "mkfs.minix failed");
    // Attached after mkfs: the new device starts with nothing cached.
    let Some(dev) = LoopDevice::attach(&image) else {
        return;
    };
    let out = iolens(&["doctor", dev.path()]);
    let text = crate::support::stdout(&out);
    assert!(
        text.contains("holds a filesystem (minix), found by blkid"),
        "{text}"
    );
    assert!(
        text.contains("page cache: no pages of the target are cached"),
        "{text}"
    );
}
