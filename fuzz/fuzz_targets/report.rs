//! The native JSON report reader (history, compare): any bytes either fail to parse or
//! give a report that writes back out and reads again.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    iolens::fuzzing::report_round_trip(data);
});
