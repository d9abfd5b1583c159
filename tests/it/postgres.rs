//! The store: adopted in place with the superuser genesis made, or refused before anything
//! is registered.

use mesh_adopt_runtime::mesh::ContainerChange;
use serde_json::json;

use crate::support::{SUPERUSER, TestMesh, assert_mentions};

#[tokio::test]
async fn adopts_the_store_in_place_with_the_genesis_superuser() {
    let ran = TestMesh::new().run_modules(&["postgres"], mesh_adopt_runtime::Mode::Adopt).await;
    ran.assert_adopted("postgres");
    assert_eq!(
        ran.commands(),
        [
            "module add /postgres-module.json",
            "build https://git.mesh.test/catalogue.git --path modules/postgres --ref v3 --wait 1200s",
            "module issue postgres --node node-1",
            "assign node-1 postgres",
            "prepare node-1 postgres",
            "secret accept node-1 postgres superuser --from /accepting-superuser",
            "push node-1",
        ]
    );
    // The superuser was carried as a secret, accepted, and never sealed over.
    assert_eq!(ran.mesh.carried().get("/accepting-superuser"), Some(&true));
    assert_eq!(ran.mesh.carried().get("/postgres-module.json"), Some(&false));
    assert_eq!(ran.mesh.accepted(), [("postgres".to_string(), "superuser".to_string())]);
    assert!(ran.mesh.sealed().is_empty());
    assert!(
        ran.report
            .changes
            .contains(&ContainerChange::Kept { name: "mesh-store".into(), image: "postgres:16.4-bookworm".into() })
    );
    assert_eq!(ran.mesh.recreations("mesh-store"), 0);
    // The value itself shows nowhere.
    assert!(ran.transcript.visible_text().iter().all(|t| !t.contains(SUPERUSER)));
    assert!(ran.broken().is_empty(), "{:?}", ran.report.violations);
}

#[tokio::test]
async fn refuses_a_bundle_without_a_store_listing_what_it_has() {
    let mut mesh = TestMesh::new();
    mesh.foundation["resources"].as_array_mut().unwrap().retain(|r| r["id"] != "store");
    let ran = mesh.run().await;
    assert_mentions(ran.refusal("postgres"), &["no `store`", "control, broker, bus-accounts, mesh-network"]);
    assert!(ran.commands().is_empty());
}

#[tokio::test]
async fn refuses_a_store_that_is_not_a_container() {
    let mut mesh = TestMesh::new();
    *mesh.foundation_resource("store") = json!({"id": "store", "kind": "volume"});
    let ran = mesh.run().await;
    assert_mentions(ran.refusal("postgres"), &["`store` is a volume, not a container"]);
    assert!(ran.commands().is_empty());
}

#[tokio::test]
async fn refuses_store_image_drift_before_registering() {
    let mut mesh = TestMesh::new();
    mesh.manifest("postgres")["resources"][0]["image"] = json!("postgres:17.0");
    let ran = mesh.run().await;
    let refusal = ran.refusal("postgres");
    // Both images are named, and nothing reached the control plane.
    assert_mentions(refusal, &["`postgres:17.0`", "`postgres:16.4-bookworm`", "Nothing has been registered"]);
    assert!(ran.commands().is_empty());
    assert!(ran.mesh.carried().is_empty());
    // The later modules were left alone.
    assert!(matches!(ran.report.outcome("nats"), Some(mesh_adopt_runtime::ModuleOutcome::NotRun { .. })));
}

#[tokio::test]
async fn refuses_a_manifest_without_the_stores_container() {
    let mut mesh = TestMesh::new();
    mesh.manifest("postgres")["resources"][0]["name"] = json!("another-store");
    let ran = mesh.run().await;
    assert_mentions(ran.refusal("postgres"), &["no container named `mesh-store`"]);
    assert!(ran.commands().is_empty());
}

#[tokio::test]
async fn refuses_a_missing_superuser_by_name_before_registering() {
    let mut mesh = TestMesh::new();
    mesh.credentials.clear();
    let ran = mesh.run().await;
    // Preflight finds the credential the manifest grants missing, before any plugin runs.
    assert_mentions(ran.failure("postgres"), &["grants credential `store-superuser`", "cannot be used"]);
    assert_eq!(ran.unusable_input("postgres"), mesh_adopt_runtime::Input::Credentials);
    assert_eq!(ran.report.exit_code(), 2, "a credential that cannot be used is a bad input");
    assert!(ran.commands().is_empty());
}
