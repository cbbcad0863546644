//! What a package installs beside the binary, written by the binary itself: the shell
//! completions (`iolens completions SHELL`), the man pages (hidden `iolens manpages DIR`),
//! and `--version`'s line.

use crate::support::{iolens, isolated, scratch, stderr, stdout};
use std::path::Path;
use std::process::Output;

/// The subcommands `iolens --help` lists (its own `help` aside): those a user sees, and so
/// those the completions offer and the man pages cover.
fn listed_subcommands() -> Vec<String> {
    let help = stdout(&iolens(&["--help"]));
    help.lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

/// The long flags `iolens SUBCOMMAND --help` lists (`--help` aside).
fn long_flags(subcommand: &str) -> Vec<String> {
    let help = stdout(&iolens(&[subcommand, "--help"]));
    help.lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with('-'))
        .filter_map(|l| l.split([' ', ',']).find(|w| w.starts_with("--")))
        // `--cmdhelp[=<OPTION>]`: the name alone
        .map(|w| {
            w.chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect::<String>()
        })
        .filter(|flag| flag != "--help")
        .collect()
}

/// `iolens completions SHELL`, which must succeed: its script.
fn completion_script(shell: &str) -> String {
    let out = iolens(&["completions", shell]);
    assert!(
        out.status.success(),
        "expected `iolens completions {shell}` to succeed, saw: {}",
        stderr(&out)
    );
    stdout(&out)
}

/// `program ARGS…` when the program is installed; None (and a note why) when it is not.
fn if_installed(program: &str, args: &[&str]) -> Option<Output> {
    match isolated(program).args(args).output() {
        Ok(out) => Some(out),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            eprintln!(
                "skipped: `{program} {}`: {program} is not installed",
                args.join(" ")
            );
            None
        }
        Err(e) => panic!("cannot run {program}: {e}"),
    }
}

#[test]
fn bash_loads_the_completion_script_and_binds_it_to_iolens() {
    let dir = scratch();
    let script = dir.path().join("iolens.bash");
    std::fs::write(&script, completion_script("bash")).unwrap();
    let out = isolated("bash")
        .arg("-c")
        .arg(r#"source "$1" && complete -p iolens"#)
        .arg("bash")
        .arg(&script)
        .output()
        .expect("run bash");
    assert!(
        out.status.success(),
        "expected bash to load the script and know a completion for iolens, saw: {}",
        stderr(&out)
    );
    let bound = stdout(&out);
    let function = bound
        .split_whitespace()
        .skip_while(|w| *w != "-F")
        .nth(1)
        .unwrap_or_else(|| panic!("expected `complete -F FUNCTION iolens`, saw: {bound}"));
    assert!(
        bound.trim_end().ends_with(" iolens") && function.contains("iolens"),
        "expected the completion function bound to iolens, saw: {bound}"
    );
}

#[test]
fn the_zsh_and_fish_scripts_offer_the_subcommands_and_parse() {
    let subcommands = listed_subcommands();
    assert!(
        subcommands.len() > 5 && subcommands.iter().any(|s| s == "completions"),
        "expected --help to list the subcommands, saw: {subcommands:?}"
    );
    let dir = scratch();
    for shell in ["zsh", "fish"] {
        let script = completion_script(shell);
        for subcommand in &subcommands {
            assert!(
                script.contains(subcommand.as_str()),
                "expected the {shell} script to offer `{subcommand}`"
            );
        }
        assert!(
            !script.contains("__worker") && !script.contains("manpages"),
            "expected the {shell} script to leave out the hidden subcommands"
        );
        let file = dir.path().join(format!("iolens.{shell}"));
        std::fs::write(&file, &script).unwrap();
        if let Some(out) = if_installed(shell, &["-n", &file.to_string_lossy()]) {
            assert!(
                out.status.success(),
                "expected `{shell} -n` to accept the script, saw: {}",
                stderr(&out)
            );
        }
    }
}

#[test]
fn an_unknown_shell_is_refused_in_one_line_naming_the_shells() {
    let out = iolens(&["completions", "nosuchshell"]);
    assert_eq!(out.status.code(), Some(2), "saw: {}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "expected one line, saw: {err}"
    );
    for shell in ["nosuchshell", "bash", "zsh", "fish"] {
        assert!(
            err.contains(shell),
            "expected the error to name {shell}, saw: {err}"
        );
    }
    assert!(stdout(&out).is_empty());
}

#[test]
fn the_man_pages_cover_iolens_and_each_subcommand_with_its_options() {
    let dir = scratch();
    let pages = dir.path().join("man1");
    let out = iolens(&["manpages", &pages.to_string_lossy()]);
    assert!(out.status.success(), "saw: {}", stderr(&out));
    let mut written: Vec<String> = std::fs::read_dir(&pages)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    written.sort();
    let subcommands = listed_subcommands();
    let mut expected: Vec<String> = subcommands
        .iter()
        .map(|s| format!("iolens-{s}.1"))
        .chain(["iolens.1".to_string()])
        .collect();
    expected.sort();
    assert_eq!(
        written, expected,
        "expected iolens.1 and a page per subcommand"
    );

    check_page(
        &pages.join("iolens.1"),
        "iolens",
        &["--version".to_string()],
    );
    for subcommand in &subcommands {
        let page = pages.join(format!("iolens-{subcommand}.1"));
        check_page(
            &page,
            &format!("iolens-{subcommand}"),
            &long_flags(subcommand),
        );
    }
}

/// `page` is a man page in roff titled `title`, documenting each of `flags`; `man -l`
/// renders it when man is installed.
fn check_page(page: &Path, title: &str, flags: &[String]) {
    let roff = std::fs::read_to_string(page).unwrap();
    for request in [
        format!(".TH {title} 1 "),
        ".SH NAME\n".into(),
        ".SH SYNOPSIS\n".into(),
    ] {
        assert!(
            roff.contains(&request),
            "expected {} to have `{}`",
            page.display(),
            request.trim_end()
        );
    }
    for flag in flags {
        // roff writes a minus sign as \-
        assert!(
            roff.contains(&flag.replace('-', "\\-")),
            "expected {} to document {flag}",
            page.display()
        );
    }
    let Some(out) = if_installed("man", &["-l", &page.to_string_lossy()]) else {
        return;
    };
    let text = stdout(&out);
    assert!(
        out.status.success() && text.contains("NAME") && text.contains(title),
        "expected `man -l {}` to render it, saw: {}{text}",
        page.display(),
        stderr(&out)
    );
}

#[test]
fn version_names_the_version_the_commit_and_the_mpi_feature() {
    let mpi = if cfg!(feature = "mpi") { "yes" } else { "no" };
    for flag in ["--version", "-V"] {
        let out = iolens(&[flag]);
        assert!(out.status.success(), "saw: {}", stderr(&out));
        let line = stdout(&out);
        let commit = line
            .strip_prefix(&format!("iolens {} (git ", env!("CARGO_PKG_VERSION")))
            .and_then(|rest| rest.strip_suffix(&format!(", mpi: {mpi})\n")))
            .unwrap_or_else(|| {
                panic!("expected `iolens VERSION (git COMMIT, mpi: {mpi})`, saw: {line:?}")
            });
        assert!(
            commit == "unknown"
                || (commit.len() >= 7 && commit.chars().all(|c| c.is_ascii_hexdigit())),
            "expected an abbreviated commit or `unknown`, saw: {commit:?}"
        );
        // Built in a git checkout: that checkout's commit.
        let head = isolated("git")
            .args([
                "-C",
                env!("CARGO_MANIFEST_DIR"),
                "rev-parse",
                "--short",
                "HEAD",
            ])
            .output()
            .ok()
            .filter(|h| h.status.success());
        if let Some(head) = head {
            assert_eq!(commit, stdout(&head).trim(), "expected HEAD's commit");
        }
    }
}
