//! `mesh-adopt new`: a module started in a catalogue, its manifest, its plugin's source and
//! scenarios that pass as written, with the commands to run next.
//!
//! The steps are this file's: the request read, the module written ([`scaffold`]) from its
//! language's templates ([`templates`]), then what was written and what to run next said.

mod scaffold;
mod templates;

use anyhow::Result;
use clap::Args;

use crate::args::{CatalogueArg, default_catalogue};
use crate::commands::language::Language;
use crate::exit::ExitStatus;

/// The arguments of `new`.
#[derive(Debug, Args)]
#[command(mut_arg("catalogue", |arg| arg.help(
    "The catalogue checkout to add `modules/<module>/` to [default: ./catalogue if there is one, else the current \
     directory]"
)))]
pub struct NewArgs {
    /// The module's name, e.g. `object-store`.
    module: String,
    /// The catalogue the module is added to.
    #[command(flatten)]
    catalogue: CatalogueArg,
    /// Start from the adopt-in-place rules for the foundation bundle's container BUNDLE-ID:
    /// matched by name and image, its credential handed over, waited for after the push.
    #[arg(long, value_name = "BUNDLE-ID")]
    adopts: Option<String>,
    /// Where the plugin takes the SDK from: `path:DIR`, `git:URL`, or a version [default: the
    /// SDK this mesh-adopt was built with, by path, when it is on this machine].
    #[arg(long, value_name = "SPEC")]
    sdk: Option<String>,
    /// The plugin's language: `rust` (a crate), `js` (an npm package, built by
    /// componentize-js) or `python` (a project, built by componentize-py).
    #[arg(long, value_name = "LANG", value_enum, default_value_t = Language::Rust, hide_possible_values = true)]
    lang: Language,
}

/// Writes a new module into a catalogue and says what it wrote and what to run next.
pub fn new(args: NewArgs) -> Result<ExitStatus> {
    let language = args.lang;
    let request = scaffold::Request {
        module: &args.module,
        catalogue: &args.catalogue.dir,
        adopts: args.adopts.as_deref(),
        language,
        sdk: scaffold::SdkSource::parse(args.sdk.as_deref(), language)?,
    };
    let made = scaffold::new_module(&request)?;
    for file in &made.files {
        crate::outln!("created {}", file.display());
    }
    for note in &made.notes {
        crate::outln!("note: {note}");
    }
    // Said only when the commands would not find this catalogue by themselves.
    let catalogue = if args.catalogue.dir == default_catalogue() {
        String::new()
    } else {
        format!(" --catalogue {}", args.catalogue.dir.display())
    };
    crate::outln!("\nnext:");
    crate::outln!("  mesh-adopt build {}{catalogue}", args.module);
    crate::outln!("  mesh-adopt test {}{catalogue}", made.module_dir.display());
    crate::outln!("  mesh-adopt test --sweep {}{catalogue}", made.module_dir.display());
    // A module is built from the catalogue's repository, which only the operator can name.
    crate::outln!("  mesh-adopt run {} --catalog-source REPO[@REF]{catalogue}", args.module);
    Ok(ExitStatus::Success)
}
