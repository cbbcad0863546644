//! Integration tests: run the real binary on real files and devices.

mod blockdev;
mod cli;
mod engines;
mod observe;
mod pacing;
mod support;
