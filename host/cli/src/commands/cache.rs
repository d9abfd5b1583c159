//! `mesh-adopt cache`: the compile cache's upkeep. `optimise` makes the optimised code that a
//! big plugin's first run goes without (it runs on Winch's baseline code so as not to wait
//! for Cranelift), where no run waits for it: once per deployment, or in a catalogue's CI.
//! `prune` holds the directory to a size.

use std::path::PathBuf;

use anyhow::{Context as _, Result, bail};
use clap::{Args, Subcommand};

use crate::args::CatalogueArg;
use crate::exit::ExitStatus;
use mesh_adopt_runtime::plugin::CompileCache;
use mesh_adopt_runtime::plugin::DEFAULT_BOUND;
use mesh_adopt_runtime::{Catalogue, Limits, PluginHost};

/// The arguments of `cache`.
#[derive(Debug, Args)]
pub struct CacheArgs {
    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, Subcommand)]
enum Action {
    /// Compile modules' plugins to optimised code into the compile cache, where it is not
    /// there yet, so that no run waits for it.
    Optimise(OptimiseArgs),
    /// Remove what the cache holds longest unused until it holds at most a size, and what
    /// crashed processes left in it.
    Prune(PruneArgs),
}

/// `--cache DIR`, the cache the upkeep is for.
#[derive(Debug, Args)]
struct CacheDir {
    /// The compile cache [default: $XDG_CACHE_HOME/mesh-adopt, else ~/.cache/mesh-adopt].
    #[arg(long, value_name = "DIR")]
    cache: Option<PathBuf>,
}

impl CacheDir {
    fn open(&self) -> Result<CompileCache> {
        let Some(dir) = self.cache.clone().or_else(CompileCache::default_dir) else {
            bail!("there is no default compile cache (no HOME or XDG_CACHE_HOME): pass --cache DIR");
        };
        Ok(CompileCache::open(&dir)?)
    }
}

#[derive(Debug, Args)]
struct OptimiseArgs {
    /// The modules whose plugins to optimise [default: every module of the catalogue].
    modules: Vec<String>,
    #[command(flatten)]
    catalogue: CatalogueArg,
    #[command(flatten)]
    cache: CacheDir,
}

#[derive(Debug, Args)]
struct PruneArgs {
    /// The most the cache may hold after pruning: bytes, or a number with K, M or G
    /// [default: 1G, the bound every compile holds it to].
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    to: Option<u64>,
    #[command(flatten)]
    cache: CacheDir,
}

/// Runs `cache optimise` or `cache prune`.
pub fn cache(args: CacheArgs) -> Result<ExitStatus> {
    match args.action {
        Action::Optimise(args) => optimise(args),
        Action::Prune(args) => prune(args),
    }
}

fn optimise(args: OptimiseArgs) -> Result<ExitStatus> {
    args.catalogue.require_dir()?;
    let catalogue = Catalogue::at(&args.catalogue.dir);
    let modules =
        if args.modules.is_empty() { catalogue.module_names().unwrap_or_default() } else { args.modules.clone() };
    if modules.is_empty() {
        bail!("the catalogue `{}` has no modules", args.catalogue.dir.display());
    }
    // Every module is found before anything is compiled: a name that is not one changes
    // nothing, and every such name is said.
    let (found, missing): (Vec<_>, Vec<_>) = modules.iter().map(|name| catalogue.module(name)).partition(Result::is_ok);
    let found: Vec<_> = found.into_iter().flatten().collect();
    if !missing.is_empty() {
        let why: Vec<String> = missing.into_iter().filter_map(Result::err).map(|e| format!("{e:#}")).collect();
        bail!("nothing was optimised: {}", why.join("; "));
    }
    let host = PluginHost::cached(Limits::default(), args.cache.open()?).context("failed to start the plugin host")?;
    // A compile cannot be stopped half-way: an interrupt (taken over as every command starts)
    // ends the program between (or, after a moment, during) compiles, with exit 130, and what
    // was compiled before stays.
    let mut failed = 0;
    for module in &found {
        let name = &module.name;
        match host.optimise(&module.plugin_path, module.adopt.sha256.as_deref()) {
            Ok(done) => {
                let how = match done.compiled {
                    Some(took) => format!("compiled by cranelift in {:.1} s", took.as_secs_f64()),
                    None => "in the cache already".to_string(),
                };
                crate::outln!("optimised {name:<16} sha256 {}  {how}", done.digest);
            }
            // Each module's plugin is its own: one that cannot be optimised leaves the others
            // to be, and the command says every one that was not.
            Err(e) => {
                failed += 1;
                crate::errln!("error: the `{name}` module's plugin was not optimised: {:#}", anyhow::Error::from(e));
            }
        }
    }
    Ok(if failed == 0 { ExitStatus::Success } else { ExitStatus::Unusable })
}

fn prune(args: PruneArgs) -> Result<ExitStatus> {
    if let Some(dir) = args.cache.cache.clone().or_else(CompileCache::default_dir)
        && !dir.exists()
    {
        crate::outln!("there is no compile cache at `{}`: nothing to prune", dir.display());
        return Ok(ExitStatus::Success);
    }
    let cache = args.cache.open()?;
    let bound = args.to.unwrap_or(DEFAULT_BOUND);
    let pruned = cache.prune(bound)?;
    let mib = |bytes: u64| bytes as f64 / f64::from(1 << 20);
    crate::outln!(
        "removed {} file{} ({:.1} MiB); `{}` holds {:.1} MiB of compiled code (at most {:.1} MiB)",
        pruned.removed.len(),
        if pruned.removed.len() == 1 { "" } else { "s" },
        mib(pruned.freed),
        cache.dir().display(),
        mib(pruned.kept),
        mib(bound)
    );
    Ok(ExitStatus::Success)
}

/// Reads a size: bytes, or a whole number with `K`, `M` or `G` (binary: 1K is 1024 bytes).
fn parse_size(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    let (number, unit) = match trimmed.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((at, _)) => trimmed.split_at(at),
        None => (trimmed, ""),
    };
    let shift = match unit.trim().to_ascii_uppercase().trim_end_matches("IB").trim_end_matches('B') {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        _ => return Err(format!("`{text}` is not a size: write bytes, or a number with K, M or G")),
    };
    if number.is_empty() {
        return Err(format!("`{text}` is not a size: it starts with no number"));
    }
    let number: u64 = number.parse().map_err(|_| format!("`{text}` is too big"))?;
    number.checked_mul(1 << shift).ok_or_else(|| format!("`{text}` is too big"))
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes_are_read_in_bytes_and_binary_units() {
        assert_eq!(parse_size("1000"), Ok(1000));
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("2G"), Ok(2 << 30));
        assert_eq!(parse_size("64KiB"), Ok(64 << 10));
        assert_eq!(parse_size("0"), Ok(0));
        assert!(parse_size("lots").is_err());
        assert!(parse_size("5T").is_err());
        assert_eq!(parse_size("99999999999G"), Err("`99999999999G` is too big".to_string()));
        assert_eq!(parse_size("99999999999999999999"), Err("`99999999999999999999` is too big".to_string()));
    }
}
