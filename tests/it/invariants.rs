//! Plugins that break what adoption must keep fail the run, naming the invariant.

use mesh_adopt_runtime::run::Mode;

use crate::support::{TestMesh, assert_mentions};

#[tokio::test]
async fn pushing_before_accepting_the_superuser_breaks_credential_never_replaced() {
    let ran =
        TestMesh::new().with_plugin("postgres", "pushes_before_secret").run_modules(&["postgres"], Mode::Adopt).await;
    // The plugin itself reports success: only the node's apply shows what it did.
    ran.assert_adopted("postgres");
    assert!(!ran.report.succeeded());
    assert_eq!(ran.broken(), ["credential-never-replaced"]);
    assert!(ran.report.violations[0].detail.contains("`postgres`'s secret `superuser`"));
}

#[tokio::test]
async fn a_forged_manifest_that_would_recreate_the_store_is_denied_and_the_store_kept() {
    // The plugin carries the catalogue's manifest with the store's image changed: were it
    // registered, the push would recreate the store.
    let ran = TestMesh::new().with_plugin("postgres", "recreates_store").run_modules(&["postgres"], Mode::Adopt).await;
    assert!(!ran.report.succeeded());
    assert_mentions(ran.refusal("postgres"), &["failed to carry", "not the catalogue's manifest of `postgres`"]);
    assert!(ran.commands().is_empty(), "nothing was told: {:?}", ran.commands());
    assert!(ran.mesh.carried().is_empty(), "nothing was carried: {:?}", ran.mesh.carried());
    assert_eq!(ran.mesh.recreations("mesh-store"), 0);
    assert!(ran.broken().is_empty());
}

#[tokio::test]
async fn the_full_phase_three_keeps_every_invariant() {
    let ran = TestMesh::new().run().await;
    for module in ["postgres", "nats", "mesh-vault"] {
        ran.assert_adopted(module);
    }
    assert!(ran.report.succeeded());
    assert_eq!(ran.mesh.recreations("mesh-store"), 0);
    assert_eq!(ran.mesh.recreations("mesh-bus"), 1);
    assert!(ran.mesh.container_image("mesh-vault").is_some(), "the vault is raised");
}
