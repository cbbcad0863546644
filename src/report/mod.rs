//! Reports: renderings of the model (`crate::model`).
pub mod agg_bw_log;
pub mod cgroup_text;
mod cluster_html;
pub mod cluster_text;
pub mod config;
pub mod findings_text;
pub mod fio_json;
pub mod fio_style;
pub mod html;
pub mod json;
pub mod metric_changes;
pub mod quick;
pub mod repeat_table;
pub mod svg;
pub mod system_text;
pub mod terse;
pub mod text;
pub mod timeline;
