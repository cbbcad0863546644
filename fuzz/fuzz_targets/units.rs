//! The value grammar (sizes, times, percentages, ranges, bssplit, arithmetic) and the
//! fio-style command line on arbitrary text.
#![no_main]

use iolens::units::{self, KbBase, TimeUnit};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for base in [KbBase::Compat1024, KbBase::Si1000] {
        let _ = units::parse_size(text, base);
        let _ = units::parse_count(text, base);
        let _ = units::parse_range(text, base);
        let _ = units::parse_bssplit(text, base);
    }
    let _ = units::parse_time(text, TimeUnit::Micros);
    let _ = units::parse_percent(text);
    let _ = units::parse_bool(text);
    let _ = units::parse_float_list(text);
    let _ = units::split_per_direction(text);
    let _ = iolens::job::front::expr::evaluate(text);
    let args: Vec<String> = text.split_whitespace().map(str::to_string).collect();
    if let Ok((global, jobs)) = iolens::job::parse_fio_args(&args) {
        let _ = iolens::job::resolve(&global, &jobs);
    }
});
