//! `mesh-adopt build`: each module's plugin built from the source its manifest names, loaded
//! on this host before it is placed, then placed beside the manifest and pinned in it;
//! with `--check`, built the same way and only compared with what is placed, for a
//! catalogue's CI.
//!
//! The steps are this file's: each module's source located ([`source`]), built by its
//! language's toolchain and loaded ([`toolchain`]), then staged and placed with its pin
//! ([`place`], [`pin`]). Every module asked for is built and loaded before any is placed, so
//! a build that fails half-way through a catalogue leaves every module as it was.

mod pin;
mod place;
pub mod source;
mod source_identity;
mod toolchain;

use anyhow::{Context as _, Result, bail};
use clap::Args;

use crate::args::{CacheArgs, CatalogueArg, CodeArg, CodeArgs};
use crate::exit::ExitStatus;
use std::path::Path;

use mesh_adopt_runtime::Catalogue;
use mesh_adopt_runtime::Limits;
use mesh_adopt_runtime::catalogue::sha256_hex;
use mesh_adopt_runtime::files::read_bounded;
use mesh_adopt_runtime::plugin::PLUGIN_BYTES;

use place::Verdict;
use toolchain::Built;

/// The arguments of `build`.
#[derive(Debug, Args)]
pub struct BuildArgs {
    /// Modules to build [default: every module whose manifest names its source].
    modules: Vec<String>,
    /// The catalogue whose modules are built.
    #[command(flatten)]
    catalogue: CatalogueArg,
    /// Place nothing: build, and exit 1 if a placed plugin or its pin is not what its source
    /// builds to (for a catalogue's CI).
    #[arg(long)]
    check: bool,
    /// Leave the manifests' pins alone: for a checkout whose plugins are build products
    /// rather than shipped files.
    #[arg(long)]
    no_pin: bool,
    /// Where the builds' compiled forms are kept, for the runs that follow.
    #[command(flatten)]
    cache: CacheArgs,
    /// Which native code plugins run as.
    #[command(flatten)]
    code: CodeArgs,
}

/// Builds the modules' plugins, loads each, then places and pins them all; with `--check`,
/// compares instead. Exit 1 when a check finds a module stale.
pub fn build(args: BuildArgs) -> Result<ExitStatus> {
    let catalogue = Catalogue::at(&args.catalogue.dir);
    args.catalogue.require_dir()?;
    let sources = if args.modules.is_empty() {
        let found = source::modules_with_source(&catalogue)?;
        if found.is_empty() {
            bail!(
                "no module of the catalogue `{}` names its plugin's source (`adopt.source` in its manifest)",
                args.catalogue.dir.display()
            );
        }
        found
    } else {
        args.modules.iter().map(|m| source::locate(&catalogue, m)).collect::<Result<_>>()?
    };
    // A build is where optimised code is made: nobody waits on a run for it after. `--check`
    // only compares, so it takes the quickest code.
    let code = if args.check { CodeArg::Auto } else { CodeArg::Optimised };
    let host = args.cache.host(Limits::default(), args.code.policy(code))?;
    let shared_target = args.catalogue.dir.join("target");
    let mut built = Vec::with_capacity(sources.len());
    for source in sources {
        crate::errln!("building {} from {}", source.module, source.source.display());
        // A failed build places nothing: the plugin placed before is still what runs and tests
        // load, which the error says rather than leave to be found.
        let before = placed_before(&source.plugin_path);
        let module = source.module.clone();
        built.push(
            toolchain::build(&host, source, &shared_target, args.check)
                .with_context(|| format!("the `{module}` module was not built; nothing was placed{before}"))?,
        );
    }
    if args.check {
        let mut fresh = true;
        for one in &built {
            match place::verdict(one, !args.no_pin) {
                Verdict::Matches => {
                    crate::outln!("ok     {:<16} sha256 {}", one.source.module, one.digest)
                }
                Verdict::Stale(why) => {
                    fresh = false;
                    crate::outln!("STALE  {:<16} {why}", one.source.module);
                }
            }
        }
        return Ok(ExitStatus::of(fresh));
    }
    // A pin the build would not match, left in place, would have every run refuse the module.
    if args.no_pin
        && let Some(one) = built.iter().find(|b| b.source.pin.as_ref().is_some_and(|p| p != &b.digest))
    {
        bail!(
            "the `{}` module's manifest `{}` pins {}, and its source builds to {}: build without --no-pin to pin \
             the new build, or take the pin out; nothing was placed",
            one.source.module,
            one.source.manifest_path.display(),
            one.source.pin.as_deref().unwrap_or_default(),
            one.digest
        );
    }
    // A module whose placed plugin is this very build, pinned as asked, has nothing to place.
    let (unchanged, changed): (Vec<&Built>, Vec<&Built>) = built.iter().partition(|one| {
        placed_digest(&one.source.plugin_path).as_deref() == Some(one.digest.as_str())
            && (args.no_pin || one.source.pin.as_deref() == Some(one.digest.as_str()))
    });
    for one in unchanged {
        // Marked as built now: it is what the source builds to, so `test` need not say the
        // source changed after it. Its bytes are not touched; a file that cannot be marked
        // only leaves that warning in place.
        let _ = std::fs::File::options()
            .write(true)
            .open(&one.source.plugin_path)
            .and_then(|placed| placed.set_modified(std::time::SystemTime::now()));
        crate::outln!(
            "unchanged {:<13} {:>9} bytes  sha256 {}  {} is this build",
            one.source.module,
            one.size,
            one.digest,
            one.source.plugin_path.display()
        );
    }
    let staged: Vec<_> = changed.iter().map(|one| place::stage(one, !args.no_pin)).collect::<Result<_>>()?;
    let mut placed: Vec<&str> = Vec::new();
    for (one, staged) in changed.into_iter().zip(staged) {
        let repinned = staged.place().with_context(|| match placed.as_slice() {
            [] => "nothing was placed".to_string(),
            done => format!("{} placed before this; the modules after it were not", done.join(", ")),
        })?;
        placed.push(&one.source.module);
        let pin = match (args.no_pin, repinned) {
            (true, _) => "",
            (false, true) => ", pinned",
            (false, false) => ", pin unchanged",
        };
        crate::outln!(
            "placed {:<16} {:>9} bytes  sha256 {}  {}{pin}",
            one.source.module,
            one.size,
            one.digest,
            one.source.plugin_path.display()
        );
    }
    Ok(ExitStatus::Success)
}

/// The sha256 of the plugin placed at `path`, if there is one that can be read.
fn placed_digest(path: &Path) -> Option<String> {
    let bytes = read_bounded(path, PLUGIN_BYTES).ok()?;
    Some(sha256_hex(&bytes))
}

/// What a failed build leaves in place, for its error: the plugin placed before, if any.
fn placed_before(path: &Path) -> String {
    match placed_digest(path) {
        Some(digest) => format!(
            ": `{}` is still the plugin built before (sha256 {}), which runs and `mesh-adopt test` load until a \
             build succeeds",
            path.display(),
            digest
        ),
        None => String::new(),
    }
}
