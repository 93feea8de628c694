//! `opbuilder man`: the manual pages, made from the same clap definition as `--help`.

use crate::out::outln;
use anyhow::{Context, Result};
use std::io::Write;
use std::path::Path;

/// Print the page of `cli` (roff) on stdout, or write it and one page per subcommand
/// (`opbuilder-create-api.1`, ...) into `dir`, creating the directory when it is missing.
pub fn run(cli: clap::Command, dir: Option<&Path>) -> Result<()> {
    match dir {
        None => {
            let mut page = vec![];
            clap_mangen::Man::new(cli).render(&mut page)?;
            // A closed pipe (`opbuilder man | head`) is not an error worth a message.
            let _ = std::io::stdout().write_all(&page);
        }
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("--dir {}: cannot create the directory", dir.display()))?;
            clap_mangen::generate_to(cli, dir)
                .with_context(|| format!("--dir {}: cannot write the pages", dir.display()))?;
            outln!(
                "Wrote the manual pages to {}; `man opbuilder` finds them when that directory is a man1 \
                 directory on the manual path (for example ~/.cargo/share/man/man1 next to ~/.cargo/bin).",
                dir.display()
            );
        }
    }
    Ok(())
}
