//! `/proc/vmstat`: the dirty-throttling thresholds and system-wide paging counters.

use crate::model::MemorySample;

/// Fill the vmstat fields of `sample` from the text of `/proc/vmstat`.
/// Thresholds are given in pages and stored in bytes.
pub(crate) fn parse_into(text: &str, page_size: u64, sample: &mut MemorySample) {
    let mut pgscan = 0;
    for line in text.lines() {
        let Some((key, value)) = line.split_once(' ') else {
            continue;
        };
        let Ok(value) = value.trim().parse::<u64>() else {
            continue;
        };
        match key {
            "nr_dirty_threshold" => sample.dirty_threshold_bytes = value * page_size,
            "nr_dirty_background_threshold" => {
                sample.dirty_background_threshold_bytes = value * page_size
            }
            "pgpgin" => sample.pgpgin_kib = value,
            "pgpgout" => sample.pgpgout_kib = value,
            "workingset_refault_file" => sample.workingset_refault_file = value,
            // Newer kernels add pgscan_khugepaged and pgscan_anon/_file splits; the
            // kswapd + direct pair is the total on every kernel that has them.
            "pgscan_kswapd" | "pgscan_direct" => pgscan += value,
            _ => {}
        }
    }
    sample.pgscan_pages = pgscan;
}

#[cfg(test)]
mod tests {
    use super::*;

    const VMSTAT: &str = "nr_free_pages 5544867\n\
                          nr_dirty 50191\n\
                          nr_writeback 0\n\
                          nr_dirty_threshold 1191045\n\
                          nr_dirty_background_threshold 594795\n\
                          pgpgin 447564005\n\
                          pgpgout 12858568\n\
                          workingset_refault_file 934077\n\
                          pgscan_kswapd 10\n\
                          pgscan_direct 5\n\
                          pgscan_khugepaged 99\n\
                          pgscan_file 15\n";

    #[test]
    fn thresholds_become_bytes() {
        let mut s = MemorySample::default();
        parse_into(VMSTAT, 4096, &mut s);
        assert_eq!(s.dirty_threshold_bytes, 1191045 * 4096);
        assert_eq!(s.dirty_background_threshold_bytes, 594795 * 4096);
        assert_eq!(s.pgpgin_kib, 447564005);
        assert_eq!(s.pgpgout_kib, 12858568);
        assert_eq!(s.workingset_refault_file, 934077);
        assert_eq!(s.pgscan_pages, 15);
    }

    #[test]
    fn meminfo_fields_are_not_touched() {
        let mut s = MemorySample {
            dirty_bytes: 1,
            ..Default::default()
        };
        parse_into(VMSTAT, 4096, &mut s);
        assert_eq!(s.dirty_bytes, 1);
    }
}
