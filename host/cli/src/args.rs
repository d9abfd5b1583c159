//! The arguments more than one command takes, declared once and flattened into each
//! command's own: the catalogue, the compile cache, the site a run starts from, and how a
//! run is shown. A command changes a shared argument's help, where its words differ, with
//! clap's `mut_arg`, so the option itself stays one declaration; the site's `--catalogue` is
//! its own, since a replay tells a catalogue given from none.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context as _, Result, bail};
use clap::{Args, ValueEnum};

use crate::output::{Output, Style};
use mesh_adopt_runtime::Credentials;
use mesh_adopt_runtime::Limits;
use mesh_adopt_runtime::PluginHost;
use mesh_adopt_runtime::RunOptions;
use mesh_adopt_runtime::error::OptionError;
use mesh_adopt_runtime::options::DEFAULT_NODE;
use mesh_adopt_runtime::options::DEFAULT_WAIT;
use mesh_adopt_runtime::options::parse_catalog_source;
use mesh_adopt_runtime::options::parse_duration;
use mesh_adopt_runtime::plugin::CodeKind;
use mesh_adopt_runtime::plugin::CodePolicy;
use mesh_adopt_runtime::plugin::CompileCache;
use mesh_adopt_runtime::{Catalogue, Foundation};

/// `--catalogue DIR`, which every command takes: the catalogue checkout it works on.
#[derive(Debug, Args)]
pub struct CatalogueArg {
    /// The catalogue checkout [default: ./catalogue if there is one, else the current
    /// directory].
    #[arg(
        id = "catalogue",
        long = "catalogue",
        value_name = "DIR",
        default_value_os_t = default_catalogue(),
        hide_default_value = true
    )]
    pub dir: PathBuf,
}

/// The catalogue a command works on when none is named: `./catalogue` in a checkout that
/// holds one (this project's layout), else the current directory (a catalogue's own
/// repository, even before its first module).
pub fn default_catalogue() -> PathBuf {
    let nested = Path::new("catalogue");
    if nested.is_dir() { nested.to_path_buf() } else { PathBuf::from(".") }
}

impl CatalogueArg {
    /// Refuses a catalogue that is not a directory, naming the option that sets it: every
    /// command but `new` and `inspect` stops there first.
    pub fn require_dir(&self) -> Result<()> {
        if !self.dir.is_dir() {
            bail!("the catalogue `{}` is not a directory (pass --catalogue DIR)", self.dir.display());
        }
        Ok(())
    }
}

/// `--cache DIR` and `--no-cache`: where the commands that compile plugins (`check`, `run`,
/// `build`, `test`) keep them between runs, and where `inspect` looks for their code.
#[derive(Debug, Args)]
pub struct CacheArgs {
    /// Where compiled plugins are kept between runs [default: $XDG_CACHE_HOME/mesh-adopt, else
    /// ~/.cache/mesh-adopt].
    #[arg(long, value_name = "DIR", conflicts_with = "no_cache")]
    pub cache: Option<PathBuf>,
    /// Compile every plugin afresh and keep nothing.
    #[arg(long)]
    pub no_cache: bool,
}

/// `--code KIND`: which native code the commands that run plugins (`check`, `run`, `test`,
/// `build`) compile them to and take from the cache.
#[derive(Debug, Args)]
pub struct CodeArgs {
    /// Which native code plugins run as: `baseline` (Winch's, compiled in a second even for
    /// a big plugin, runs slower), `optimised` (Cranelift's), or `auto`: the best already
    /// compiled, else optimised for a plugin up to 1 MiB and baseline for a bigger one
    /// [default: auto; for `build`, optimised].
    #[arg(long, value_enum, value_name = "KIND")]
    pub code: Option<CodeArg>,
}

/// The values of `--code`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CodeArg {
    /// The best code compiled already; a plugin compiled afresh gets optimised code when small.
    Auto,
    /// Winch's code only.
    Baseline,
    /// Cranelift's code only.
    Optimised,
}

impl CodeArg {
    /// The runtime's policy for this value.
    pub fn policy(self) -> CodePolicy {
        match self {
            CodeArg::Auto => CodePolicy::Auto,
            CodeArg::Baseline => CodePolicy::Only(CodeKind::Baseline),
            CodeArg::Optimised => CodePolicy::Only(CodeKind::Optimised),
        }
    }
}

impl CodeArgs {
    /// The policy `--code` asks for; `default` when it is not given.
    pub fn policy(&self, default: CodeArg) -> CodePolicy {
        self.code.unwrap_or(default).policy()
    }
}

impl CacheArgs {
    /// The plugin host under `limits`, with the compile cache these options ask for, running
    /// plugins as `policy` says. An explicit `--cache` that cannot be used is an error; the
    /// default one only a warning, since running without it is only slower.
    pub fn host(&self, limits: Limits, policy: CodePolicy) -> Result<PluginHost> {
        let started = |host: Result<PluginHost, mesh_adopt_runtime::error::EngineError>| {
            host.map(|host| host.with_code(policy)).context("failed to start the plugin host")
        };
        if self.no_cache {
            return started(PluginHost::new(limits));
        }
        if let Some(dir) = &self.cache {
            return started(PluginHost::cached(limits, CompileCache::open(dir)?));
        }
        match self.default_cache() {
            Some(Ok(cache)) => started(PluginHost::cached(limits, cache)),
            Some(Err(e)) => {
                crate::errln!("warning: compiling without a cache: {e:#}");
                started(PluginHost::new(limits))
            }
            None => started(PluginHost::new(limits)),
        }
    }

    fn default_cache(&self) -> Option<Result<CompileCache>> {
        CompileCache::default_dir().map(|dir| CompileCache::open(&dir).map_err(Into::into))
    }
}

/// Where a run starts from: the catalogue, the foundation, the credentials and the
/// operator's options. Shared by `check`, `run` and `replay`.
#[derive(Debug, Args)]
pub struct SiteArgs {
    /// The catalogue checkout: modules/<name>/manifest.json with adopt.wasm beside it
    /// [default: ./catalogue if there is one, else the current directory; a replay: the
    /// recorded one].
    // Not `CatalogueArg`: a replay tells a catalogue given from none, to take the recorded one.
    #[arg(long = "catalogue", value_name = "DIR")]
    pub catalogue: Option<PathBuf>,
    /// The foundation bundle genesis produced [default: <catalogue>/foundation.json; a replay
    /// without --catalogue: the recorded one].
    #[arg(long)]
    pub foundation: Option<PathBuf>,
    /// Where genesis left its credentials [default: <catalogue>/genesis/credentials; a replay
    /// without --catalogue: the recorded one].
    #[arg(long)]
    pub credentials: Option<PathBuf>,
    /// The node the modules are assigned to [default: node-1; a replay: the recorded one].
    #[arg(long)]
    pub node: Option<String>,
    /// The catalogue repository a builder clones, with an optional ref: REPO[@REF] [a replay:
    /// the recorded one].
    #[arg(long = "catalog-source", value_name = "REPO[@REF]")]
    pub catalog_source: Option<String>,
    /// How long to wait for the node after a push: 90, 90s, 5m [default: 120s; a replay: the
    /// recorded wait].
    #[arg(long, value_parser = parse_duration)]
    pub wait: Option<Duration>,
}

impl SiteArgs {
    /// `--catalogue`, else `./catalogue` if there is one, else the current directory.
    pub fn catalogue_dir(&self) -> PathBuf {
        self.catalogue.clone().unwrap_or_else(default_catalogue)
    }

    /// The catalogue, refused unless it is a directory.
    pub fn catalogue(&self) -> Result<Catalogue> {
        let dir = self.catalogue_dir();
        if !dir.is_dir() {
            bail!("the catalogue `{}` is not a directory (pass --catalogue DIR)", dir.display());
        }
        Ok(Catalogue::at(dir))
    }

    /// The foundation bundle, read and checked.
    pub fn foundation(&self) -> Result<Foundation> {
        Ok(Foundation::load(&self.foundation_path())?)
    }

    /// The genesis credentials, opened (each read only when asked for).
    pub fn credentials(&self) -> Credentials {
        Credentials::open(&self.credentials_path())
    }

    /// `--foundation`, else the catalogue's `foundation.json`.
    fn foundation_path(&self) -> PathBuf {
        self.foundation.clone().unwrap_or_else(|| self.catalogue_dir().join("foundation.json"))
    }

    /// `--credentials`, else the catalogue's `genesis/credentials`.
    fn credentials_path(&self) -> PathBuf {
        self.credentials.clone().unwrap_or_else(|| self.catalogue_dir().join("genesis/credentials"))
    }

    /// The options given, the defaults for those not given.
    pub fn options(&self) -> Result<RunOptions> {
        self.options_over(RunOptions { node: DEFAULT_NODE.to_string(), catalog_source: None, wait: DEFAULT_WAIT })
    }

    /// The options given, `base`'s for those not given: a replay runs as it was recorded
    /// unless the operator says otherwise. Every option is checked before it is used.
    pub fn options_over(&self, base: RunOptions) -> Result<RunOptions> {
        let catalog_source = match self.catalog_source.as_deref() {
            Some(text) => Some(parse_catalog_source(text).map_err(flagged)?),
            None => base.catalog_source,
        };
        let options = RunOptions {
            node: self.node.clone().unwrap_or(base.node),
            catalog_source,
            wait: self.wait.unwrap_or(base.wait),
        };
        options.validate().map_err(flagged)?;
        Ok(options)
    }

    /// The files and directories a run reads, which nothing it writes may be or be in.
    pub fn inputs(&self) -> Vec<PathBuf> {
        vec![self.catalogue_dir().join("modules"), self.foundation_path(), self.credentials_path()]
    }
}

/// A run option the runtime refused, named by the flag that gave it.
fn flagged(error: OptionError) -> anyhow::Error {
    anyhow::Error::new(Flagged(error))
}

/// A run option the runtime refused, said with the flag that gave it: its remedy is the
/// runtime's.
#[derive(Debug)]
pub struct Flagged(pub OptionError);

impl std::fmt::Display for Flagged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.0.option.flag(), self.0.problem)
    }
}

impl std::error::Error for Flagged {}

/// How `check`, `run` and `replay` show what happens, and where they keep it.
#[derive(Debug, Args)]
pub struct ShownArgs {
    /// Also print every host call the plugins make.
    #[arg(long, short)]
    pub verbose: bool,
    /// Print one JSON object a line instead of text, for programs: the events of
    /// docs/events.md (a replay's end with its verdict).
    #[arg(long)]
    pub json: bool,
    /// Keep every event (each host call with its result and duration, each line said) in
    /// FILE as JSON lines, written as it goes (docs/events.md); secrets are redacted, and
    /// the file can be replayed.
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
}

impl ShownArgs {
    /// The output these options ask for; `real_waits` when waits are real time (a live mesh).
    pub fn output(&self, real_waits: bool) -> Result<Output> {
        let style = if self.json { Style::Json } else { Style::Human { verbose: self.verbose } };
        Output::new(style, real_waits, self.record.as_deref())
    }
}
