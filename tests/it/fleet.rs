//! Many sites adopted concurrently from one process, each on its own mesh.

use std::sync::Arc;
use std::time::Duration;

use mesh_adopt_runtime::Credentials;
use mesh_adopt_runtime::Limits;
use mesh_adopt_runtime::PluginHost;
use mesh_adopt_runtime::fleet::{Site, adopt_fleet};
use mesh_adopt_runtime::mesh::simulated::{SimSetup, SimulatedMesh};
use mesh_adopt_runtime::{Catalogue, Foundation};
use mesh_adopt_runtime::{PHASE_THREE, RunOptions};

use crate::support::root;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adopts_every_site_on_its_own_mesh_with_bounded_parallelism() {
    let catalogue_dir = root().join("catalogue");
    let foundation = Foundation::load(&catalogue_dir.join("foundation.json")).unwrap();
    let credentials = Arc::new(Credentials::open(&catalogue_dir.join("genesis/credentials")));
    let meshes: Vec<Arc<SimulatedMesh>> = (0..20)
        .map(|i| Arc::new(SimulatedMesh::new(SimSetup::new(foundation.clone(), &format!("node-{i}")))))
        .collect();
    let sites = meshes
        .iter()
        .enumerate()
        .map(|(i, mesh)| Site {
            name: format!("site-{i}"),
            foundation: foundation.clone(),
            mesh: mesh.clone(),
            credentials: credentials.clone(),
            options: RunOptions {
                node: format!("node-{i}"),
                catalog_source: Some(mesh_adopt_runtime::CatalogSource {
                    repository: "https://git.mesh.test/c.git".into(),
                    reference: None,
                }),
                wait: Duration::from_secs(120),
            },
        })
        .collect();
    let host = Arc::new(PluginHost::new(Limits::default()).unwrap());
    let modules: Arc<[String]> = PHASE_THREE.iter().map(|m| m.to_string()).collect();
    let reports = adopt_fleet(host, Arc::new(Catalogue::at(&catalogue_dir)), sites, modules, 4).await;

    assert_eq!(reports.len(), 20);
    for (i, (name, report)) in reports.iter().enumerate() {
        assert_eq!(name, &format!("site-{i}"), "reports keep the sites' order");
        assert!(report.succeeded(), "{name}: {:?}", report.modules);
    }
    for (i, mesh) in meshes.iter().enumerate() {
        assert_eq!(mesh.recreations("mesh-bus"), 1);
        assert!(mesh.commands().iter().any(|c| c.to_string() == format!("push node-{i}")));
    }
}
