//! Watching the system: pure parsers of kernel files plus thin readers.
pub mod diskstats;
