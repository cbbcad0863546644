//! Block devices (loop devices over /dev/shm): need root; skipped with a reason otherwise.

use crate::support::{iolens, json, stderr, LoopDevice};

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

#[test]
fn a_device_holding_a_filesystem_is_not_written_without_the_flag() {
    let Some(dev) = LoopDevice::create(16 << 20) else {
        return;
    };
    // An ext4 superblock magic at byte 1080 is enough for the guard.
    {
        use std::os::unix::fs::FileExt;
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(dev.backing())
            .unwrap();
        f.write_at(&[0x53, 0xEF], 1080).unwrap();
    }
    let args = [
        "run",
        "--name=w",
        &format!("--filename={}", dev.path()),
        "--rw=write",
        "--bs=64k",
    ];
    let out = iolens(&args);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("ext2/3/4"), "{}", stderr(&out));
    let head = std::fs::read(dev.backing()).unwrap();
    assert_eq!(
        &head[1080..1082],
        &[0x53, 0xEF],
        "the guard let data be overwritten"
    );

    let mut forced = args.to_vec();
    forced.push("--allow-device-write");
    let out = iolens(&forced);
    assert!(out.status.success(), "{}", stderr(&out));
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
