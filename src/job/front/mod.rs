//! The front ends: text in, `RawJob`s out. `cli_args` reads fio-style `--key=value`
//! arguments, `jobfile` reads INI job files (with `expr` for `$`-expressions and
//! `text_check` for the bytes) and assembles both into layered jobs; `lenient` relaxes
//! values fio accepts loosely.
pub(crate) mod cli_args;
pub(crate) mod expr;
pub(crate) mod jobfile;
pub(crate) mod lenient;
mod text_check;
