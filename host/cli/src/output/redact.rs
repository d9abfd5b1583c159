//! The last redaction: every line the program writes, whoever wrote it, is checked for the
//! genesis credentials' values on its way out.

use std::sync::{Arc, OnceLock};

use mesh_adopt_runtime::Credentials;

/// The genesis credentials whose values no line the program writes may hold, whatever
/// produced the line: a plugin, the host's own words about a manifest, an error quoting an
/// input. The runtime scrubs what passes through a run; this is the last place a value is
/// caught before it leaves the program.
static REDACTOR: OnceLock<Arc<Credentials>> = OnceLock::new();

/// Makes every line written from now on (stdout, stderr, the record) free of `credentials`'
/// values; the first call wins.
pub fn redact_with(credentials: Arc<Credentials>) {
    credentials.learn_all();
    let _ = REDACTOR.set(credentials);
}

/// `line` with every credential value replaced by its name.
pub fn redacted(line: &str) -> String {
    match REDACTOR.get() {
        Some(credentials) => credentials.redact(line.to_string()).0,
        None => line.to_string(),
    }
}
