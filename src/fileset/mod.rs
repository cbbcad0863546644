//! Targets: lay out, open once, size and sector detection, alignment checks.
