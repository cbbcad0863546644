//! Reports: the model and its renderings.
pub mod model;
