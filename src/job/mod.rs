//! Jobs: text → `RawJob` → `Layers` → `JobSpec`.
//!
//! The front ends (`front`: command line and job files) fill `RawJob`s through the
//! option table in `options`; `layers` gives each option's value in effect (job >
//! global > default); `resolve` runs each section's resolver in `spec` and the checks
//! that span sections.
pub(crate) mod choice;
pub(crate) mod error;
pub(crate) mod front;
mod layers;
pub(crate) mod options;
pub(crate) mod raw;
pub(crate) mod resolve;
pub(crate) mod spec;

pub(crate) use front::cli_args::parse_command_line;
pub(crate) use raw::{LayeredJob, RawJob, Source};
pub(crate) use resolve::{resolve, resolve_layered};
