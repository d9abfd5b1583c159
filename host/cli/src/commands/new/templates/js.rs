//! A JavaScript plugin's files: an npm package built by componentize-js, kept as templates
//! in `plugins/js/template/`, where the conformance suite's SDK sits beside them.

use super::filled;

/// The JavaScript plugin's files, with `{{module}}`, `{{type}}` and `{{sdk}}` to fill in.
const JS_TEMPLATE: [(&str, &str); 4] = [
    ("package.json", include_str!("../../../../../../plugins/js/template/package.json")),
    ("app.js", include_str!("../../../../../../plugins/js/template/app.js")),
    // npm installs a `file:` SDK as a package, with its own dependencies (componentize-js),
    // instead of linking to it.
    (".npmrc", include_str!("../../../../../../plugins/js/template/.npmrc")),
    (".gitignore", include_str!("../../../../../../plugins/js/template/.gitignore")),
];

/// The package's files for `module`, with `dependency` the SDK as npm names it.
pub fn files(module: &str, dependency: &str) -> Vec<(&'static str, String)> {
    JS_TEMPLATE.iter().map(|(name, text)| (*name, filled(text, module, dependency))).collect()
}
