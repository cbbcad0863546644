//! Jobs: text → `RawJob` → `Layers` → `JobSpec`.
//!
//! The front ends (`front`: command line and job files) fill `RawJob`s through the
//! option table in `options`; `layers` gives each option's value in effect (job >
//! global > default); `resolve` runs each section's resolver in `spec` and the checks
//! that span sections.
pub mod choice;
pub mod error;
pub mod front;
mod layers;
pub mod options;
pub mod raw;
pub mod resolve;
pub mod spec;

pub use error::JobError;
pub use front::cli_args::{parse_command_line, parse_fio_args, CommandLine};
pub use raw::{LayeredJob, RawJob, Source};
pub use resolve::{resolve, resolve_layered, Resolved};
