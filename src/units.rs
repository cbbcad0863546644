//! Units with fio's rules: sizes (with `kb_base`), percentages, times with a per-option
//! default unit, ranges, per-direction lists and `bssplit`; and values with a unit scaled
//! for reading (`format_value`, `run_numbers`).
//!
//! Everything here is strict where fio is lax: `4q` or `1.5g` are errors, not 4 and 1; a
//! whole number written as a decimal (`70.0`) is that number, as in fio.
//! Errors say what is wrong with the text; the job layer adds which option and where.

use std::time::Duration;

/// How unit prefixes in input are read (fio's `kb_base`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum KbBase {
    /// fio's default: `k`, `m`, … are powers of 1024 and the IEC forms `Ki`, `Mi`, … are
    /// powers of 1000 (inverted on purpose by fio, for old job files).
    #[default]
    Compat1024,
    /// Standard meanings: `k` = 1000, `Ki` = 1024.
    Si1000,
}

impl KbBase {
    fn multiplier(self, iec_form: bool) -> u64 {
        match (self, iec_form) {
            (Self::Compat1024, false) | (Self::Si1000, true) => 1024,
            (Self::Compat1024, true) | (Self::Si1000, false) => 1000,
        }
    }
}

/// What is wrong with a value's text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum UnitError {
    #[error("empty value")]
    Empty,
    #[error("'{0}' is not a whole number")]
    NotANumber(String),
    #[error("unknown size suffix '{0}'")]
    SizeSuffix(String),
    #[error("unknown time unit '{0}'")]
    TimeUnit(String),
    #[error("value does not fit in 64 bits")]
    Overflow,
    #[error("{0}")]
    Invalid(String),
}

/// Splits `text` into its leading digits (decimal, or hex after `0x`) and the rest.
fn split_number(text: &str) -> Result<(u64, &str), UnitError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(UnitError::Empty);
    }
    let (digits, radix) = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => (hex, 16),
        None => (text, 10),
    };
    let end = digits
        .find(|c: char| !c.is_digit(radix))
        .unwrap_or(digits.len());
    let (number, rest) = digits.split_at(end);
    // A whole number written as a decimal (`33554432.0`, as some wrappers write
    // every number) is that number, as fio reads it; a real fraction is refused.
    let rest = match rest.strip_prefix('.') {
        Some(fraction) if radix == 10 => {
            let zeros = fraction.len() - fraction.trim_start_matches('0').len();
            let after = &fraction[zeros..];
            if zeros == 0 || after.starts_with(|c: char| c.is_ascii_digit()) {
                return Err(UnitError::NotANumber(text.to_string()));
            }
            after
        }
        Some(_) => return Err(UnitError::NotANumber(text.to_string())),
        None => rest,
    };
    if number.is_empty() {
        return Err(UnitError::NotANumber(text.to_string()));
    }
    let value = u64::from_str_radix(number, radix).map_err(|_| UnitError::Overflow)?;
    if radix == 16 && !rest.is_empty() {
        return Err(UnitError::SizeSuffix(rest.to_string()));
    }
    Ok((value, rest))
}

/// The power (1 = kilo … 5 = peta) and whether the IEC form (`Ki`) was used, for a size suffix.
fn size_suffix(suffix: &str) -> Option<(u32, bool)> {
    let lower = suffix.to_ascii_lowercase();
    let unit = lower.strip_suffix('b').unwrap_or(&lower);
    if unit.is_empty() {
        return Some((0, false));
    }
    let (prefix, iec_form) = match unit.strip_suffix('i') {
        Some(prefix) => (prefix, true),
        None => (unit, false),
    };
    let power = match prefix {
        "k" => 1,
        "m" => 2,
        "g" => 3,
        "t" => 4,
        "p" => 5,
        _ => return None,
    };
    Some((power, iec_form))
}

/// A byte count: `4096`, `4k`, `4KiB`, `1g`, `0x1000` (suffixes are case-insensitive, a
/// trailing `b`/`B` means bytes).
pub(crate) fn parse_size(text: &str, kb_base: KbBase) -> Result<u64, UnitError> {
    let (number, suffix) = split_number(text)?;
    let (power, iec_form) =
        size_suffix(suffix).ok_or_else(|| UnitError::SizeSuffix(suffix.to_string()))?;
    kb_base
        .multiplier(iec_form)
        .checked_pow(power)
        .and_then(|scale| number.checked_mul(scale))
        .ok_or(UnitError::Overflow)
}

/// True when `text` uses an IEC prefix (`Ki`, `MiB`, …), which fio's default `kb_base=1024`
/// reads as a power of 1000: worth a warning.
pub(crate) fn uses_iec_prefix(text: &str) -> bool {
    split_number(text)
        .ok()
        .and_then(|(_, suffix)| size_suffix(suffix))
        .is_some_and(|(power, iec_form)| power > 0 && iec_form)
}

/// A percentage written with its sign: `50%` → 50 (0..=100).
pub(crate) fn parse_percent(text: &str) -> Result<u32, UnitError> {
    let number = strip_percent_sign(text.trim())
        .ok_or_else(|| UnitError::Invalid(format!("'{text}' is not a percentage")))?;
    parse_percent_number(number)
}

/// The number before a percent sign, which may be doubled (`50%%`, as Python's
/// configparser escapes it): fio reads any suffix that starts with `%` as the sign.
pub(crate) fn strip_percent_sign(text: &str) -> Option<&str> {
    text.strip_suffix('%')
        .map(|number| number.strip_suffix('%').unwrap_or(number))
}

/// A bare percentage number (as `rwmixread=70`): 0..=100.
pub(crate) fn parse_percent_number(text: &str) -> Result<u32, UnitError> {
    let (value, rest) = split_number(text)?;
    if !rest.is_empty() {
        return Err(UnitError::NotANumber(text.trim().to_string()));
    }
    match u32::try_from(value) {
        Ok(percent) if percent <= 100 => Ok(percent),
        _ => Err(UnitError::Invalid(format!("{value} is more than 100%"))),
    }
}

/// The unit a time option assumes when its value has none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TimeUnit {
    Micros,
    Seconds,
}

impl TimeUnit {
    pub(crate) fn suffix(self) -> &'static str {
        match self {
            Self::Micros => "us",
            Self::Seconds => "s",
        }
    }
}

/// A duration: a whole number with an optional unit `ns`, `us`, `ms`, `s`, `m`, `h`, `d`
/// (also `nsec`, `usec`, `msec`, `sec`, `min`; case-insensitive). `m` is minutes.
pub(crate) fn parse_time(text: &str, default_unit: TimeUnit) -> Result<Duration, UnitError> {
    let (number, unit) = split_number(text)?;
    let unit = if unit.is_empty() {
        default_unit.suffix().to_string()
    } else {
        unit.to_ascii_lowercase()
    };
    let nanos_per_unit: u64 = match unit.as_str() {
        "ns" | "nsec" => 1,
        "us" | "usec" => 1_000,
        "ms" | "msec" => 1_000_000,
        "s" | "sec" => 1_000_000_000,
        "m" | "min" => 60 * 1_000_000_000,
        "h" => 3_600 * 1_000_000_000,
        "d" => 86_400 * 1_000_000_000,
        _ => return Err(UnitError::TimeUnit(unit)),
    };
    number
        .checked_mul(nanos_per_unit)
        .map(Duration::from_nanos)
        .ok_or(UnitError::Overflow)
}

/// A whole number with no suffix beyond what `parse_size` allows (fio's integer options
/// accept `1k` too).
pub(crate) fn parse_count(text: &str, kb_base: KbBase) -> Result<u64, UnitError> {
    parse_size(text, kb_base)
}

/// A size range `1k-4k` or `1k:4k`, returned as written (the caller checks the order).
pub(crate) fn parse_range(text: &str, kb_base: KbBase) -> Result<(u64, u64), UnitError> {
    let (low, high) = text
        .split_once(['-', ':'])
        .ok_or_else(|| UnitError::Invalid(format!("'{text}' is not a range like 1k-4k")))?;
    Ok((parse_size(low, kb_base)?, parse_size(high, kb_base)?))
}

/// Boolean: `1`/`0` (also `true`/`false`).
pub(crate) fn parse_bool(text: &str) -> Result<bool, UnitError> {
    match text.trim().to_ascii_lowercase().as_str() {
        "1" | "true" => Ok(true),
        "0" | "false" => Ok(false),
        "" => Err(UnitError::Empty),
        _ => Err(UnitError::Invalid(format!(
            "'{}' is not 1 or 0",
            text.trim()
        ))),
    }
}

/// Splits a per-direction value `read,write,trim` with fio's carry-over: the last value given
/// also applies to the directions after it unless a comma ends it (`8k,32k` sets trims to 32k,
/// `8k,32k,` leaves them unset), and an empty value leaves its direction unset (`,8k` sets only
/// writes and trims).
pub(crate) fn split_per_direction(text: &str) -> Result<[Option<&str>; 3], UnitError> {
    fn side(part: &str) -> Option<&str> {
        Some(part.trim()).filter(|p| !p.is_empty())
    }
    let parts: Vec<&str> = text.split(',').collect();
    if parts.len() > 3 {
        return Err(UnitError::Invalid(
            "more than three values; give read,write,trim".to_string(),
        ));
    }
    let last = parts[parts.len() - 1];
    let sides: [Option<&str>; 3] =
        std::array::from_fn(|d| side(parts.get(d).copied().unwrap_or(last)));
    if sides == [None; 3] {
        return Err(UnitError::Empty);
    }
    Ok(sides)
}

/// One direction of `bssplit`: `4k/50:64k/50`. Entries with a blank percentage (`8k/` or `8k`)
/// share what the others leave of 100; the result always sums to 100.
pub(crate) fn parse_bssplit(text: &str, kb_base: KbBase) -> Result<Vec<(u64, u32)>, UnitError> {
    let mut entries = Vec::new();
    let mut blanks = 0;
    for entry in text.split(':') {
        let (size, percent) = entry.split_once('/').unwrap_or((entry, ""));
        let percent = match percent.trim() {
            "" => {
                blanks += 1;
                None
            }
            given => Some(parse_percent_number(given)?),
        };
        entries.push((parse_size(size, kb_base)?, percent));
    }
    let given: u32 = entries.iter().filter_map(|(_, p)| *p).sum();
    if given > 100 {
        return Err(UnitError::Invalid(format!(
            "percentages add up to {given}, more than 100"
        )));
    }
    if blanks == 0 && given < 100 {
        return Err(UnitError::Invalid(format!(
            "percentages add up to {given}, not 100"
        )));
    }
    // Blank entries split the remainder evenly; the first ones take the rounding leftover.
    let remainder = 100 - given;
    let mut leftover = if blanks == 0 { 0 } else { remainder % blanks };
    Ok(entries
        .into_iter()
        .map(|(size, percent)| {
            let percent = percent.unwrap_or_else(|| {
                let extra = u32::from(leftover > 0);
                leftover = leftover.saturating_sub(1);
                remainder / blanks + extra
            });
            (size, percent)
        })
        .collect())
}

/// A `:`-separated list of numbers (`99:99.9:99.99`).
pub(crate) fn parse_float_list(text: &str) -> Result<Vec<f64>, UnitError> {
    text.split(':')
        .map(|item| {
            let item = item.trim();
            item.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| UnitError::Invalid(format!("'{item}' is not a number")))
        })
        .collect()
}

/// "#2, #4, #6": 1-based repetition numbers.
pub(crate) fn run_numbers(runs: &[usize]) -> String {
    let mut sorted = runs.to_vec();
    sorted.sort_unstable();
    sorted
        .iter()
        .map(|i| format!("#{}", i + 1))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A value with its unit, scaled for reading: 12.3k IO/s, 512.0 MiB/s, 1.25 ms, 1.20 GiB.
pub fn format_value(v: f64, unit: &str) -> String {
    match unit {
        "IO/s" => scaled(v, &[(1e6, "M"), (1e3, "k")], "") + " IO/s",
        "B/s" => scaled(
            v,
            &[
                (1024.0 * 1024.0 * 1024.0, " GiB/s"),
                (1024.0 * 1024.0, " MiB/s"),
                (1024.0, " KiB/s"),
            ],
            " B/s",
        ),
        "ns" => scaled(v, &[(1e9, " s"), (1e6, " ms"), (1e3, " µs")], " ns"),
        // a size: a rate's figure without its "/s"
        "B" => format_value(v, "B/s").trim_end_matches("/s").to_string(),
        _ if v.fract() == 0.0 && v.abs() < 1e15 => format!("{v:.0}"),
        _ => format!("{v:.3}"),
    }
}

fn scaled(v: f64, steps: &[(f64, &str)], base: &str) -> String {
    for &(factor, suffix) in steps {
        if v.abs() >= factor {
            return format!("{:.2}{suffix}", v / factor);
        }
    }
    format!("{v:.1}{base}")
}

/// The binary units a byte count is said in, smallest first.
const BYTE_UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];

/// How far `human_bytes` scales: its smallest and largest unit.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ByteUnits {
    /// "100 B" to "2.0 TiB": the report's system block and doctor's limits.
    BToTib,
    /// "512 KiB" to "2048.0 GiB": findings, which speak of nothing below a KiB.
    KibToGib,
}

/// A byte count in iolens' own words: the largest binary unit it reaches with
/// one decimal ("1.8 GiB", "12.0 MiB"), in whole numbers of the smallest unit
/// ("512 KiB", "100 B"). fio's formats scale with fio's num2str instead
/// (`report::fio`).
pub(crate) fn human_bytes(bytes: u64, units: ByteUnits) -> String {
    let (smallest, largest) = match units {
        ByteUnits::BToTib => (0, 4),
        ByteUnits::KibToGib => (1, 3),
    };
    // Dividing by powers of two is exact: the figure is the count's own.
    let mut value = bytes as f64 / 1024f64.powi(smallest as i32);
    let mut unit = smallest;
    while value >= 1024.0 && unit < largest {
        value /= 1024.0;
        unit += 1;
    }
    if unit == smallest {
        format!("{value:.0} {}", BYTE_UNITS[unit])
    } else {
        format!("{value:.1} {}", BYTE_UNITS[unit])
    }
}

#[cfg(test)]
mod proptests;

#[cfg(test)]
mod tests {
    use super::*;

    const KB: KbBase = KbBase::Compat1024;

    #[test]
    fn byte_counts_are_said_in_binary_units_within_their_range() {
        use ByteUnits::{BToTib, KibToGib};
        for (bytes, units, said) in [
            (100, BToTib, "100 B"),
            (1023, BToTib, "1023 B"),
            (1536, BToTib, "1.5 KiB"),
            (25 << 20, BToTib, "25.0 MiB"),
            (3 << 40, BToTib, "3.0 TiB"),
            (5 << 50, BToTib, "5120.0 TiB"),
            (100, KibToGib, "0 KiB"),
            (512 << 10, KibToGib, "512 KiB"),
            (25 << 20, KibToGib, "25.0 MiB"),
            (1_932_735_283, KibToGib, "1.8 GiB"),
            (2 << 40, KibToGib, "2048.0 GiB"),
        ] {
            assert_eq!(human_bytes(bytes, units), said, "{bytes} in {units:?}");
        }
    }

    #[test]
    fn values_are_scaled_for_reading() {
        assert_eq!(format_value(12_345.0, "IO/s"), "12.35k IO/s");
        assert_eq!(format_value(512.0 * 1024.0 * 1024.0, "B/s"), "512.00 MiB/s");
        assert_eq!(format_value(1_250_000.0, "ns"), "1.25 ms");
        assert_eq!(format_value(1288490188.0, "B"), "1.20 GiB");
        assert_eq!(format_value(12.0, "B"), "12.0 B");
        assert_eq!(format_value(25.0, ""), "25");
    }

    #[test]
    fn plain_and_hex_numbers_are_bytes() {
        assert_eq!(parse_size("4096", KB), Ok(4096));
        assert_eq!(parse_size("0x1000", KB), Ok(4096));
        assert_eq!(parse_size("4096b", KB), Ok(4096));
        assert_eq!(parse_size(" 12 ", KB), Ok(12));
    }

    #[test]
    fn default_kb_base_reads_si_suffixes_as_powers_of_1024() {
        assert_eq!(parse_size("4k", KB), Ok(4096));
        assert_eq!(parse_size("4K", KB), Ok(4096));
        assert_eq!(parse_size("4kB", KB), Ok(4096));
        assert_eq!(parse_size("4KB", KB), Ok(4096));
        assert_eq!(parse_size("1m", KB), Ok(1 << 20));
        assert_eq!(parse_size("1g", KB), Ok(1 << 30));
        assert_eq!(parse_size("1t", KB), Ok(1 << 40));
        assert_eq!(parse_size("1p", KB), Ok(1 << 50));
    }

    #[test]
    fn default_kb_base_inverts_iec_suffixes_like_fio() {
        assert_eq!(parse_size("1KiB", KB), Ok(1000));
        assert_eq!(parse_size("1MiB", KB), Ok(1_000_000));
        assert_eq!(parse_size("1ki", KB), Ok(1000));
    }

    #[test]
    fn kb_base_1000_uses_standard_prefixes() {
        let si = KbBase::Si1000;
        assert_eq!(parse_size("1k", si), Ok(1000));
        assert_eq!(parse_size("1kB", si), Ok(1000));
        assert_eq!(parse_size("1KiB", si), Ok(1024));
        assert_eq!(parse_size("1GiB", si), Ok(1 << 30));
    }

    #[test]
    fn whole_numbers_written_as_decimals_are_those_numbers() {
        assert_eq!(parse_size("33554432.0", KB), Ok(33_554_432));
        assert_eq!(parse_size("4.00k", KB), Ok(4096));
        assert_eq!(parse_percent_number("70.0"), Ok(70));
        for fraction in ["1.05", "7.", "0x10.0", ".0"] {
            assert!(parse_size(fraction, KB).is_err(), "{fraction}");
        }
    }

    #[test]
    fn bad_sizes_are_errors_not_truncations() {
        assert_eq!(parse_size("4q", KB), Err(UnitError::SizeSuffix("q".into())));
        assert_eq!(
            parse_size("1.5g", KB),
            Err(UnitError::NotANumber("1.5g".into()))
        );
        assert_eq!(parse_size("k", KB), Err(UnitError::NotANumber("k".into())));
        assert_eq!(parse_size("", KB), Err(UnitError::Empty));
        assert_eq!(
            parse_size("-5", KB),
            Err(UnitError::NotANumber("-5".into()))
        );
        assert_eq!(
            parse_size("0x10k", KB),
            Err(UnitError::SizeSuffix("k".into()))
        );
        assert_eq!(parse_size("16384p", KB), Err(UnitError::Overflow));
    }

    #[test]
    fn iec_prefix_is_detected_for_the_warning() {
        assert!(uses_iec_prefix("1GiB"));
        assert!(uses_iec_prefix("4ki"));
        assert!(!uses_iec_prefix("4k"));
        assert!(!uses_iec_prefix("4096"));
    }

    #[test]
    fn percentages() {
        assert_eq!(parse_percent("50%"), Ok(50));
        assert_eq!(parse_percent("100%"), Ok(100));
        assert_eq!(
            parse_percent("100%%"),
            Ok(100),
            "configparser's escaped sign"
        );
        assert!(parse_percent("100%%%").is_err());
        assert!(parse_percent("101%").is_err());
        assert!(parse_percent("50").is_err());
        assert_eq!(parse_percent_number("70"), Ok(70));
        assert!(parse_percent_number("7k").is_err());
    }

    #[test]
    fn times_use_the_default_unit_when_none_is_given() {
        assert_eq!(
            parse_time("30", TimeUnit::Seconds),
            Ok(Duration::from_secs(30))
        );
        assert_eq!(
            parse_time("30", TimeUnit::Micros),
            Ok(Duration::from_micros(30))
        );
        assert_eq!(
            parse_time("250ms", TimeUnit::Seconds),
            Ok(Duration::from_millis(250))
        );
        assert_eq!(
            parse_time("5us", TimeUnit::Seconds),
            Ok(Duration::from_micros(5))
        );
        assert_eq!(
            parse_time("7ns", TimeUnit::Seconds),
            Ok(Duration::from_nanos(7))
        );
        assert_eq!(
            parse_time("2s", TimeUnit::Micros),
            Ok(Duration::from_secs(2))
        );
        assert_eq!(
            parse_time("2m", TimeUnit::Seconds),
            Ok(Duration::from_secs(120))
        );
        assert_eq!(
            parse_time("1h", TimeUnit::Seconds),
            Ok(Duration::from_secs(3600))
        );
        assert_eq!(
            parse_time("1D", TimeUnit::Seconds),
            Ok(Duration::from_secs(86_400))
        );
        assert_eq!(
            parse_time("3msec", TimeUnit::Seconds),
            Ok(Duration::from_millis(3))
        );
        assert_eq!(
            parse_time("3x", TimeUnit::Seconds),
            Err(UnitError::TimeUnit("x".into()))
        );
    }

    #[test]
    fn ranges() {
        assert_eq!(parse_range("1k-4k", KB), Ok((1024, 4096)));
        assert_eq!(parse_range("1k:4k", KB), Ok((1024, 4096)));
        assert_eq!(parse_range("8k-4k", KB), Ok((8192, 4096)));
        assert!(parse_range("4k", KB).is_err());
    }

    #[test]
    fn bools() {
        assert_eq!(parse_bool("1"), Ok(true));
        assert_eq!(parse_bool("0"), Ok(false));
        assert_eq!(parse_bool("true"), Ok(true));
        assert!(parse_bool("2").is_err());
    }

    #[test]
    fn per_direction_carry_over() {
        let (k4, k8, k16) = (Some("4k"), Some("8k"), Some("16k"));
        assert_eq!(split_per_direction("4k"), Ok([k4, k4, k4]));
        assert_eq!(split_per_direction("4k,8k"), Ok([k4, k8, k8]));
        assert_eq!(split_per_direction("4k,8k,"), Ok([k4, k8, None]));
        assert_eq!(split_per_direction("4k,8k,16k"), Ok([k4, k8, k16]));
        assert_eq!(split_per_direction(",8k"), Ok([None, k8, k8]));
        assert_eq!(split_per_direction(",8k,"), Ok([None, k8, None]));
        assert_eq!(split_per_direction(",,16k"), Ok([None, None, k16]));
        assert_eq!(split_per_direction("4k,"), Ok([k4, None, None]));
        assert_eq!(split_per_direction(","), Err(UnitError::Empty));
        assert_eq!(split_per_direction(",,"), Err(UnitError::Empty));
        assert!(split_per_direction("4k,8k,16k,32k").is_err());
    }

    #[test]
    fn bssplit_with_given_percentages() {
        assert_eq!(
            parse_bssplit("4k/50:64k/50", KB),
            Ok(vec![(4096, 50), (65536, 50)])
        );
    }

    #[test]
    fn bssplit_blank_percentages_share_the_remainder() {
        assert_eq!(
            parse_bssplit("4k/50:8k/:32k/", KB),
            Ok(vec![(4096, 50), (8192, 25), (32768, 25)])
        );
        assert_eq!(
            parse_bssplit("4k/:8k/:16k", KB),
            Ok(vec![(4096, 34), (8192, 33), (16384, 33)])
        );
    }

    #[test]
    fn bssplit_percentages_must_reach_100_exactly() {
        assert!(parse_bssplit("4k/80:8k/80", KB).is_err());
        assert!(parse_bssplit("4k/30:8k/30", KB).is_err());
        assert!(parse_bssplit("4q/100", KB).is_err());
    }

    #[test]
    fn float_lists() {
        assert_eq!(parse_float_list("50:99.9"), Ok(vec![50.0, 99.9]));
        assert!(parse_float_list("50:x").is_err());
    }
}
