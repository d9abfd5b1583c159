//! The bus: adopted where the bundle raised it, recreated once onto the module's image, and
//! waited for; every layout difference refused at once, before anything is registered.

use std::time::Duration;

use mesh_adopt_runtime::Mode;
use mesh_adopt_runtime::mesh::simulated::NodeApplies;
use mesh_adopt_runtime::mesh::{ContainerChange, Mesh};
use serde_json::json;

use crate::support::{TestMesh, assert_mentions};

const MODULE_IMAGE: &str = "registry.mesh.local/nats-snapshot:2.10.22-mesh.3";

async fn run_nats(mesh: TestMesh) -> crate::support::Ran {
    mesh.run_modules(&["nats"], Mode::Adopt).await
}

#[tokio::test]
async fn recreates_the_bus_once_onto_the_modules_image_and_waits_for_it() {
    let ran = run_nats(TestMesh::new()).await;
    ran.assert_adopted("nats");
    assert!(ran.said("nats", "restarting mesh-bus once"));
    assert!(ran.said("nats", "bus answers: mesh-bus on registry.mesh.local/nats-snapshot"));
    assert_eq!(ran.mesh.recreations("mesh-bus"), 1);
    assert!(ran.report.changes.contains(&ContainerChange::Recreated {
        name: "mesh-bus".into(),
        from: "nats:2.10.22-alpine".into(),
        to: MODULE_IMAGE.into()
    }));
    assert!(ran.broken().is_empty(), "{:?}", ran.report.violations);
}

#[tokio::test]
async fn says_when_the_bus_was_already_restarted() {
    let ran = run_nats(TestMesh::new().with_setup(|s| {
        s.running_images.insert("mesh-bus".into(), MODULE_IMAGE.into());
    }))
    .await;
    ran.assert_adopted("nats");
    assert!(ran.said("nats", "already restarted mesh-bus"));
    assert!(!ran.said("nats", "restarting mesh-bus once"));
    assert_eq!(ran.mesh.recreations("mesh-bus"), 0, "the same spec is left be");
}

#[tokio::test]
async fn refuses_each_bus_layout_field_that_differs_all_at_once() {
    let mut mesh = TestMesh::new();
    let manifest = mesh.manifest("nats");
    manifest["resources"][0]["name"] = json!("mesh-bus-2");
    manifest["accesses"] = json!([
        {"id": "streams", "path": "/srv/bus"},
        {"id": "conf", "path": "/srv/bus-conf"},
        {"id": "tls", "path": "/srv/tls"}
    ]);
    manifest["bus-users"] = json!("/srv/users.conf");
    let ran = run_nats(mesh).await;
    let refusal = ran.refusal("nats");
    assert_mentions(
        refusal,
        &[
            r#"the server container: the module's is "mesh-bus-2", the bundle's "mesh-bus""#,
            r#"its streams (/data): the module's is "/srv/bus", the bundle's "/var/lib/mesh/bus""#,
            r#"its configuration (/etc/nats): the module's is "/srv/bus-conf", the bundle's "/etc/mesh/bus""#,
            r#"its certificate (/tls): the module's is "/srv/tls", the bundle's "/etc/mesh/tls/bus""#,
            r#"its user list: the module's is "/srv/users.conf", the bundle's "/etc/mesh/bus/accounts.conf""#,
            "Nothing has been registered",
        ],
    );
    assert!(ran.commands().is_empty());
}

/// Edits one layout field of the nats manifest and expects exactly that field refused.
async fn refuses_only(edit: impl FnOnce(&mut serde_json::Value), field: &str) {
    let mut mesh = TestMesh::new();
    edit(mesh.manifest("nats"));
    let ran = run_nats(mesh).await;
    let refusal = ran.refusal("nats");
    assert_mentions(refusal, &[field]);
    assert_eq!(refusal.matches("\n - ").count(), 1, "only one field differs:\n{refusal}");
    assert!(ran.commands().is_empty());
}

#[tokio::test]
async fn refuses_another_container_name() {
    refuses_only(|m| m["resources"][0]["name"] = json!("bus"), "the server container").await;
}

#[tokio::test]
async fn refuses_other_streams() {
    refuses_only(|m| m["accesses"][0]["path"] = json!("/srv/streams"), "its streams (/data)").await;
}

#[tokio::test]
async fn refuses_another_configuration() {
    refuses_only(|m| m["accesses"][1]["path"] = json!("/srv/conf"), "its configuration (/etc/nats)").await;
}

#[tokio::test]
async fn refuses_another_certificate() {
    refuses_only(|m| m["accesses"][2]["path"] = json!("/srv/tls"), "its certificate (/tls)").await;
}

#[tokio::test]
async fn refuses_another_user_list() {
    refuses_only(|m| m["bus-users"] = json!("/srv/users.conf"), "its user list").await;
}

#[tokio::test]
async fn an_empty_module_field_differs_even_from_an_empty_bundle_field() {
    let mut mesh = TestMesh::new();
    mesh.manifest("nats").as_object_mut().unwrap().remove("bus-users");
    mesh.foundation["resources"].as_array_mut().unwrap().retain(|r| r["id"] != "bus-accounts");
    let ran = run_nats(mesh).await;
    assert_mentions(ran.refusal("nats"), &[r#"its user list: the module's is "", the bundle's """#]);
}

#[tokio::test]
async fn refuses_more_than_one_container() {
    let mut mesh = TestMesh::new();
    let server = mesh.manifest("nats")["resources"][0].clone();
    let mut sidecar = server.clone();
    sidecar["name"] = json!("bus-exporter");
    sidecar["id"] = json!("exporter");
    mesh.manifest("nats")["resources"] = json!([server, sidecar]);
    let ran = run_nats(mesh).await;
    assert_mentions(ran.refusal("nats"), &["2 containers (`mesh-bus`, `bus-exporter`)", "exactly one container"]);
    assert!(ran.commands().is_empty());
}

#[tokio::test]
async fn refuses_a_bundle_without_a_broker() {
    let mut mesh = TestMesh::new();
    mesh.foundation["resources"].as_array_mut().unwrap().retain(|r| r["id"] != "broker");
    let ran = run_nats(mesh).await;
    assert_mentions(ran.refusal("nats"), &["no `broker`", "no bus", "control, store, bus-accounts, mesh-network"]);
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
async fn refuses_after_the_wait_when_the_monitor_never_answers() {
    let ran = run_nats(TestMesh::new().with_setup(|s| s.bus_recovery = None)).await;
    assert_mentions(
        ran.refusal("nats"),
        &[MODULE_IMAGE, "monitor (http://127.0.0.1:8222/healthz) did not answer ok within 120s", "HTTP 503"],
    );
}

#[tokio::test]
async fn refuses_when_the_bus_container_is_gone() {
    let ran =
        run_nats(TestMesh::new().with_setup(|s| s.applies = NodeApplies::LosingContainer("mesh-bus".into()))).await;
    assert_mentions(ran.refusal("nats"), &["`mesh-bus` is gone", "journal"]);
}

#[tokio::test]
async fn asks_at_least_once_even_with_no_wait() {
    let mut mesh = TestMesh::new().with_setup(|s| s.apply_delay = Duration::ZERO);
    mesh.options.wait = Duration::ZERO;
    let ran = run_nats(mesh).await;
    // The node applied at once and the monitor recovers later: one ask, then the refusal.
    assert_mentions(ran.refusal("nats"), &["did not answer ok within 0s"]);
    let fetches = ran
        .transcript
        .events()
        .iter()
        .filter(|e| {
            matches!(e, mesh_adopt_runtime::transcript::Event::Call { request, .. } if request.op == mesh_adopt_runtime::events::Op::Fetch)
        })
        .count();
    assert_eq!(fetches, 1);
}
