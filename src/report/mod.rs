//! Reports: the model and its renderings.
pub mod fio_style;
pub mod model;
pub mod text;
