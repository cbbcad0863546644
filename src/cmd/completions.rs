//! `iolens completions SHELL`: the shell's completion script, from the command line's clap definitions.

use super::common::CmdError;
use crate::cli::{Cli, VERSION};
use clap::{Command, CommandFactory};
use clap_complete::Shell;

/// Print `shell`'s completion script for iolens on stdout.
pub(super) fn completions_command(shell: Shell) -> Result<i32, CmdError> {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut offered(Cli::command()), "iolens", &mut script);
    super::common::print(&String::from_utf8_lossy(&script))
}

/// `iolens` as the scripts offer it: without the hidden subcommands (the worker process,
/// the man pages' writer), which clap_complete would list with the others.
fn offered(iolens: Command) -> Command {
    let visible: Vec<Command> = iolens
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .cloned()
        .collect();
    Command::new("iolens").version(VERSION).subcommands(visible)
}
