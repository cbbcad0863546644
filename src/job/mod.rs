//! Jobs: raw options from the front ends, resolved into `JobSpec`.
//!
//! `cli_args` (and later the job-file reader) fill `RawJob`s through the option table in
//! `options`; `resolve` applies precedence (job > global > default), parses every value
//! and checks the combination.
pub mod cli_args;
pub mod error;
pub mod options;
pub mod raw;
pub mod resolve;
pub mod spec;

pub use cli_args::parse_fio_args;
pub use error::JobError;
pub use raw::{RawJob, Source};
pub use resolve::{resolve, Resolved};
