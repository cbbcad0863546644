//! `tunables-changed`: a `vm.dirty_*` setting changed while the run went on
//! (another process set it), so buffered results mix two regimes.

use crate::model::{Finding, RunReport, Severity};

pub(super) fn tunables_changed(report: &RunReport) -> Option<Finding> {
    let changes = &report.observations.tunable_changes;
    if changes.is_empty() {
        return None;
    }
    Some(Finding {
        code: "tunables-changed".into(),
        severity: Severity::Warning,
        title: format!(
            "{} vm.dirty_* setting(s) changed during the run",
            changes.len()
        ),
        evidence: changes
            .iter()
            .map(|c| format!("t={:.1} s: {} {} -> {}", c.t_ns as f64 / 1e9, c.name, c.from, c.to))
            .collect(),
        advice: "something else on the machine changed the dirty-page limits; find it, or repeat the run when nothing does".into(),
        at_ns: Some(changes[0].t_ns),
    })
}

#[cfg(test)]
mod tests {
    use super::super::fixture::*;
    use super::*;
    use crate::model::TunableChange;

    #[test]
    fn a_change_is_reported_with_its_time() {
        let mut report = run(2);
        report.observations.tunable_changes.push(TunableChange {
            t_ns: 28_000_000_000,
            name: "vm.dirty_bytes".into(),
            from: "100663296".into(),
            to: "0".into(),
        });
        let found = tunables_changed(&report).unwrap();
        assert_eq!(found.evidence, ["t=28.0 s: vm.dirty_bytes 100663296 -> 0"]);
        assert_eq!(found.at_ns, Some(28_000_000_000));
    }

    #[test]
    fn silent_without_changes() {
        assert_eq!(tunables_changed(&run(2)), None);
    }
}
