//! Integration tests: run the real binary on real files and devices.

mod bad_input;
mod blockdev;
mod cli;
mod engines;
mod errors;
mod history;
mod jobfiles;
mod observe;
mod options;
mod outputs;
mod pacing;
mod processes;
mod safety;
mod support;
mod verify;
