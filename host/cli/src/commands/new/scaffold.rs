//! A new module written into a catalogue checkout — its manifest, its plugin's source (a Rust
//! crate, a JavaScript package or a Python project) and its scenarios side by side in
//! `modules/<module>/` — which builds and passes as written, for an author to grow from.
//! Nothing outside that directory is touched.

use std::path::{Component, Path, PathBuf};

use anyhow::{Context as _, Result, bail};

use super::templates;
use crate::commands::build::source::lexically_normal;
use crate::commands::language::Language;

/// What to make.
pub struct Request<'a> {
    /// The module's name.
    pub module: &'a str,
    /// The catalogue checkout.
    pub catalogue: &'a Path,
    /// The foundation bundle's container the module adopts in place, if it does.
    pub adopts: Option<&'a str>,
    /// The language the plugin is written in.
    pub language: Language,
    /// Where the plugin takes the SDK from.
    pub sdk: SdkSource,
}

/// Where a plugin takes its language's SDK from: a checkout, a git repository or a version
/// from the language's registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SdkSource {
    /// A checkout of the SDK's crate on this machine.
    Path(PathBuf),
    /// A git repository holding it.
    Git(String),
    /// A version from the registry.
    Version(String),
}

/// The SDK of `language` this binary was built beside, when built from a checkout that is
/// still there.
fn built_with(language: Language) -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../plugins").join(sdk_dir(language));
    dir.join(language.project_file()).is_file().then(|| dir.canonicalize().ok()).flatten()
}

/// Where each language's SDK lives in this repository, from `plugins/`.
fn sdk_dir(language: Language) -> &'static str {
    match language {
        Language::Rust => "sdk",
        Language::JavaScript => "js/sdk",
        Language::Python => "python/sdk",
    }
}

/// The version of `language`'s SDK: the contract version it targets.
pub fn sdk_version(language: Language) -> &'static str {
    language.contract().version()
}

impl SdkSource {
    /// Reads `--sdk` for a plugin in `language`: `path:DIR`, `git:URL` or a version; without
    /// it, the SDK this binary was built beside, else the contract's version.
    pub fn parse(spec: Option<&str>, language: Language) -> Result<SdkSource> {
        let Some(spec) = spec else {
            return Ok(built_with(language)
                .map_or_else(|| SdkSource::Version(sdk_version(language).to_string()), SdkSource::Path));
        };
        if let Some(dir) = spec.strip_prefix("path:") {
            let dir = PathBuf::from(dir);
            if !dir.join(language.project_file()).is_file() {
                bail!(
                    "--sdk path:{}: there is no {} SDK there (no {})",
                    dir.display(),
                    language.name(),
                    language.project_file()
                );
            }
            return Ok(SdkSource::Path(dir.canonicalize()?));
        }
        if let Some(url) = spec.strip_prefix("git:") {
            if url.is_empty() || url.contains(['"', '\\', '\n', ' ', '#']) {
                bail!("--sdk git:URL needs a repository URL");
            }
            if language == Language::JavaScript {
                bail!(
                    "--sdk git:URL cannot name the JavaScript SDK: npm takes no package from a directory inside a \
                     git repository; give `--sdk path:DIR` (a checkout's plugins/js/sdk) or a version"
                );
            }
            return Ok(SdkSource::Git(url.to_string()));
        }
        let is_version = !spec.is_empty()
            && spec.split('.').all(|part| !part.is_empty() && part.chars().all(|c| c.is_ascii_digit()));
        if !is_version {
            bail!("--sdk is `path:DIR`, `git:URL` or a version such as `{}`, not `{spec}`", sdk_version(language));
        }
        Ok(SdkSource::Version(spec.to_string()))
    }

    /// The dependency on the SDK as `language`'s project in `plugin_dir` (which exists)
    /// writes it: a path relative to it, so the catalogue can move as a whole.
    fn dependency(&self, language: Language, plugin_dir: &Path) -> Result<String> {
        let relative_path =
            |dir: &Path| -> Result<String> { Ok(relative(&plugin_dir.canonicalize()?, dir).display().to_string()) };
        Ok(match (language, self) {
            (Language::Rust, SdkSource::Path(dir)) => format!("{{ path = {:?} }}", relative_path(dir)?),
            (Language::Rust, SdkSource::Git(url)) => format!("{{ git = {url:?} }}"),
            (Language::Rust, SdkSource::Version(version)) => format!("{version:?}"),
            (Language::JavaScript, SdkSource::Path(dir)) => format!("file:{}", relative_path(dir)?),
            (Language::JavaScript, SdkSource::Git(_)) => unreachable!("refused by `parse`"),
            (Language::JavaScript, SdkSource::Version(version)) => version.clone(),
            // A requirements.txt line: pip reads a path there from the directory it runs in,
            // which `mesh-adopt build` makes the plugin's.
            (Language::Python, SdkSource::Path(dir)) => {
                let path = relative_path(dir)?;
                if path.starts_with('.') { path } else { format!("./{path}") }
            }
            (Language::Python, SdkSource::Git(url)) => {
                format!("mesh-adopt-sdk @ git+{url}#subdirectory=plugins/{}", sdk_dir(language))
            }
            (Language::Python, SdkSource::Version(version)) => format!("mesh-adopt-sdk=={version}"),
        })
    }
}

/// The path from directory `from` to `to`, both absolute.
fn relative(from: &Path, to: &Path) -> PathBuf {
    let (from, to): (Vec<Component>, Vec<Component>) = (from.components().collect(), to.components().collect());
    let shared = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut path: PathBuf = from[shared..].iter().map(|_| Component::ParentDir).collect();
    path.extend(&to[shared..]);
    path
}

/// What `new` wrote, for the author's next steps.
#[derive(Debug)]
pub struct Scaffolded {
    /// `modules/<module>/`.
    pub module_dir: PathBuf,
    /// Every file written, in the order written.
    pub files: Vec<PathBuf>,
    /// What the author should know about what was chosen for them.
    pub notes: Vec<String>,
}

/// Module names are what a control plane, a crate name and an image name all accept: words
/// of lowercase letters and digits joined by single `-`, starting with a letter. `target` is
/// where builds go, which scenario search passes over.
fn valid(module: &str) -> bool {
    !module.is_empty()
        && module.len() <= 40
        && module != "target"
        && module.starts_with(|c: char| c.is_ascii_lowercase())
        && module
            .split('-')
            .all(|word| !word.is_empty() && word.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()))
}

/// Writes `modules/<module>/` in the catalogue: `manifest.json`, the plugin's crate in
/// `plugin/` and its scenarios in `scenarios/`. Refuses to write over anything, and checks
/// everything it reads (the foundation, for `--adopts`) before it writes.
pub fn new_module(request: &Request) -> Result<Scaffolded> {
    let module = request.module;
    if !valid(module) {
        bail!(
            "`{module}` is not a module name: use words of lowercase letters and digits joined by single `-`, \
             starting with a letter (and not `target`)"
        );
    }
    let catalogue = request.catalogue;
    if !catalogue.is_dir() {
        bail!("the catalogue `{}` is not a directory (pass --catalogue DIR)", catalogue.display());
    }
    // A `modules/` that is a link out of the catalogue is no place for its modules: check and
    // run refuse such a catalogue, so nothing is written there either.
    let modules = catalogue.join("modules");
    if let (Ok(top), Ok(resolved)) = (catalogue.canonicalize(), modules.canonicalize())
        && resolved != top.join("modules")
    {
        bail!(
            "the catalogue's `{}` leads, through a link, to `{}`, outside it: a run would refuse its modules; \
             nothing was written",
            modules.display(),
            resolved.display()
        );
    }
    let module_dir = lexically_normal(&modules.join(module));
    if module_dir.exists() {
        bail!("`{}` already exists; nothing was written", module_dir.display());
    }
    if request.adopts.is_some() && request.language != Language::Rust {
        bail!(
            "--adopts starts from Rust adopt-in-place rules only; for a {} plugin, start with `mesh-adopt new \
             {module} --lang {}` and adopt with the SDK's foundation helpers (docs/writing-a-plugin.md); nothing \
             was written",
            request.language.name(),
            request.language.name()
        );
    }
    let mut notes = Vec::new();
    let documents = match request.adopts {
        None => templates::installed(module, request.language.contract().world()),
        Some(bundle_id) => {
            let adopted = templates::adopted_container(catalogue, bundle_id)?;
            let mut candidates = templates::handover_for(catalogue, bundle_id);
            let handover = match candidates.len() {
                1 => candidates.pop(),
                _ => None,
            };
            match (&handover, candidates.as_slice()) {
                (Some(h), _) => notes.push(format!(
                    "the plugin hands genesis credential `{}` over as the module's secret `{}`",
                    h.credential, h.secret
                )),
                (None, []) => notes.push(format!(
                    "the catalogue's genesis holds no credential named `{bundle_id}-…`, so the plugin hands none \
                     over: see HANDOVER in plugin/src/lib.rs"
                )),
                (None, several) => notes.push(format!(
                    "the catalogue's genesis holds several credentials for `{bundle_id}` ({}), so the plugin hands \
                     none over: set HANDOVER in plugin/src/lib.rs to the one it needs, and list it in the manifest's \
                     `secrets` and `adopt.grants.credentials`",
                    several.iter().map(|h| format!("`{}`", h.credential)).collect::<Vec<_>>().join(", ")
                )),
            }
            templates::adopts_in_place(module, &adopted, handover.as_ref())
        }
    };
    let language = request.language;
    if let SdkSource::Path(dir) = &request.sdk
        && built_with(language).as_ref() == Some(dir)
    {
        let others =
            if language == Language::JavaScript { "`--sdk VERSION`" } else { "`--sdk git:URL` or `--sdk VERSION`" };
        notes.push(format!(
            "the plugin takes the SDK by path from `{}`, the checkout this mesh-adopt was built from: for a \
             catalogue others build, give {others}",
            dir.display()
        ));
    }
    if let SdkSource::Version(version) = &request.sdk {
        let (package, registry) = match language {
            Language::Rust => ("mesh-adopt-sdk", "crates.io"),
            Language::JavaScript => ("@mesh-adopt/sdk", "npm"),
            Language::Python => ("mesh-adopt-sdk", "PyPI"),
        };
        notes.push(format!(
            "the plugin takes {package} {version} from {registry}; give `--sdk path:DIR` for a checkout of it"
        ));
    }

    let plugin_dir = module_dir.join("plugin");
    std::fs::create_dir_all(&plugin_dir).with_context(|| format!("failed to create `{}`", plugin_dir.display()))?;
    std::fs::create_dir_all(module_dir.join("scenarios"))?;
    let dependency = request.sdk.dependency(language, &plugin_dir)?;
    let version = match &request.sdk {
        SdkSource::Version(version) => version.as_str(),
        _ => sdk_version(language),
    };
    let mut files = Vec::new();
    let mut write = |path: PathBuf, text: &str| -> Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).with_context(|| format!("failed to create `{}`", dir.display()))?;
        }
        std::fs::write(&path, text).with_context(|| format!("failed to write `{}`", path.display()))?;
        files.push(path);
        Ok(())
    };
    write(module_dir.join("manifest.json"), &documents.manifest)?;
    for (name, text) in templates::plugin_files(language, module, &dependency, version, &documents) {
        write(plugin_dir.join(name), &text)?;
    }
    for (name, text) in &documents.scenarios {
        write(module_dir.join("scenarios").join(format!("{name}.toml")), text)?;
    }
    Ok(Scaffolded { module_dir, files, notes })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_names_that_are_not_module_names() {
        for bad in ["", "Postgres", "9lives", "a/b", "a b", "../x", "abc-", "a--b", "target"] {
            assert!(!valid(bad), "{bad}");
        }
        assert!(valid("object-store2"));
    }

    /// A request for a Rust module `cache` in `catalogue`.
    fn rust_cache_in(catalogue: &Path) -> Request<'_> {
        Request {
            module: "cache",
            catalogue,
            adopts: None,
            language: Language::Rust,
            sdk: SdkSource::Version("0.1.0".into()),
        }
    }

    #[test]
    fn writes_nothing_over_an_existing_module() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("modules/cache")).unwrap();
        let request = rust_cache_in(dir.path());
        let err = new_module(&request).unwrap_err();
        assert!(err.to_string().contains("already exists"), "{err}");
        assert_eq!(std::fs::read_dir(dir.path().join("modules/cache")).unwrap().count(), 0);
    }

    #[test]
    fn writes_nothing_through_a_modules_directory_linked_out_of_the_catalogue() {
        let (dir, elsewhere) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        std::os::unix::fs::symlink(elsewhere.path(), dir.path().join("modules")).unwrap();
        let request = rust_cache_in(dir.path());
        let err = new_module(&request).unwrap_err();
        assert!(err.to_string().contains("outside it"), "{err}");
        assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_path_to_the_sdk_is_written_relative_to_the_plugin() {
        assert_eq!(relative(Path::new("/a/b/c"), Path::new("/a/sdk")), PathBuf::from("../../sdk"));
        assert_eq!(relative(Path::new("/a"), Path::new("/a/sdk")), PathBuf::from("sdk"));
    }

    #[test]
    fn reads_each_way_of_naming_the_sdk() {
        let rust = Language::Rust;
        assert_eq!(SdkSource::parse(Some("0.1.0"), rust).unwrap(), SdkSource::Version("0.1.0".into()));
        let git = SdkSource::parse(Some("git:https://x/y.git"), rust).unwrap();
        assert_eq!(git, SdkSource::Git("https://x/y.git".into()));
        for bad in ["", "latest", "path:/nowhere/at/all", "git:", "1..2"] {
            assert!(SdkSource::parse(Some(bad), rust).is_err(), "{bad}");
        }
        // npm cannot take a package from a directory of a git repository.
        let js = SdkSource::parse(Some("git:https://x/y.git"), Language::JavaScript).unwrap_err();
        assert!(js.to_string().contains("npm takes no package"), "{js}");
    }

    #[test]
    fn each_language_names_the_sdk_its_own_way() {
        let dir = tempfile::tempdir().unwrap();
        let plugin = dir.path().join("modules/cache/plugin");
        std::fs::create_dir_all(&plugin).unwrap();
        let sdk = SdkSource::Path(dir.path().join("sdk"));
        assert_eq!(sdk.dependency(Language::JavaScript, &plugin).unwrap(), "file:../../../sdk");
        assert_eq!(sdk.dependency(Language::Python, &plugin).unwrap(), "../../../sdk");
        let git = SdkSource::Git("https://x/y.git".into());
        assert_eq!(
            git.dependency(Language::Python, &plugin).unwrap(),
            "mesh-adopt-sdk @ git+https://x/y.git#subdirectory=plugins/python/sdk"
        );
        assert_eq!(
            SdkSource::Version("0.1.0".into()).dependency(Language::Python, &plugin).unwrap(),
            "mesh-adopt-sdk==0.1.0"
        );
    }
}
