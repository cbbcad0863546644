//! Jobs: raw options from the front ends, resolved into `JobSpec`.
pub mod spec;
