//! Integration tests: run the real binary on real files and devices.

mod bad_input;
mod blockdev;
mod cli;
mod diagnose;
mod differential;
mod engines;
mod errors;
mod fio_match;
mod fio_offsets;
mod history;
mod jobfiles;
mod observe;
mod options;
mod outputs;
mod pacing;
mod pipes;
mod processes;
mod quick;
mod safety;
mod samples;
mod saved_formats;
mod scenario_support;
mod scenarios;
mod support;
mod verify;
mod watchdog;
