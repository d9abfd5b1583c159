//! The provider sequence every module shares: order, build source, account, timeouts.

use std::time::Duration;

use mesh_adopt_runtime::Mode;
use mesh_adopt_runtime::mesh::simulated::{Fault, FaultEffect, Op};

use crate::support::{TestMesh, assert_mentions};

#[tokio::test]
async fn installs_the_vault_by_the_plain_sequence_and_raises_it() {
    let ran = TestMesh::new().run_modules(&["mesh-vault"], Mode::Adopt).await;
    ran.assert_adopted("mesh-vault");
    assert_eq!(
        ran.commands(),
        [
            "module add /mesh-vault-module.json",
            "build https://git.mesh.test/catalogue.git --path modules/mesh-vault --ref v3 --wait 1200s",
            "module issue mesh-vault --node node-1",
            "assign node-1 mesh-vault",
            "prepare node-1 mesh-vault",
            "push node-1",
        ]
    );
    // Nothing carried in but its manifest; its own secret is sealed by the node.
    assert_eq!(ran.mesh.carried().keys().collect::<Vec<_>>(), ["/mesh-vault-module.json"]);
    assert_eq!(ran.mesh.container_image("mesh-vault").as_deref(), Some("registry.mesh.local/mesh-vault:0.9.1"));
}

#[tokio::test]
async fn refuses_without_a_catalogue_source_before_registering() {
    let mut mesh = TestMesh::new();
    mesh.options.catalog_source = None;
    let ran = mesh.run().await;
    assert_mentions(ran.refusal("postgres"), &["no catalogue source", "--catalog-source", "checkout", "repository"]);
    assert!(ran.commands().is_empty(), "check refuses before anything is told");
}

#[tokio::test]
async fn builds_the_default_ref_when_none_is_given() {
    let mut mesh = TestMesh::new();
    mesh.options.catalog_source =
        Some(mesh_adopt_runtime::CatalogSource { repository: "https://git.mesh.test/c.git".into(), reference: None });
    let ran = mesh.run_modules(&["mesh-vault"], Mode::Adopt).await;
    assert!(
        ran.commands()
            .contains(&"build https://git.mesh.test/c.git --path modules/mesh-vault --ref main --wait 1200s".into())
    );
}

#[tokio::test]
async fn a_failed_account_is_not_fatal() {
    let ran = TestMesh::new()
        .with_setup(|s| {
            s.faults.push(Fault {
                op: Op::Tell,
                matching: "module issue".into(),
                times: 1,
                effect: FaultEffect::Fail("nats: account service down".into()),
            })
        })
        .run_modules(&["postgres"], Mode::Adopt)
        .await;
    ran.assert_adopted("postgres");
    assert!(ran.said("postgres", "no account for postgres"));
    assert!(ran.commands().contains(&"push node-1".to_string()));
}

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

#[tokio::test]
async fn a_failing_step_is_refused_naming_the_command() {
    let ran = TestMesh::new()
        .with_setup(|s| {
            s.faults.push(Fault {
                op: Op::Tell,
                matching: "assign".into(),
                times: 1,
                effect: FaultEffect::Fail("node-1 is cordoned".into()),
            })
        })
        .run_modules(&["mesh-vault"], Mode::Adopt)
        .await;
    assert_mentions(ran.refusal("mesh-vault"), &["`assign node-1 mesh-vault`", "node-1 is cordoned"]);
    assert!(!ran.commands().contains(&"push node-1".to_string()));
}

#[tokio::test]
async fn a_build_that_times_out_is_refused_as_timed_out() {
    let ran = TestMesh::new()
        .with_setup(|s| {
            s.faults.push(Fault { op: Op::Tell, matching: "build".into(), times: 1, effect: FaultEffect::TimeOut })
        })
        .run_modules(&["mesh-vault"], Mode::Adopt)
        .await;
    assert_mentions(ran.refusal("mesh-vault"), &["failed to tell `build", "timed out", "1500s"]);
}
