//! Jobs: raw options from the front ends, resolved into `JobSpec`.
//!
//! `cli_args` and `jobfile` fill `RawJob`s through the option table in
//! `options`; `resolve` applies precedence (job > global > default), parses every value
//! and checks the combination.
pub mod cli_args;
pub mod error;
pub mod errors;
pub mod expr;
pub mod jobfile;
pub mod layers;
pub mod lenient;
pub mod options;
pub mod raw;
pub mod resolve;
pub mod spec;
mod text_check;

pub use cli_args::{parse_command_line, parse_fio_args, CommandLine};
pub use error::JobError;
pub use raw::{LayeredJob, RawJob, Source};
pub use resolve::{resolve, resolve_layered, Resolved};
