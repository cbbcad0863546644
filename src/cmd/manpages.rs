//! `iolens manpages DIR` (hidden; packaging/build-deb runs it): the man pages, from the
//! command line's clap definitions.

use super::common::CmdError;
use super::EXIT_OK;
use crate::cli::Cli;
use clap::CommandFactory;
use clap_mangen::Man;
use std::path::Path;

/// Write iolens.1 and iolens-SUBCOMMAND.1 for each subcommand (not the hidden ones) into `dir`.
pub(super) fn manpages_command(dir: &Path) -> Result<i32, CmdError> {
    let failed = |e: std::io::Error| {
        CmdError::run_failed(format!(
            "cannot write the man pages into {}: {e}",
            dir.display()
        ))
    };
    std::fs::create_dir_all(dir).map_err(failed)?;
    // As clap_mangen::generate_to, but every page's footer names the version (clap gives
    // only the top command one: `run` has fio's own -v/--version).
    let mut iolens = Cli::command().disable_help_subcommand(true);
    iolens.build();
    let source = format!("iolens {}", iolens.get_version().unwrap_or_default());
    let pages = std::iter::once(iolens.clone()).chain(
        iolens
            .get_subcommands()
            .filter(|s| !s.is_hide_set())
            .cloned(),
    );
    for page in pages {
        Man::new(page)
            .source(source.clone())
            .manual("iolens manual")
            .generate_to(dir)
            .map_err(failed)?;
    }
    Ok(EXIT_OK)
}
