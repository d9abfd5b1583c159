//! What a plugin says, made safe to show: secret values replaced by their names (a value
//! found is recorded, and fails the run), long text cut.

use crate::model::Stopped;
use crate::run::Run;

/// The longest refusal, report or plan line kept from a plugin; a longer one is cut.
const REFUSAL_BYTES: usize = 16 << 10;

impl Run<'_> {
    /// The stop report of `module`'s plugin, scrubbed of secrets, with its kind.
    pub(super) fn stopped(&self, module: &str, stopped: Stopped) -> Stopped {
        // The sandbox's own report says in which export it stopped the plugin (the check just
        // before an adopt is a check).
        let report = self.scrub_in(module, stopped.report, "its stop report");
        Stopped { report, ..stopped }
    }

    /// A plugin's refusal with secret values replaced by their names; one found fails the run.
    pub(super) fn scrub(&self, module: &str, message: String) -> String {
        self.scrub_in(module, message, "its refusal")
    }

    /// [`Run::scrub`] for text found at `place` (a plan, a report).
    pub(super) fn scrub_in(&self, module: &str, message: String, place: &str) -> String {
        let (mut scrubbed, found) = self.credentials.redact(message);
        if crate::sandbox::limits::cut_to(&mut scrubbed, REFUSAL_BYTES) {
            scrubbed.push_str(" … (cut)");
        }
        if let Some(secret) = found {
            self.transcript.record(crate::record::transcript::Entry::SecretShown {
                module: module.to_string(),
                secret,
                place: place.into(),
            });
        }
        scrubbed
    }
}
