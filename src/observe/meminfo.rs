//! `/proc/meminfo`: free, cached, dirty and under-writeback memory.

use crate::model::MemorySample;

/// Fill the meminfo fields of `sample` from the text of `/proc/meminfo` (values in KiB).
/// Lines it does not know are skipped; missing lines leave fields untouched.
pub(crate) fn parse_into(text: &str, sample: &mut MemorySample) {
    for line in text.lines() {
        let mut fields = line.split_whitespace();
        let (Some(key), Some(value)) = (fields.next(), fields.next()) else {
            continue;
        };
        let field = match key {
            "MemFree:" => &mut sample.free_bytes,
            "Cached:" => &mut sample.cached_bytes,
            "Dirty:" => &mut sample.dirty_bytes,
            "Writeback:" => &mut sample.writeback_bytes,
            _ => continue,
        };
        if let Ok(kib) = value.parse::<u64>() {
            *field = kib * 1024;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MEMINFO: &str = "MemTotal:       24683656 kB\n\
                           MemFree:        22179468 kB\n\
                           MemAvailable:   23000000 kB\n\
                           Buffers:           12000 kB\n\
                           Cached:          2043696 kB\n\
                           SwapCached:            0 kB\n\
                           Dirty:            200764 kB\n\
                           Writeback:            12 kB\n\
                           WritebackTmp:          0 kB\n\
                           HugePages_Total:       0\n";

    #[test]
    fn reads_the_four_fields_in_bytes() {
        let mut s = MemorySample::default();
        parse_into(MEMINFO, &mut s);
        assert_eq!(s.free_bytes, 22179468 * 1024);
        assert_eq!(s.cached_bytes, 2043696 * 1024);
        assert_eq!(s.dirty_bytes, 200764 * 1024);
        // WritebackTmp must not overwrite Writeback.
        assert_eq!(s.writeback_bytes, 12 * 1024);
        assert_eq!(s.pgpgin_kib, 0);
    }

    #[test]
    fn garbage_leaves_fields_alone() {
        let mut s = MemorySample {
            dirty_bytes: 7,
            ..Default::default()
        };
        parse_into("Dirty: lots kB\nnonsense\n\n", &mut s);
        assert_eq!(s.dirty_bytes, 7);
    }
}
