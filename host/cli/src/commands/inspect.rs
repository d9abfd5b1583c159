//! `mesh-adopt inspect`: what a plugin is (its digest, size, contract, imports and exports)
//! and, for a module, what its manifest grants it, without running it.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use clap::Args;

use crate::args::{CacheArgs, CatalogueArg};
use crate::exit::ExitStatus;
use mesh_adopt_runtime::Catalogue;
use mesh_adopt_runtime::Limits;
use mesh_adopt_runtime::plugin::CodePolicy;

/// The arguments of `inspect`.
#[derive(Debug, Args)]
#[command(mut_arg("catalogue", |arg| arg.help(
    "The catalogue a module name is looked up in [default: ./catalogue if there is one, else the current directory]"
)))]
pub struct InspectArgs {
    /// A catalogue module's name, a module's directory, or the path of an `adopt.wasm`.
    target: String,
    /// The catalogue a module name is looked up in.
    #[command(flatten)]
    catalogue: CatalogueArg,
    /// The compile cache whose code for the plugin is shown.
    #[command(flatten)]
    cache: CacheArgs,
}

/// Prints what a plugin is, and for a module, what its manifest says of it.
pub fn inspect(args: InspectArgs) -> Result<ExitStatus> {
    let as_path = PathBuf::from(&args.target);
    // A module directory names its catalogue and module: `catalogue/modules/postgres`.
    let in_directory = as_path.join(mesh_adopt_runtime::catalogue::MANIFEST_FILE).is_file().then(|| {
        let module = as_path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let catalogue = as_path.parent().and_then(Path::parent).map(PathBuf::from).unwrap_or_default();
        (catalogue, module)
    });
    let (path, adopt) = if as_path.is_file() {
        (as_path, None)
    } else if in_directory.is_none() && (args.target.contains('/') || args.target.ends_with(".wasm")) {
        bail!("there is no plugin file or module directory at `{}`", as_path.display());
    } else {
        let (catalogue, name) = in_directory.unwrap_or((args.catalogue.dir.clone(), args.target.clone()));
        let module = Catalogue::at(&catalogue).module(&name)?;
        crate::outln!("module       {} ({})", module.name, module.manifest_path.display());
        (module.plugin_path, Some(module.adopt))
    };
    let host = args.cache.host(Limits::default(), CodePolicy::Auto)?;
    let info = host.describe(&path)?;
    crate::outln!("plugin       {}", info.path.display());
    crate::outln!("sha256       {}", info.digest);
    crate::outln!("size         {} bytes", info.size);
    crate::outln!("targets      {}", info.contract.as_deref().unwrap_or("(no mesh:adopt import)"));
    match &info.loads {
        Ok(()) => crate::outln!(
            "loads        yes, on this host (it speaks mesh:adopt@{})",
            mesh_adopt_runtime::plugin::Contract::spoken()
        ),
        Err(why) => crate::outln!("loads        no: {why}"),
    }
    let code: Vec<String> = info
        .cached
        .iter()
        .map(|(kind, size)| format!("{kind}, {:.1} MiB in the compile cache", *size as f64 / f64::from(1 << 20)))
        .collect();
    match code.as_slice() {
        [] if host.has_cache() => crate::outln!("code         none compiled yet: its first run compiles it"),
        [] => crate::outln!("code         (no compile cache)"),
        kinds => crate::outln!("code         {}", kinds.join("\n             ")),
    }
    if let Some(adopt) = adopt {
        let pin = match &adopt.sha256 {
            None => "(not pinned)".to_string(),
            Some(pin) if pin.trim().eq_ignore_ascii_case(&info.digest) => format!("{} (matches)", pin.trim()),
            Some(pin) => format!("{pin} (DIFFERS: the plugin would be refused)"),
        };
        crate::outln!("pinned       {pin}");
        crate::outln!("world        {}", adopt.world.as_deref().unwrap_or("(not declared)"));
        let list = |items: &[String]| if items.is_empty() { "(none)".to_string() } else { items.join(", ") };
        crate::outln!("grants       credentials: {}", list(&adopt.grants.credentials));
        crate::outln!("             inspect: {}", list(&adopt.grants.inspect));
        crate::outln!("             fetch: {}", list(&adopt.grants.fetch));
    }
    crate::outln!("imports      {}", info.imports.join("\n             "));
    crate::outln!("exports      {}", info.exports.join(", "));
    Ok(ExitStatus::Success)
}
