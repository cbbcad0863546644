//! Offsets, block sizes, pacing, buffer contents.
