//! The provider sequence's build, where a scenario cannot see it: a build longer than its own
//! `--wait` is given its 1500s on the mesh's clock. The sequence's order, build source,
//! account and refusals are in the scenarios of the modules that run it
//! (`plugins/mesh-vault/scenarios/`, `plugins/postgres/scenarios/`).

use std::time::Duration;

use mesh_adopt_runtime::Mode;

use crate::support::TestMesh;

#[tokio::test]
async fn a_build_longer_than_its_wait_costs_no_real_time_and_is_allowed_longer_than_1200s() {
    // The build takes 21 minutes of mesh time: more than its own --wait of 1200s would allow
    // a host that cut it at 1200s, within the 1500s the sequence gives it.
    let ran = TestMesh::new()
        .with_setup(|s| s.build_time = Duration::from_secs(21 * 60))
        .run_modules(&["mesh-vault"], Mode::Adopt)
        .await;
    ran.assert_adopted("mesh-vault");
    use mesh_adopt_runtime::mesh::Mesh;
    assert!(ran.mesh.now() >= Duration::from_secs(21 * 60));
}
