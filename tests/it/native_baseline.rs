//! The native baseline the benchmarks compare plugins with does the same work: the same
//! commands reach the control plane, and the mesh ends in the same state.

#[path = "../../host/bench/benches/native.rs"]
mod native;

use std::sync::Arc;
use std::time::Duration;

use mesh_adopt_runtime::Credentials;
use mesh_adopt_runtime::RunOptions;
use mesh_adopt_runtime::mesh::simulated::{SimSetup, SimulatedMesh};
use mesh_adopt_runtime::mesh::{ContainerChange, Mesh};
use mesh_adopt_runtime::{Catalogue, Foundation};

use crate::support::{TestMesh, root};

#[tokio::test]
async fn makes_the_same_calls_as_the_plugins() {
    let by_plugins = TestMesh::new().run().await;
    assert!(by_plugins.report.succeeded());

    let dir = root().join("catalogue");
    let foundation = Foundation::load(&dir.join("foundation.json")).unwrap();
    let mesh = Arc::new(SimulatedMesh::new(SimSetup::new(foundation.clone(), "node-1")));
    let credentials = Credentials::open(&dir.join("genesis/credentials"));
    let options = RunOptions {
        node: "node-1".into(),
        catalog_source: Some(mesh_adopt_runtime::options::CatalogSource {
            repository: "https://git.mesh.test/catalogue.git".into(),
            reference: Some("v3".into()),
        }),
        wait: Duration::from_secs(120),
    };
    let catalogue = Catalogue::at(&dir);
    let baseline = native::Native {
        catalogue: &catalogue,
        foundation: &foundation,
        credentials: &credentials,
        mesh: mesh.as_ref(),
        options: &options,
    };
    baseline.phase_three().await.unwrap();

    assert_eq!(mesh.commands(), by_plugins.mesh.commands());
    assert_eq!(mesh.carried(), by_plugins.mesh.carried());
    let changes = |c: Vec<ContainerChange>| c.into_iter().map(|c| format!("{c:?}")).collect::<Vec<_>>();
    assert_eq!(changes(mesh.audit().changes), changes(by_plugins.mesh.audit().changes));
    assert!(mesh.audit().violations.is_empty());
}
