//! What `check`, `run` and `replay` share once their arguments are read: the credentials
//! guarded before anything is written, the site read, the output open, and the record that
//! feeds it.

use std::sync::Arc;

use anyhow::{Result, bail};

use mesh_adopt_runtime::Credentials;
use mesh_adopt_runtime::PluginHost;
use mesh_adopt_runtime::RunOptions;
use mesh_adopt_runtime::mesh::Mesh;
use mesh_adopt_runtime::transcript::Transcript;
use mesh_adopt_runtime::{Catalogue, Foundation};
use mesh_adopt_runtime::{Run, RunBuilder};

use crate::args::SiteArgs;
use crate::output::Output;

/// A run's site and output, open: what a command builds its run from.
pub struct Session {
    /// The catalogue, known to be a directory.
    pub catalogue: Catalogue,
    /// The foundation bundle, read.
    pub foundation: Foundation,
    /// The genesis credentials, the same the last redaction guards.
    pub credentials: Arc<Credentials>,
    /// Where the run is shown and recorded.
    pub output: Arc<Output>,
    /// The run's events, each reaching `output` as it happens.
    pub transcript: Arc<Transcript>,
}

impl Session {
    /// Reads the site's catalogue and foundation and opens its credentials; every event the
    /// run records reaches `output` as it happens.
    pub fn open(site: &SiteArgs, credentials: Arc<Credentials>, output: Output) -> Result<Session> {
        let catalogue = site.catalogue()?;
        let foundation = site.foundation()?;
        let output = Arc::new(output);
        let observer = output.clone();
        let transcript = Arc::new(Transcript::observed(Box::new(move |event| observer.observe(event))));
        Ok(Session { catalogue, foundation, credentials, output, transcript })
    }

    /// Refuses options (or a mesh's description) that hold a credential's value, before any
    /// of it is shown or recorded: a run would have to print it, and a credential is never
    /// shown. The error names the credential, never the value.
    pub fn refuse_credentials_in(&self, options: &RunOptions, mesh: &dyn Mesh) -> Result<()> {
        let shown = [options.node.clone(), options.source_words(), mesh.summary()];
        for (what, text) in ["--node", "--catalog-source", "the mesh's description"].iter().zip(shown) {
            if let (_, Some(name)) = self.credentials.redact(text) {
                bail!(
                    "{what} holds the value of the genesis credential `{name}`, which is never shown: it cannot be \
                     a run's option (a password in a URL belongs to the builder's own credentials)"
                );
            }
        }
        Ok(())
    }

    /// A run of this site's catalogue on `mesh`, recorded to the session's output.
    pub fn run<'a>(&'a self, host: &'a PluginHost, mesh: Arc<dyn Mesh>, options: RunOptions) -> RunBuilder<'a> {
        Run::builder(host, &self.catalogue, &self.foundation, mesh)
            .credentials(self.credentials.clone())
            .record(self.transcript.clone())
            .events(self.output.clone())
            .options(options)
    }
}

/// Learns every credential's value before anything is written, so that no line the program
/// writes can hold one ([`crate::output::redact_with`]); refuses a credentials directory with
/// an entry that cannot be read, whose value could then not be kept from being shown. The
/// credentials returned are the session's: one reading serves the guard and the run.
pub fn guard_credentials(site: &SiteArgs) -> Result<Arc<Credentials>> {
    let credentials = Arc::new(site.credentials());
    crate::output::redact_with(credentials.clone());
    if let Some((name, why)) = credentials.unreadable().into_iter().next() {
        bail!(
            "the credentials directory holds `{name}`, which cannot be read as a credential ({why}): its value could \
             not be kept from being shown; make it a regular file of at most 64 KiB, or move it out"
        );
    }
    Ok(credentials)
}
