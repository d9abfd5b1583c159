//! Many meshes adopted from one process: an operator's sites, each with its own foundation,
//! node and mesh, sharing one engine and the plugins it has linked.

use std::sync::Arc;

use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use crate::catalogue::credentials::Credentials;
use crate::catalogue::{Catalogue, Foundation};
use crate::mesh::Mesh;
use crate::plugin::PluginHost;
use crate::record::transcript::Transcript;
use crate::run::{Mode, Run, RunOptions, RunReport};

/// One site of a fleet.
pub struct Site {
    /// The operator's name for it, carried into the results.
    pub name: String,
    /// What genesis raised there.
    pub foundation: Foundation,
    /// The site's mesh.
    pub mesh: Arc<dyn Mesh>,
    /// The site's genesis credentials.
    pub credentials: Arc<Credentials>,
    /// The site's node, catalogue source and wait.
    pub options: RunOptions,
}

/// Adopts `modules` on every site, at most `parallelism` at once, and returns each site's
/// report in the order the sites were given. Bounded so memory stays bounded: every site in
/// flight holds one plugin instance.
pub async fn adopt_fleet(
    host: Arc<PluginHost>,
    catalogue: Arc<Catalogue>,
    sites: Vec<Site>,
    modules: Arc<[String]>,
    parallelism: usize,
) -> Vec<(String, RunReport)> {
    let permits = Arc::new(Semaphore::new(parallelism.max(1)));
    let mut tasks = JoinSet::new();
    let count = sites.len();
    for (index, site) in sites.into_iter().enumerate() {
        let (host, catalogue, modules, permits) = (host.clone(), catalogue.clone(), modules.clone(), permits.clone());
        tasks.spawn(async move {
            let _permit = permits.acquire_owned().await.expect("the semaphore is never closed");
            let run = Run::builder(&host, &catalogue, &site.foundation, site.mesh)
                .credentials(site.credentials)
                .record(Arc::new(Transcript::default()))
                .options(site.options)
                .build();
            (index, site.name, run.run(&modules, Mode::Adopt).await)
        });
    }
    let mut reports: Vec<Option<(String, RunReport)>> = (0..count).map(|_| None).collect();
    while let Some(joined) = tasks.join_next().await {
        let (index, name, report) = joined.expect("a site's run does not panic");
        reports[index] = Some((name, report));
    }
    reports.into_iter().map(|r| r.expect("every site reported")).collect()
}
