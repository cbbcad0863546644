//! clap front end.
