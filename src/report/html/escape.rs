//! The one way text reaches the pages: every string written into the HTML (or
//! the SVG inside it), as text or as an attribute value, goes through `escape`,
//! and a table row of a name and its value through `row`, which escapes both.

use std::fmt::Write;

/// Text safe inside HTML/SVG text and inside attribute values in either quotes.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A table row of a name and its value, both escaped.
pub(super) fn row(out: &mut String, name: &str, value: &str) {
    let _ = write!(
        out,
        "<tr><td>{}</td><td>{}</td></tr>",
        escape(name),
        escape(value)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_and_both_quotes_come_out_as_text() {
        assert_eq!(
            escape(r#"<img src=x onerror="a('b')">&"#),
            "&lt;img src=x onerror=&quot;a(&#39;b&#39;)&quot;&gt;&amp;"
        );
        let mut out = String::new();
        row(&mut out, "filesystem of <svg onload=x>", "a\"b");
        assert_eq!(
            out,
            "<tr><td>filesystem of &lt;svg onload=x&gt;</td><td>a&quot;b</td></tr>"
        );
    }
}
