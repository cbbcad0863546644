//! The stack ledger in the normal text report's system block: for each job,
//! a short table of where its bytes went, from what it asked for down to each
//! device, then the other processes that moved bytes during the run.

use crate::model::{JobLedger, Observations};
use crate::units::{human_bytes, ByteUnits::BToTib};
use std::fmt::{self, Write};

/// Write every job's ledger and the busiest other processes; nothing without a ledger.
pub(super) fn write_ledger(out: &mut String, obs: &Observations) -> fmt::Result {
    for ledger in &obs.ledger {
        write_job(out, ledger)?;
    }
    if obs.ledger.is_empty() || obs.other_processes.is_empty() {
        return Ok(());
    }
    let others: Vec<String> = obs
        .other_processes
        .iter()
        .take(3)
        .map(|p| {
            let name = if p.comm.is_empty() { "?" } else { &p.comm };
            format!(
                "{name} (pid {}) read {}, wrote {}",
                p.pid,
                human_bytes(p.read_bytes, BToTib),
                human_bytes(p.write_bytes, BToTib)
            )
        })
        .collect();
    writeln!(
        out,
        "  other processes' storage I/O during the run (any device): {}",
        others.join("; ")
    )
}

/// The first column's least width: "caused below the page cache" and room.
const FIRST_COLUMN: usize = 34;

fn write_job(out: &mut String, l: &JobLedger) -> fmt::Result {
    writeln!(
        out,
        "  where the bytes of job '{}' went ({:.1}-{:.1} s):",
        l.job,
        l.from_ns as f64 / 1e9,
        l.to_ns as f64 / 1e9
    )?;
    // The first column fits the longest device row ("loop3 (holds /mnt/x/f)").
    let width = l
        .layers
        .iter()
        .map(|d| d.device.chars().count() + d.via.chars().count() + 3)
        .max()
        .unwrap_or(0)
        .max(FIRST_COLUMN);
    let row = |out: &mut String, name: &str, read: u64, written: u64, note: &str| {
        writeln!(
            out,
            "    {name:<width$} {:>10} {:>10}{}{note}",
            human_bytes(read, BToTib),
            human_bytes(written, BToTib),
            if note.is_empty() { "" } else { "  " }
        )
    };
    writeln!(
        out,
        "    {:<width$} {:>10} {:>10}",
        "layer", "read", "written"
    )?;
    row(out, "the job", l.job_read_bytes, l.job_write_bytes, "")?;
    if let Some(caused) = l.caused {
        let mut notes = Vec::new();
        if let Some(served) = l.cache_served_bytes.filter(|&s| s > 0) {
            notes.push(format!("page cache served {}", human_bytes(served, BToTib)));
        }
        if let Some(dirty) = l.dirty_at_end_bytes.filter(|&d| d > 0) {
            notes.push(format!(
                "{} still dirty at the end",
                human_bytes(dirty, BToTib)
            ));
        }
        if caused.cancelled_write_bytes > 0 {
            notes.push(format!(
                "{} dirtied then cancelled",
                human_bytes(caused.cancelled_write_bytes, BToTib)
            ));
        }
        row(
            out,
            "caused below the page cache",
            caused.read_bytes,
            caused.write_bytes,
            &notes.join(", "),
        )?;
    }
    for layer in &l.layers {
        let mut notes = Vec::new();
        if layer.flush_ios > 0 {
            notes.push(format!("{} flushes", layer.flush_ios));
        }
        if layer.discard_bytes > 0 {
            notes.push(format!(
                "{} discarded",
                human_bytes(layer.discard_bytes, BToTib)
            ));
        }
        let merges = layer.read_merges + layer.write_merges;
        if merges > 0 {
            notes.push(format!("{merges} merges"));
        }
        let name = format!("{} ({})", layer.device, layer.via);
        row(
            out,
            &name,
            layer.read_bytes,
            layer.write_bytes,
            &notes.join(", "),
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{LayerTraffic, ProcessIo, TaskIo};

    #[test]
    fn a_jobs_table_runs_from_its_bytes_to_each_device() {
        let obs = Observations {
            ledger: vec![JobLedger {
                job: "w".into(),
                from_ns: 100_000_000,
                to_ns: 3_100_000_000,
                job_write_bytes: 512 << 20,
                caused: Some(TaskIo {
                    write_bytes: 512 << 20,
                    ..Default::default()
                }),
                dirty_at_end_bytes: Some(500 << 20),
                layers: vec![LayerTraffic {
                    device: "loop3".into(),
                    via: "holds /mnt/f".into(),
                    write_bytes: 56 << 10,
                    flush_ios: 2,
                    ..Default::default()
                }],
                ..Default::default()
            }],
            other_processes: vec![ProcessIo {
                pid: 42,
                comm: "dd".into(),
                write_bytes: 64 << 20,
                ..Default::default()
            }],
            ..Default::default()
        };
        let mut out = String::new();
        write_ledger(&mut out, &obs).unwrap();
        let lines: Vec<&str> = out.lines().map(str::trim_end).collect();
        assert_eq!(lines[0], "  where the bytes of job 'w' went (0.1-3.1 s):");
        assert!(lines[2].contains("the job") && lines[2].ends_with("512.0 MiB"));
        assert!(
            lines[3].ends_with("512.0 MiB  500.0 MiB still dirty at the end"),
            "{out}"
        );
        assert!(lines[4].starts_with("    loop3 (holds /mnt/f)"), "{out}");
        assert!(lines[4].ends_with("56.0 KiB  2 flushes"), "{out}");
        assert!(lines[5].contains("dd (pid 42) read 0 B, wrote 64.0 MiB"));
    }

    #[test]
    fn a_long_device_row_widens_the_first_column() {
        let via = "holds /mnt/a-rather-long-directory-name/f.dat";
        let obs = Observations {
            ledger: vec![JobLedger {
                job: "r".into(),
                job_read_bytes: 1 << 20,
                layers: vec![LayerTraffic {
                    device: "loop3".into(),
                    via: via.into(),
                    read_bytes: 1 << 20,
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        };
        let mut out = String::new();
        write_ledger(&mut out, &obs).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        // header, the job's row and the device's row end at the same column
        assert_eq!(lines[1].len(), lines[2].len(), "{out}");
        assert_eq!(lines[2].len(), lines[3].len(), "{out}");
        assert!(lines[3].contains(via));
    }

    #[test]
    fn no_ledger_no_lines() {
        let mut out = String::new();
        write_ledger(&mut out, &Observations::default()).unwrap();
        assert!(out.is_empty());
    }
}
