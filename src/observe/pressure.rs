//! `/proc/pressure/{io,memory}` (PSI): cumulative time tasks stalled on a resource.

/// (some, full) total stall time in microseconds from a PSI file; None if malformed.
/// `some`: at least one task stalled; `full`: all non-idle tasks stalled at once.
pub(crate) fn parse_totals(text: &str) -> Option<(u64, u64)> {
    let mut some = None;
    let mut full = None;
    for line in text.lines() {
        let mut fields = line.split_whitespace();
        let kind = fields.next();
        let total = fields
            .find_map(|f| f.strip_prefix("total="))
            .and_then(|t| t.parse::<u64>().ok());
        match kind {
            Some("some") => some = total,
            Some("full") => full = total,
            _ => {}
        }
    }
    // Old kernels have no "full" line for cpu; io and memory always do, but tolerate it.
    Some((some?, full.unwrap_or(0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_totals() {
        let text = "some avg10=2.24 avg60=1.37 avg300=1.33 total=17923288\n\
                    full avg10=0.54 avg60=0.69 avg300=1.06 total=16134202\n";
        assert_eq!(parse_totals(text), Some((17923288, 16134202)));
    }

    #[test]
    fn full_line_is_optional_some_is_not() {
        assert_eq!(
            parse_totals("some avg10=0.00 avg60=0.00 avg300=0.00 total=5\n"),
            Some((5, 0))
        );
        assert_eq!(parse_totals("full total=5\n"), None);
        assert_eq!(parse_totals(""), None);
    }
}
