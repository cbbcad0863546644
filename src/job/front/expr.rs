//! Option values as job files write them: `${ENV}` expansion, fio's reserved keywords
//! (`$ncpus`, `$mb_memory`, `$pagesize`) and arithmetic (`(8*1024)`, `8*$mb_memory`).
//!
//! The evaluator works on whole numbers: literals may carry size suffixes (`4k`, `1m`, read with
//! kb_base=1024), `/` truncates, and the result must be a non-negative 64-bit number.

use crate::job::options::{Kind, OptionDef};

/// The machine facts fio's reserved keywords stand for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SystemValues {
    pub ncpus: u64,
    pub mb_memory: u64,
    pub pagesize: u64,
}

impl SystemValues {
    pub(crate) fn of_this_machine() -> Self {
        Self {
            ncpus: std::thread::available_parallelism().map_or(1, |n| n.get() as u64),
            mb_memory: total_memory_kib().unwrap_or(0) / 1024,
            pagesize: iolens_sys::page_size() as u64,
        }
    }

    fn keyword(&self, name: &str) -> Option<u64> {
        match name {
            "ncpus" => Some(self.ncpus),
            "mb_memory" => Some(self.mb_memory),
            "pagesize" => Some(self.pagesize),
            _ => None,
        }
    }
}

/// `MemTotal` from /proc/meminfo, in KiB.
fn total_memory_kib() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    meminfo
        .lines()
        .find_map(|line| line.strip_prefix("MemTotal:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Why a value could not be expanded or evaluated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ExprError {
    #[error("environment variable '{0}' is not set")]
    UnsetVariable(String),
    #[error("environment variable '{0}' is empty")]
    EmptyVariable(String),
    #[error("'${{' without a closing '}}'")]
    UnclosedVariable,
    #[error("{0}")]
    Syntax(String),
    #[error("division by zero")]
    DivisionByZero,
    #[error("the result {0} is negative")]
    Negative(i128),
    #[error("the result does not fit in 64 bits")]
    Overflow,
    #[error(
        "more than {MAX_DEPTH} parentheses, signs or powers nested in one another \
         (write the expression flatter)"
    )]
    TooDeep,
}

/// How deep parentheses, signs and `^` may nest: far beyond any real expression, far below
/// what the parser's recursion could take on a thread's stack.
const MAX_DEPTH: usize = 100;

/// What an empty or unset `${VAR}` does: an error (strict) or an empty string (fio).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MissingEnv {
    Error,
    Empty,
}

/// Replaces every `${NAME}` with the value `lookup` gives. Returns the text and the names of
/// variables that were replaced by an empty string (only with `MissingEnv::Empty`).
pub(crate) fn expand_env(
    text: &str,
    lookup: impl Fn(&str) -> Option<String>,
    missing: MissingEnv,
) -> Result<(String, Vec<String>), ExprError> {
    let mut out = String::with_capacity(text.len());
    let mut emptied = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after.find('}').ok_or(ExprError::UnclosedVariable)?;
        let name = &after[..end];
        match lookup(name).filter(|value| !value.is_empty()) {
            Some(value) => out.push_str(&value),
            None if missing == MissingEnv::Empty => emptied.push(name.to_string()),
            None if lookup(name).is_some() => return Err(ExprError::EmptyVariable(name.into())),
            None => return Err(ExprError::UnsetVariable(name.into())),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok((out, emptied))
}

/// Replaces the reserved `$keywords`; returns the text and whether any was found.
fn substitute_keywords(text: &str, system: &SystemValues) -> (String, bool) {
    let mut out = String::with_capacity(text.len());
    let mut found = false;
    let mut rest = text;
    while let Some(start) = rest.find('$') {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        let end = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        match system.keyword(&after[..end]) {
            Some(value) => {
                out.push_str(&value.to_string());
                found = true;
            }
            None => out.push_str(&rest[start..start + 1 + end]),
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    (out, found)
}

/// Expands a value for `def`: keywords everywhere, and for numeric options arithmetic in a
/// value (or each `read,write` side) that is wrapped in parentheses or uses a keyword.
pub(crate) fn expand_value(
    def: &OptionDef,
    text: &str,
    system: &SystemValues,
) -> Result<String, ExprError> {
    let (text, had_keyword) = substitute_keywords(text, system);
    // fio documents that a time expression counts in microseconds, whatever the option's unit.
    let result_suffix = match def.kind {
        Kind::Count
        | Kind::Percent
        | Kind::Size
        | Kind::SizeOrPercent
        | Kind::SizePerDirection
        | Kind::CountPerDirection => "",
        Kind::Time(_) => "us",
        _ => return Ok(text),
    };
    let per_direction = matches!(def.kind, Kind::SizePerDirection | Kind::CountPerDirection);
    let sides: Vec<&str> = match per_direction {
        true => text.split(',').collect(),
        false => vec![text.as_str()],
    };
    let expanded = sides
        .into_iter()
        .map(|side| {
            let trimmed = side.trim();
            let wrapped = trimmed.starts_with('(') && trimmed.ends_with(')');
            let has_operator = trimmed.contains(['+', '-', '*', '/', '%', '^']);
            if wrapped || (had_keyword && has_operator) {
                evaluate(trimmed).map(|value| format!("{value}{result_suffix}"))
            } else {
                Ok(side.to_string())
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(expanded.join(","))
}

/// Evaluates `+ - * / % ^` and parentheses over whole numbers with size suffixes.
pub(crate) fn evaluate(text: &str) -> Result<u64, ExprError> {
    let mut parser = Parser {
        tokens: tokenize(text)?,
        position: 0,
        depth: 0,
    };
    let value = parser.sum()?;
    if let Some(token) = parser.tokens.get(parser.position) {
        return Err(ExprError::Syntax(format!("unexpected '{token}'")));
    }
    match u64::try_from(value) {
        Ok(value) => Ok(value),
        Err(_) if value < 0 => Err(ExprError::Negative(value)),
        Err(_) => Err(ExprError::Overflow),
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Number(i128),
    Operator(char),
}

impl std::fmt::Display for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Number(n) => write!(f, "{n}"),
            Self::Operator(c) => write!(f, "{c}"),
        }
    }
}

fn tokenize(text: &str) -> Result<Vec<Token>, ExprError> {
    let mut tokens = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some(&(start, c)) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if "+-*/%^()".contains(c) {
            tokens.push(Token::Operator(c));
            chars.next();
        } else if c.is_ascii_digit() {
            let mut end = start;
            while let Some(&(i, c)) = chars.peek() {
                if !(c.is_ascii_alphanumeric() || c == '.') {
                    break;
                }
                end = i + c.len_utf8();
                chars.next();
            }
            let literal = &text[start..end];
            let bytes = crate::units::parse_size(literal, crate::units::KbBase::Compat1024)
                .map_err(|e| ExprError::Syntax(format!("'{literal}': {e}")))?;
            tokens.push(Token::Number(i128::from(bytes)));
        } else {
            return Err(ExprError::Syntax(format!(
                "unexpected '{c}' (expressions use numbers, + - * / % ^ and parentheses)"
            )));
        }
    }
    Ok(tokens)
}

/// Recursive descent: sum > product > power (right-associative) > sign > atom; each
/// recursion goes through `deeper`, so nesting is bounded by `MAX_DEPTH`.
struct Parser {
    tokens: Vec<Token>,
    position: usize,
    depth: usize,
}

impl Parser {
    fn deeper(
        &mut self,
        inner: fn(&mut Self) -> Result<i128, ExprError>,
    ) -> Result<i128, ExprError> {
        if self.depth == MAX_DEPTH {
            return Err(ExprError::TooDeep);
        }
        self.depth += 1;
        let value = inner(self);
        self.depth -= 1;
        value
    }

    fn next_operator_in(&mut self, operators: &str) -> Option<char> {
        match self.tokens.get(self.position) {
            Some(Token::Operator(c)) if operators.contains(*c) => {
                self.position += 1;
                Some(*c)
            }
            _ => None,
        }
    }

    fn sum(&mut self) -> Result<i128, ExprError> {
        let mut value = self.product()?;
        while let Some(op) = self.next_operator_in("+-") {
            let right = self.product()?;
            value = match op {
                '+' => value.checked_add(right),
                _ => value.checked_sub(right),
            }
            .ok_or(ExprError::Overflow)?;
        }
        Ok(value)
    }

    fn product(&mut self) -> Result<i128, ExprError> {
        let mut value = self.power()?;
        while let Some(op) = self.next_operator_in("*/%") {
            let right = self.power()?;
            value = match op {
                '*' => value.checked_mul(right).ok_or(ExprError::Overflow)?,
                _ if right == 0 => return Err(ExprError::DivisionByZero),
                '/' => value.checked_div(right).ok_or(ExprError::Overflow)?,
                _ => value.checked_rem(right).ok_or(ExprError::Overflow)?,
            };
        }
        Ok(value)
    }

    fn power(&mut self) -> Result<i128, ExprError> {
        let base = self.signed()?;
        if self.next_operator_in("^").is_none() {
            return Ok(base);
        }
        let exponent = self.deeper(Self::power)?;
        let exponent = u32::try_from(exponent).map_err(|_| {
            ExprError::Syntax(format!("exponent {exponent} is not a small whole number"))
        })?;
        base.checked_pow(exponent).ok_or(ExprError::Overflow)
    }

    fn signed(&mut self) -> Result<i128, ExprError> {
        match self.next_operator_in("-+") {
            Some('-') => self
                .deeper(Self::signed)?
                .checked_neg()
                .ok_or(ExprError::Overflow),
            Some(_) => self.deeper(Self::signed),
            None => self.atom(),
        }
    }

    fn atom(&mut self) -> Result<i128, ExprError> {
        let token = self.tokens.get(self.position).cloned();
        self.position += 1;
        match token {
            Some(Token::Number(n)) => Ok(n),
            Some(Token::Operator('(')) => {
                let value = self.deeper(Self::sum)?;
                match self.next_operator_in(")") {
                    Some(_) => Ok(value),
                    None => Err(ExprError::Syntax("missing ')'".into())),
                }
            }
            Some(token) => Err(ExprError::Syntax(format!("unexpected '{token}'"))),
            None => Err(ExprError::Syntax("the expression ends too early".into())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::options::find;

    const SYSTEM: SystemValues = SystemValues {
        ncpus: 4,
        mb_memory: 2048,
        pagesize: 4096,
    };

    #[test]
    fn arithmetic_follows_precedence_and_parentheses() {
        assert_eq!(evaluate("(8*1024)"), Ok(8192));
        assert_eq!(evaluate("2+3*4"), Ok(14));
        assert_eq!(evaluate("(2+3)*4"), Ok(20));
        assert_eq!(evaluate("7/2"), Ok(3));
        assert_eq!(evaluate("10%3"), Ok(1));
        assert_eq!(evaluate("2^3^2"), Ok(512));
        assert_eq!(evaluate("-2+5"), Ok(3));
        assert_eq!(evaluate(" 1k * 4 "), Ok(4096));
        assert_eq!(evaluate("0x10+1"), Ok(17));
    }

    #[test]
    fn arithmetic_errors_say_what_is_wrong() {
        assert_eq!(evaluate("1/0"), Err(ExprError::DivisionByZero));
        assert_eq!(evaluate("1-2"), Err(ExprError::Negative(-1)));
        assert_eq!(evaluate("2^64"), Err(ExprError::Overflow));
        assert_eq!(evaluate("-((-2)^127)"), Err(ExprError::Overflow));
        assert_eq!(evaluate("((-2)^127)/(-1)"), Err(ExprError::Overflow));
        assert_eq!(evaluate("((-2)^127)%(-1)"), Err(ExprError::Overflow));
        assert!(matches!(evaluate("(1+2"), Err(ExprError::Syntax(_))));
        assert!(matches!(evaluate("1+"), Err(ExprError::Syntax(_))));
        assert!(matches!(evaluate("4q*2"), Err(ExprError::Syntax(_))));
        assert!(matches!(evaluate("a+1"), Err(ExprError::Syntax(_))));
        assert!(matches!(evaluate("1 2"), Err(ExprError::Syntax(_))));
    }

    #[test]
    fn nesting_deeper_than_max_depth_is_refused_not_recursed() {
        let nested = |depth: usize, open: &str, close: &str| {
            format!("{}1{}", open.repeat(depth), close.repeat(depth))
        };
        assert_eq!(evaluate(&nested(MAX_DEPTH, "(", ")")), Ok(1));
        assert_eq!(
            evaluate(&nested(MAX_DEPTH + 1, "(", ")")),
            Err(ExprError::TooDeep)
        );
        assert_eq!(evaluate(&nested(100_000, "(", "")), Err(ExprError::TooDeep));
        assert_eq!(evaluate(&nested(100_000, "-", "")), Err(ExprError::TooDeep));
        assert_eq!(
            evaluate(&nested(100_000, "1^", "")),
            Err(ExprError::TooDeep)
        );
    }

    #[test]
    fn env_variables_expand_and_missing_ones_are_errors_unless_lenient() {
        let lookup = |name: &str| match name {
            "SIZE" => Some("64m".to_string()),
            "EMPTY" => Some(String::new()),
            _ => None,
        };
        let strict = |text| expand_env(text, lookup, MissingEnv::Error);
        assert_eq!(strict("${SIZE}"), Ok(("64m".into(), vec![])));
        assert_eq!(strict("a${SIZE}b${SIZE}"), Ok(("a64mb64m".into(), vec![])));
        assert_eq!(
            strict("${NOPE}"),
            Err(ExprError::UnsetVariable("NOPE".into()))
        );
        assert_eq!(
            strict("${EMPTY}"),
            Err(ExprError::EmptyVariable("EMPTY".into()))
        );
        assert_eq!(strict("${SIZE"), Err(ExprError::UnclosedVariable));
        assert_eq!(
            expand_env("x${NOPE}", lookup, MissingEnv::Empty),
            Ok(("x".into(), vec!["NOPE".to_string()]))
        );
    }

    #[test]
    fn keywords_expand_in_any_option_and_compute_in_numeric_ones() {
        let expand = |name, text| expand_value(find(name).unwrap(), text, &SYSTEM);
        assert_eq!(expand("size", "8*$mb_memory"), Ok("16384".into()));
        assert_eq!(expand("iodepth", "$ncpus"), Ok("4".into()));
        assert_eq!(expand("bs", "$pagesize"), Ok("4096".into()));
        assert_eq!(
            expand("filename", "/tmp/f$ncpus-$other"),
            Ok("/tmp/f4-$other".into())
        );
        assert_eq!(expand("size", "$ncpus*1m"), Ok("4194304".into()));
    }

    #[test]
    fn parenthesised_values_are_expressions_per_direction_and_times_count_in_micros() {
        let expand = |name, text| expand_value(find(name).unwrap(), text, &SYSTEM);
        assert_eq!(expand("bs", "(8*1024)"), Ok("8192".into()));
        assert_eq!(expand("bs", "(4*1024),(2*4k)"), Ok("4096,8192".into()));
        assert_eq!(expand("bs", "8*1024"), Ok("8*1024".into()));
        assert_eq!(expand("runtime", "(2*1000)"), Ok("2000us".into()));
        assert_eq!(expand("rw", "(randread)"), Ok("(randread)".into()));
        assert!(expand("size", "(1/0)").is_err());
    }
}
