//! Property tests of the unit grammar: a value written in any accepted form
//! parses back to that value, and no text makes a parser panic.

use super::*;
use proptest::prelude::*;

/// (suffix as written, power of the unit, IEC form).
const SIZE_SUFFIXES: &[(&str, u32, bool)] = &[
    ("", 0, false),
    ("b", 0, false),
    ("k", 1, false),
    ("K", 1, false),
    ("kb", 1, false),
    ("KiB", 1, true),
    ("m", 2, false),
    ("MiB", 2, true),
    ("g", 3, false),
    ("Gi", 3, true),
    ("t", 4, false),
    ("p", 5, false),
];

fn kb_base() -> impl Strategy<Value = KbBase> {
    prop_oneof![Just(KbBase::Compat1024), Just(KbBase::Si1000)]
}

proptest! {
    #[test]
    fn sizes_round_trip(n in 0u64..1 << 20, s in 0..SIZE_SUFFIXES.len(), base in kb_base()) {
        let (suffix, power, iec) = SIZE_SUFFIXES[s];
        let text = format!("{n}{suffix}");
        // Too large for 64 bits is an error, never a wrapped value.
        let expected = base.multiplier(iec).pow(power).checked_mul(n).ok_or(UnitError::Overflow);
        prop_assert_eq!(parse_size(&text, base), expected, "{}", text);
    }

    #[test]
    fn hex_sizes_round_trip(n in any::<u64>()) {
        prop_assert_eq!(parse_size(&format!("{n:#x}"), KbBase::default()), Ok(n));
    }

    #[test]
    fn times_round_trip(n in 0u64..1 << 24, unit in 0usize..4) {
        let (suffix, nanos) = [("us", 1_000u64), ("ms", 1_000_000), ("s", 1_000_000_000), ("m", 60_000_000_000)][unit];
        let parsed = parse_time(&format!("{n}{suffix}"), TimeUnit::Seconds);
        prop_assert_eq!(parsed, Ok(Duration::from_nanos(n * nanos)));
    }

    #[test]
    fn percents_round_trip(p in 0u32..=100) {
        prop_assert_eq!(parse_percent(&format!("{p}%")), Ok(p));
        let over = format!("{}%", p + 101);
        prop_assert!(parse_percent(&over).is_err());
    }

    #[test]
    fn bssplit_round_trips_when_it_sums_to_100(first in 1u32..100, a in 1u64..1024, b in 1u64..1024) {
        let text = format!("{a}k/{first}:{b}k/{}", 100 - first);
        let parsed = parse_bssplit(&text, KbBase::default()).unwrap();
        prop_assert_eq!(parsed, vec![(a * 1024, first), (b * 1024, 100 - first)]);
    }

    #[test]
    fn no_text_makes_a_parser_panic(text in "\\PC{0,24}") {
        let _ = parse_size(&text, KbBase::Si1000);
        let _ = parse_time(&text, TimeUnit::Micros);
        let _ = parse_percent(&text);
        let _ = parse_range(&text, KbBase::default());
        let _ = parse_bssplit(&text, KbBase::default());
        let _ = parse_float_list(&text);
        let _ = split_per_direction(&text);
    }
}
