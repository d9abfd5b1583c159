//! A Python plugin's files: a project built by componentize-py, kept as templates in
//! `plugins/python/template/`; its requirements.txt, which names the SDK, is written here.

use super::filled;

/// The Python plugin's files, with `{{module}}`, `{{type}}` and `{{sdk}}` to fill in; its
/// requirements.txt is written by [`files`].
const PYTHON_TEMPLATE: [(&str, &str); 2] = [
    ("pyproject.toml", include_str!("../../../../plugins/python/template/pyproject.toml")),
    ("app.py", include_str!("../../../../plugins/python/template/app.py")),
];

/// The project's files for `module`: the SDK `dependency` as pip reads it from
/// requirements.txt, and `version` as the project declares it.
pub fn files(module: &str, dependency: &str, version: &str) -> Vec<(&'static str, String)> {
    let mut files: Vec<_> = PYTHON_TEMPLATE
        .iter()
        .map(|(name, text)| (*name, filled(text, module, &format!("mesh-adopt-sdk=={version}"))))
        .collect();
    files.push((
        "requirements.txt",
        format!(
            "# What `mesh-adopt build` installs into this plugin's `.venv` to build it; pip reads a path\n\
             # here from this directory.\n{dependency}\n"
        ),
    ));
    files.push((".gitignore", ".venv/\n__pycache__/\n".to_string()));
    files
}
