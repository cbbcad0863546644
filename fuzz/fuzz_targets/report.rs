//! The native JSON report reader (history, compare): any bytes either fail to parse or
//! give a report that writes back out and reads again.
#![no_main]

use iolens::model::RunReport;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(report) = serde_json::from_slice::<RunReport>(data) {
        let text = serde_json::to_string(&report).expect("a parsed report serialises");
        serde_json::from_str::<RunReport>(&text).expect("a written report reads back");
    }
});
