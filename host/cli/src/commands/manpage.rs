//! `mesh-adopt manpage DIR`: the manual pages, one a command as git has them (`mesh-adopt(1)`,
//! `mesh-adopt-run(1)`, `mesh-adopt-cache-prune(1)`…), made from the definitions the command
//! line is parsed with, so a page says what `--help` says and cannot fall behind it.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};
use clap::Args;
use clap_mangen::Man;

use crate::exit::ExitStatus;

/// The arguments of `manpage`.
#[derive(Debug, Args)]
pub struct ManpageArgs {
    /// The directory the pages are written to, made if missing: a `man1` directory `man`
    /// searches, such as ~/.local/share/man/man1, or any other for `man -l`.
    #[arg(value_name = "DIR")]
    dir: PathBuf,
}

/// The section the pages are in: user commands.
const SECTION: &str = "1";

/// Writes a page for `command` (the whole command line's definition) and one for each of its
/// commands, each over any page of its name, and names each page written on stdout.
pub fn manpage(args: ManpageArgs, command: clap::Command) -> Result<ExitStatus> {
    let dir = &args.dir;
    if dir.exists() && !dir.is_dir() {
        bail!("`{}` is not a directory: the manual pages are written into one", dir.display());
    }
    std::fs::create_dir_all(dir).with_context(|| format!("failed to make the directory `{}`", dir.display()))?;
    // `help` is clap's, not the program's: it has no page.
    let mut command = command.disable_help_subcommand(true);
    command.build();
    let source = format!("{} {}", command.get_name(), command.get_version().unwrap_or_default());
    let mut pages = Vec::new();
    pages_of(&command, source.trim_end(), &mut pages);
    let pages: Vec<(PathBuf, Vec<u8>)> = pages.into_iter().map(|(name, roff)| (dir.join(name), roff)).collect();
    // Every name is looked at before any page is written: a refusal changes nothing.
    for (path, _) in &pages {
        mesh_adopt_runtime::files::output_file(path, "a manual page")?;
    }
    for (path, roff) in pages {
        write_page(&path, &roff)?;
        crate::output::emit(&path.display().to_string());
    }
    Ok(ExitStatus::Success)
}

/// Each page's file name and text: `command`'s, then its commands' in the order `--help` lists
/// them, each followed by its own commands'. Every page names the program and its version at
/// its foot (`source`), a command's page too.
fn pages_of(command: &clap::Command, source: &str, pages: &mut Vec<(String, Vec<u8>)>) {
    let man = Man::new(command.clone()).section(SECTION).source(source);
    let mut roff = Vec::new();
    man.render(&mut roff).expect("rendering into memory does not fail");
    pages.push((man.get_filename(), roff));
    for sub in command.get_subcommands().filter(|sub| !sub.is_hide_set()) {
        pages_of(sub, source, pages);
    }
}

/// Writes one page in place of whatever page of its name was there, readable by everyone as
/// a manual page is: written beside it and renamed over it, so a reader never sees half a
/// page, and refused, naming it, where the name is taken by anything but a regular file.
fn write_page(path: &Path, roff: &[u8]) -> Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    mesh_adopt_runtime::files::output_file(path, "a manual page")?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let failed = || format!("failed to write the manual page `{}`", path.display());
    let mut file = tempfile::NamedTempFile::new_in(dir).with_context(failed)?;
    file.write_all(roff).with_context(failed)?;
    file.as_file().set_permissions(std::fs::Permissions::from_mode(0o644)).with_context(failed)?;
    file.persist(path).map_err(|e| e.error).with_context(failed)?;
    Ok(())
}
