//! The value grammar (sizes, times, percentages, ranges, bssplit, arithmetic) and the
//! fio-style command line on arbitrary text.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        iolens::fuzzing::values(text);
    }
});
