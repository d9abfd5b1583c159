//! A Python plugin's files: a project built by componentize-py, kept as templates in
//! `plugins/python/template/`; its requirements.txt, which names the SDK as pip reads it, and
//! its `.gitignore` are kept in `python/`.

use super::{fill, filled};

/// The Python plugin's files, with `{{module}}`, `{{type}}` and `{{sdk}}` to fill in; its
/// requirements.txt and `.gitignore` are [`REQUIREMENTS_TXT`] and [`GITIGNORE`].
const PYTHON_TEMPLATE: [(&str, &str); 2] = [
    ("pyproject.toml", include_str!("../../../../../../plugins/python/template/pyproject.toml")),
    ("app.py", include_str!("../../../../../../plugins/python/template/app.py")),
];

/// What `mesh-adopt build` installs into the plugin's `.venv`, with `{{sdk}}` (the SDK as pip
/// reads it) to fill in.
const REQUIREMENTS_TXT: &str = include_str!("python/requirements.txt.in");

/// The project's `.gitignore`: its environment and Python's caches.
const GITIGNORE: &str = include_str!("python/.gitignore.in");

/// The project's files for `module`: the SDK `dependency` as pip reads it from
/// requirements.txt, and `version` as the project declares it.
pub fn files(module: &str, dependency: &str, version: &str) -> Vec<(&'static str, String)> {
    let mut files: Vec<_> = PYTHON_TEMPLATE
        .iter()
        .map(|(name, text)| (*name, filled(text, module, &format!("mesh-adopt-sdk=={version}"))))
        .collect();
    files.push(("requirements.txt", fill(REQUIREMENTS_TXT, &[("sdk", dependency)])));
    files.push((".gitignore", GITIGNORE.to_string()));
    files
}
