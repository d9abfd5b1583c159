//! Many meshes adopted from one process the way docs/embedding.md shows an installer doing it:
//! a run spawned a mesh, its parts shared, a bounded number in flight at once.

use std::sync::Arc;

use mesh_adopt_runtime::mesh::simulated::{SimSetup, SimulatedMesh};
use mesh_adopt_runtime::options::parse_catalog_source;
use mesh_adopt_runtime::{Catalogue, Credentials, Foundation, Limits, Mode, PHASE_THREE, PluginHost, Run, RunOptions};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use crate::support::root;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adopts_every_mesh_spawned_as_the_embedding_guide_shows_with_bounded_runs_in_flight() {
    let dir = root().join("catalogue");
    let foundation = Foundation::load(&dir.join("foundation.json")).unwrap();
    let credentials = Arc::new(Credentials::open(&dir.join("genesis/credentials")));
    let host = Arc::new(PluginHost::new(Limits::default()).unwrap());
    let catalogue = Arc::new(Catalogue::at(&dir));
    let modules: Arc<[String]> = PHASE_THREE.iter().map(|m| m.to_string()).collect();
    let meshes: Vec<Arc<SimulatedMesh>> = (0..20)
        .map(|i| Arc::new(SimulatedMesh::new(SimSetup::new(foundation.clone(), &format!("node-{i}")))))
        .collect();
    let turns = Arc::new(Semaphore::new(4));
    let mut runs = JoinSet::new();
    for (i, mesh) in meshes.iter().enumerate() {
        let options = RunOptions {
            node: format!("node-{i}"),
            catalog_source: Some(parse_catalog_source("https://git.mesh.test/c.git").unwrap()),
            ..RunOptions::default()
        };
        let run = Run::builder(host.clone(), catalogue.clone(), foundation.clone(), mesh.clone())
            .credentials(credentials.clone())
            .options(options)
            .build();
        let (turns, modules) = (turns.clone(), modules.clone());
        runs.spawn(async move {
            let _turn = turns.acquire_owned().await.unwrap();
            (i, run.run(&modules, Mode::Adopt).await)
        });
    }
    let mut reported = Vec::new();
    while let Some(joined) = runs.join_next().await {
        let (i, report) = joined.unwrap();
        assert!(report.succeeded(), "node-{i}: {:?}", report.modules);
        reported.push(i);
    }
    reported.sort();
    assert_eq!(reported, (0..20).collect::<Vec<_>>());
    for (i, mesh) in meshes.iter().enumerate() {
        assert_eq!(mesh.recreations("mesh-bus"), 1);
        assert!(mesh.commands().iter().any(|c| c.to_string() == format!("push node-{i}")));
    }
}
