//! The bus's wait, where a scenario cannot see it: the mesh's clock spent waiting for a node
//! that never applies, and the number of times the monitor is asked. What the nats plugin
//! does and refuses on a given mesh and manifest is in its scenarios
//! (`plugins/nats/scenarios/`).

use std::time::Duration;

use mesh_adopt_runtime::Mode;
use mesh_adopt_runtime::mesh::Mesh;
use mesh_adopt_runtime::mesh::simulated::NodeApplies;

use crate::support::{TestMesh, assert_mentions};

async fn run_nats(mesh: TestMesh) -> crate::support::Ran {
    mesh.run_modules(&["nats"], Mode::Adopt).await
}

#[tokio::test]
async fn refuses_after_the_wait_when_the_node_never_applies() {
    let ran = run_nats(TestMesh::new().with_setup(|s| s.applies = NodeApplies::Never)).await;
    assert_mentions(
        ran.refusal("nats"),
        &["still runs the bundle's image `nats:2.10.22-alpine`", "120s", "not applied"],
    );
    // The wait was spent on the mesh's clock, after the push.
    assert!(ran.mesh.now() >= Duration::from_secs(120));
    assert!(ran.commands().contains(&"push node-1".to_string()));
}

#[tokio::test]
async fn asks_at_least_once_within_the_shortest_wait() {
    // A bus that never answers again: the simulator then cannot say how long its node takes
    // (a shorter wait would be refused in preflight), as a live mesh cannot, so the shortest
    // wait a run takes, 1s, reaches the plugin (a run refuses no wait at all, as `validate`
    // does).
    let mut mesh = TestMesh::new().with_setup(|s| {
        s.apply_delay = Duration::ZERO;
        s.bus_recovery = None;
    });
    mesh.options.wait = Duration::from_secs(1);
    let ran = run_nats(mesh).await;
    // The node applied at once and the monitor has not answered: an ask at once, one more as
    // the wait runs out, then the refusal.
    assert_mentions(ran.refusal("nats"), &["did not answer ok within 1s"]);
    let fetches = ran
        .transcript
        .events()
        .iter()
        .filter(|e| {
            matches!(e, mesh_adopt_runtime::record::transcript::Entry::Call { request, .. } if request.op == mesh_adopt_runtime::events::Op::Fetch)
        })
        .count();
    assert_eq!(fetches, 2);
}
