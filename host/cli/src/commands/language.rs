//! The languages a plugin can be written in: what `new --lang` chooses and what `build` tells
//! from a source's project file.
//!
//! It sits under `commands/`, beside the two commands that use it, as [`super::phase`] sits
//! beside `check` and `run`: the crate root keeps what every command's running shares
//! (arguments, output, sessions, exit statuses), and a language is neither `build`'s nor
//! `new`'s alone: `new`'s templates and `build`'s toolchains name this one type.

use std::path::Path;

/// The languages a plugin's source can be in, each told by the project file at its root.
/// As a `ValueEnum` it is also `--lang`'s value: clap refuses any other word, listing these.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Language {
    /// A crate (`Cargo.toml`) built by cargo for wasm32-wasip2 against the Rust SDK.
    #[value(name = "rust", alias = "rs")]
    Rust,
    /// A package (`package.json`) built by componentize-js against the JavaScript SDK.
    #[value(name = "js", alias = "javascript")]
    JavaScript,
    /// A project (`pyproject.toml`) built by componentize-py against the Python SDK.
    #[value(name = "python", alias = "py")]
    Python,
}

impl Language {
    /// Every language, in the order a refusal lists them.
    pub const ALL: [Language; 3] = [Language::Rust, Language::JavaScript, Language::Python];

    /// The contract version this language's SDK targets: what `new` writes in a manifest's
    /// `adopt.world` and which SDK version it asks for. Every SDK targets the newest today;
    /// a language whose SDK lags would name its version here.
    pub fn contract(self) -> mesh_adopt_runtime::plugin::Contract {
        match self {
            Language::Rust | Language::JavaScript | Language::Python => mesh_adopt_runtime::plugin::Contract::NEWEST,
        }
    }

    /// The project file that marks a source as this language's.
    pub fn project_file(self) -> &'static str {
        match self {
            Language::Rust => "Cargo.toml",
            Language::JavaScript => "package.json",
            Language::Python => "pyproject.toml",
        }
    }

    /// The language's name, as `--lang` spells it.
    pub fn name(self) -> &'static str {
        match self {
            Language::Rust => "rust",
            Language::JavaScript => "js",
            Language::Python => "python",
        }
    }

    /// The language of the source in `dir`: the one whose project file it holds. None, or
    /// more than one, is refused: a build must never guess, or one language's toolchain
    /// would overwrite the plugin another's made.
    pub fn of_source(dir: &Path) -> std::result::Result<Language, String> {
        let found: Vec<Language> = Language::ALL.into_iter().filter(|l| dir.join(l.project_file()).is_file()).collect();
        let files = |languages: &[Language]| {
            languages.iter().map(|l| format!("`{}`", l.project_file())).collect::<Vec<_>>().join(", ")
        };
        match found.as_slice() {
            [one] => Ok(*one),
            [] => Err(format!(
                "holds none of {}: `mesh-adopt build` builds a Rust crate, a JavaScript package or a Python project",
                files(&Language::ALL)
            )),
            several => Err(format!(
                "holds {}, so its language is not one: keep the one project file of the plugin's language there",
                files(several)
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum as _;

    /// `--lang` takes each name `new` has always taken, and spells each as `name` does.
    #[test]
    fn lang_takes_every_spelling_it_took() {
        for (spelling, language) in [
            ("rust", Language::Rust),
            ("rs", Language::Rust),
            ("js", Language::JavaScript),
            ("javascript", Language::JavaScript),
            ("python", Language::Python),
            ("py", Language::Python),
        ] {
            assert_eq!(Language::from_str(spelling, false), Ok(language), "{spelling}");
        }
        for language in Language::ALL {
            assert_eq!(language.to_possible_value().unwrap().get_name(), language.name());
        }
        assert!(Language::from_str("go", false).is_err());
    }
}
