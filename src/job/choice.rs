//! Choice options as types. A choice option's words live once, in the `Choice` impl of
//! the type its resolver reads (`choice_words!` beside that type); the option table takes
//! its `Kind::Choice` list from there (`Kind::Choice(RwPattern::NAMES)`) and
//! `Layers::choice` hands the resolver the value, so a word cannot be listed without a
//! meaning or mean something by default.

/// A choice option's value as a type.
pub(crate) trait Choice: Copy + 'static {
    /// Every word the option accepts (aliases included) with the value it stands for,
    /// in the order the help lists them.
    const WORDS: &'static [(&'static str, Self)];
    /// The words of `WORDS` alone, in the same order: the option table's choice list.
    const NAMES: &'static [&'static str];

    #[cfg(test)]
    /// The value `word` stands for; `None` for a word the option does not accept.
    fn named(word: &str) -> Option<Self> {
        Self::WORDS
            .iter()
            .find(|(known, _)| *known == word)
            .map(|&(_, value)| value)
    }
}

/// `impl Choice` for a type from its words in help order, each with its value:
/// `choice_words!(SyncMode { "0" => SyncMode::None, "none" => SyncMode::None, … })`.
macro_rules! choice_words {
    ($type:ty { $($word:literal => $value:expr,)+ }) => {
        impl $crate::job::choice::Choice for $type {
            const WORDS: &'static [(&'static str, Self)] = &[$(($word, $value),)+];
            const NAMES: &'static [&'static str] = &[$($word,)+];
        }
    };
}
pub(crate) use choice_words;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::options::{Kind, Status, OPTIONS};
    use crate::job::resolve::tests::{job, run};
    use crate::job::spec::*;
    use std::fmt::Debug;

    /// What `option=word` needs to make a job that reads it: the `:parameter` after the
    /// word and the other options.
    fn completion(option: &str, word: &str) -> (&'static str, &'static [&'static str]) {
        match (option, word) {
            ("random_distribution", "zipf") => (":1.2", &[]),
            ("random_distribution", "pareto") => (":0.5", &[]),
            ("random_distribution", "normal") => (":10", &[]),
            ("random_distribution", "zoned") => (":60/10:40/90", &[]),
            ("random_distribution", "sequence") => (":2,0,1", &[]),
            ("steadystate", _) => (":5%", &["--ss_dur=10s"]),
            ("zonemode", "strided") => ("", &["--zonesize=16m"]),
            ("verify", "pattern" | "pattern_hdr") => ("", &["--verify_pattern=0xff"]),
            _ => ("", &[]),
        }
    }

    #[test]
    fn every_listed_word_of_every_choice_option_resolves() {
        let supported = OPTIONS.iter().filter(|d| d.status == Status::Supported);
        for def in supported {
            let Kind::Choice(words) = def.kind else {
                continue;
            };
            for word in words {
                let (parameter, others) = completion(def.name, word);
                let arg = format!("--{}={word}{parameter}", def.name);
                let mut args = vec!["--name=t", "--filename=/tmp/f", &arg];
                args.extend_from_slice(others);
                let resolved = run(&args);
                assert!(
                    resolved.is_ok(),
                    "expected {args:?} to resolve to a job, saw {resolved:?}"
                );
            }
        }
    }

    fn words_name_their_values<T: Choice + PartialEq + Debug>() {
        let names: Vec<&str> = T::WORDS.iter().map(|&(word, _)| word).collect();
        assert_eq!(
            names,
            T::NAMES,
            "expected NAMES to be the words of WORDS in order, saw otherwise"
        );
        for &(word, value) in T::WORDS {
            assert_eq!(
                T::named(word),
                Some(value),
                "expected '{word}' to name {value:?}, saw another value (a word listed twice?)"
            );
        }
        assert_eq!(
            T::named("nosuch"),
            None,
            "expected 'nosuch' to name nothing"
        );
    }

    #[test]
    fn every_choice_type_s_words_parse_back_to_their_values() {
        words_name_their_values::<RwPattern>();
        words_name_their_values::<RwSequencer>();
        words_name_their_values::<DistributionWord>();
        words_name_their_values::<FileServiceWord>();
        words_name_their_values::<RateProcess>();
        words_name_their_values::<ThinktimeCounts>();
        words_name_their_values::<ZoneMode>();
        words_name_their_values::<ExitWhat>();
        words_name_their_values::<SteadyCriterion>();
        words_name_their_values::<SyncMode>();
        words_name_their_values::<Fallocate>();
        words_name_their_values::<FadviseHint>();
        words_name_their_values::<UnifiedRw>();
        words_name_their_values::<CpuPolicy>();
        words_name_their_values::<Option<VerifyKind>>();
        words_name_their_values::<EngineKind>();
        words_name_their_values::<crate::units::KbBase>();
    }

    #[test]
    #[should_panic(expected = "sync is read as another option's choice")]
    fn reading_an_option_as_another_option_s_type_is_caught() {
        use crate::job::layers::Layers;
        use crate::job::options::opt;
        use crate::job::raw::{RawJob, Source};
        let (job, global) = (
            RawJob::new("a", Source::Argument(1)),
            RawJob::new("global", Source::Argument(1)),
        );
        let layers = Layers::new(&job, &global).expect("an empty job has valid layers");
        let _ = layers.choice::<Fallocate>(opt::SYNC);
    }

    /// Each word of `option`, aliases included, reaches the job as its value.
    fn each_word_reaches_the_job<T: Choice + PartialEq + Debug>(
        option: &str,
        extra: &[&str],
        field: impl Fn(&JobSpec) -> T,
    ) {
        for &(word, value) in T::WORDS {
            let arg = format!("--{option}={word}");
            let mut args = vec![arg.as_str()];
            args.extend_from_slice(extra);
            let seen = field(&job(&args));
            assert_eq!(
                seen, value,
                "expected {option}={word} to give {value:?}, saw {seen:?}"
            );
        }
    }

    #[test]
    fn aliases_reach_the_job_as_the_values_they_stand_for() {
        each_word_reaches_the_job("rw", &[], |j| j.workload.rw);
        each_word_reaches_the_job("sync", &[], |j| j.io.sync);
        each_word_reaches_the_job("fallocate", &[], |j| j.files.fallocate);
        each_word_reaches_the_job("fadvise_hint", &[], |j| j.files.fadvise);
        each_word_reaches_the_job("unified_rw_reporting", &[], |j| j.measure.unified_rw);
        each_word_reaches_the_job("exit_what", &[], |j| j.control.exit_what);
        each_word_reaches_the_job("rate_process", &[], |j| j.pacing.rate_process);
        each_word_reaches_the_job("ioengine", &[], |j| j.engine.kind);
        each_word_reaches_the_job("verify", &["--verify_pattern=0xff"], |j| {
            j.verify.as_ref().map(|v| v.kind)
        });
    }
}
