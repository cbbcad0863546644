//! Reports: renderings of the model (`crate::model`). fio's formats are in
//! `fio/`, the human text (fio's normal layout and iolens' own tables) in
//! `text/`, the self-contained page in `html/`; `json` is iolens' own model as
//! it is, `config` and `metric_changes` what comparisons are made of.
pub mod config;
pub mod fio;
pub mod html;
pub mod json;
pub mod metric_changes;
pub mod text;
