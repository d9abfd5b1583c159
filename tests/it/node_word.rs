//! The node's own word, on the live stand-ins: the secrets its containers mount held against
//! what the control plane says it holds, the images it has asked for before any effect, and a
//! container a push that did not finish left gone, said by the next check.

use std::path::Path;

use serde_json::json;

use crate::live::{StandIn, adopted_stand_ins_with_state, effect_event, live_catalogue, live_with};

/// The nats module's image in the shipped catalogue.
const BUS_IMAGE: &str = "registry.mesh.local/nats-snapshot:2.10.22-mesh.3";

/// The control-plane commands told since `before` (the stand-in's argv log): what a run that
/// changes nothing may have asked is only the read-only `state` and `images`.
fn told_since(standin: &StandIn, before: &str) -> Vec<String> {
    standin.read("argv.log")[before.len()..]
        .lines()
        .filter(|l| !l.starts_with("state ") && !l.starts_with("images "))
        .map(String::from)
        .collect()
}

fn said(out: &std::process::Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// Makes the stand-in control plane forget that the node holds `module`'s `secret`, as one
/// that lost its record does: the file and the containers mounting it stay.
fn forget(standin: &StandIn, module: &str, secret: &str) {
    let dir = standin.path().join("forgotten").join(module);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(secret), "").unwrap();
}

/// Makes the stand-in control plane forget `module` altogether, its registration included.
fn unregister(standin: &StandIn, module: &str) {
    std::fs::remove_file(standin.path().join("registered").join(format!("{module}.json"))).unwrap();
    let order: String =
        standin.read("registration-order").lines().filter(|m| *m != module).map(|m| format!("{m}\n")).collect();
    std::fs::write(standin.path().join("registration-order"), order).unwrap();
}

#[test]
fn a_control_plane_that_forgot_a_secret_a_running_container_holds_is_refused_before_any_effect() {
    let (_nats, standin, config, catalogue) = adopted_stand_ins_with_state();
    let (key, seals) = (standin.read("sealed/mesh-vault/unseal-key"), standin.read("seals.log"));
    let source = standin.path().join("sealed/mesh-vault/unseal-key");
    forget(&standin, "mesh-vault", "unseal-key");
    let before = standin.read("argv.log");
    // The control plane would seal over the key: predicted so, and refused, in a check as in a run.
    for command in ["check", "run"] {
        let json = live_with(&config, catalogue.path(), &[command, "--json"]);
        assert_eq!(json.status.code(), Some(1), "{command}: {}", said(&json));
        let effect = effect_event(&json.stdout);
        let vault = effect["pushes"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|p| p["secrets"].as_array().unwrap())
            .find(|s| s["module"] == "mesh-vault" && s["secret"] == "unseal-key");
        assert_eq!(vault.map(|s| &s["accepted"]), Some(&json!(false)), "the seal the push would make: {effect}");
        let out = live_with(&config, catalogue.path(), &[command]);
        assert_eq!(out.status.code(), Some(1), "{command}: {}", said(&out));
        for fragment in [
            "preflight found the node and its control plane disagreeing".to_string(),
            format!(
                "the engine shows `mesh-vault` (running) holding `mesh-vault`'s secret `unseal-key`, mounted at \
                 `/run/secrets/unseal-key` from `{}`",
                source.display()
            ),
            "the control plane's `state` says the node holds no secret `unseal-key` of `mesh-vault`".to_string(),
            "`mesh-vault`'s push would seal fresh bytes over the secret `mesh-vault` holds".to_string(),
            "nothing was adopted".to_string(),
            "remedy       look at the mesh before running again: the control plane's record of `mesh-vault`'s \
             secret `unseal-key` on node `node-1`, which it lost: put it back"
                .to_string(),
        ] {
            assert!(said(&out).contains(&fragment), "{command}: expected {fragment:?} in {}", said(&out));
        }
    }
    // A control plane that lost the module altogether is refused the same way, naming that.
    unregister(&standin, "mesh-vault");
    let out = live_with(&config, catalogue.path(), &["run", "mesh-vault"]);
    assert_eq!(out.status.code(), Some(1), "{}", said(&out));
    assert!(said(&out).contains("the control plane's `state` has no module `mesh-vault` registered"), "{}", said(&out));
    assert_eq!(told_since(&standin, &before), Vec::<String>::new(), "a refused run told the control plane something");
    assert_eq!(standin.read("sealed/mesh-vault/unseal-key"), key, "the key was sealed over");
    assert_eq!(standin.read("seals.log"), seals);
}

/// The run's typed hold names both sides and says what mends it.
#[tokio::test]
async fn the_hold_of_a_forgotten_secret_is_typed_with_both_sides_and_a_remedy() {
    use mesh_adopt_runtime::effect::StateSays;
    use mesh_adopt_runtime::{Held, Remedy};
    let (_nats, standin, config, catalogue) = tokio::task::spawn_blocking(adopted_stand_ins_with_state).await.unwrap();
    forget(&standin, "mesh-vault", "unseal-key");
    let mesh = std::sync::Arc::new(mesh_adopt_live::LiveMesh::new(mesh_adopt_live::LiveConfig::load(&config).unwrap()));
    let report = crate::support::TestMesh::new().run_live(catalogue.path(), mesh, &["mesh-vault"]).await.0;
    let Some(Held::SecretsDisagree { secrets }) = &report.held else { panic!("{:?}", report.held) };
    let [found] = secrets.as_slice() else { panic!("{secrets:?}") };
    assert_eq!(
        (found.module.as_str(), found.secret.as_str(), found.container.as_str(), found.state, found.running),
        ("mesh-vault", "unseal-key", "mesh-vault", StateSays::NotHeld, Some(true))
    );
    assert!(matches!(found.remedy(), Remedy::InspectMesh { what } if what.contains("which it lost: put it back")));
    assert_eq!(report.exit_code(), 1);
}

#[test]
fn a_node_without_a_modules_image_is_refused_in_check_and_run_before_any_effect_naming_image_and_node() {
    let standin = StandIn::new();
    let config = standin.config_with_state(None);
    std::fs::write(standin.path().join("missing-images"), format!("{BUS_IMAGE}\n")).unwrap();
    let catalogue = live_catalogue();
    let named = format!("node `node-1` has no image `{BUS_IMAGE}`, which `nats` runs in `mesh-bus`");
    for command in ["check", "run"] {
        let out = live_with(&config, catalogue.path(), &[command]);
        assert_eq!(out.status.code(), Some(1), "{command}: {}", said(&out));
        assert!(said(&out).contains(&named), "{command}: {}", said(&out));
        let remedy = format!("remedy       put the image `{BUS_IMAGE}` on node `node-1`");
        assert!(said(&out).contains(&remedy), "{command}: {}", said(&out));
        // Every module is held, postgres first of all: its push would have come before nats's build.
        assert!(said(&out).contains("postgres     not run"), "{command}: {}", said(&out));
    }
    assert_eq!(told_since(&standin, ""), Vec::<String>::new(), "a refused run told the control plane something");
    assert!(standin.read("argv.log").contains("images node-1\n"), "the node was asked: {}", standin.read("argv.log"));
    // The image back on the node, the same check is ready.
    std::fs::remove_file(standin.path().join("missing-images")).unwrap();
    let out = live_with(&config, catalogue.path(), &["check"]);
    assert_eq!(out.status.code(), Some(0), "{}", said(&out));
}

#[test]
fn an_images_command_that_fails_stops_the_run_before_any_effect() {
    let standin = StandIn::new();
    let config = standin.config_with_state(None);
    std::fs::write(standin.path().join("fail-images"), "the image store is down").unwrap();
    let out = live_with(&config, live_catalogue().path(), &["run"]);
    assert_eq!(out.status.code(), Some(1), "{}", said(&out));
    for fragment in ["node `node-1` could not say which images it has", "the image store is down"] {
        assert!(said(&out).contains(fragment), "{fragment}: {}", said(&out));
    }
    assert_eq!(told_since(&standin, ""), Vec::<String>::new());
}

#[test]
fn without_an_images_command_or_mounts_shown_the_run_warns_and_goes_on() {
    let standin = StandIn::new();
    let catalogue = live_catalogue();
    // No `images`, no `state`, and the store answered in the older word form: two warnings.
    standin.unlabelled("mesh-store", false);
    let out = live_with(&standin.config(None), catalogue.path(), &["check", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", said(&out));
    assert_eq!(
        effect_event(&out.stdout)["warnings"],
        json!([{"warning": "mounts-unshown", "containers": ["mesh-store"]}, {"warning": "images-unasked"}])
    );
    let out = live_with(&standin.config(None), catalogue.path(), &["check"]);
    for fragment in [
        "warning: the engine showed no mounts of mesh-store: the secrets they hold were not read from the node",
        "warning: this mesh has no `images` command, so the node was not asked whether it has the modules' images",
    ] {
        assert!(said(&out).contains(fragment), "{fragment}: {}", said(&out));
    }
    // With both, and every mount shown, nothing to warn of.
    let fresh = StandIn::new();
    let out = live_with(&fresh.config_with_state(None), catalogue.path(), &["check", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", said(&out));
    assert_eq!(effect_event(&out.stdout).get("warnings"), None, "{}", said(&out));
}

/// Takes `container` away from the stand-in node, as a push killed between removing and
/// raising it leaves it.
fn gone(standin: &StandIn, container: &str) {
    for kind in ["images", "volumes", "specs", "owners", "secrets"] {
        let path = standin.path().join(kind).join(container);
        if Path::new(&path).exists() {
            std::fs::remove_file(path).unwrap();
        }
    }
}

#[test]
fn a_container_a_push_that_did_not_finish_left_gone_is_said_by_the_next_check_and_raised_by_the_next_run() {
    let (_nats, standin, config, catalogue) = adopted_stand_ins_with_state();
    gone(&standin, "mesh-bus");
    let checked = live_with(&config, catalogue.path(), &["check", "--json"]);
    assert_eq!(checked.status.code(), Some(0), "{}", said(&checked));
    let effect = effect_event(&checked.stdout);
    assert_eq!(
        effect["warnings"],
        json!([{"warning": "container-gone", "container": "mesh-bus", "module": "nats", "genesis": true}]),
        "{effect}"
    );
    let checked = live_with(&config, catalogue.path(), &["check"]);
    assert!(
        said(&checked).contains(
            "nats │ effect: warning: mesh-bus is not on the node, though `nats`, which runs it, is prepared there \
             (genesis raised it): a push that did not finish"
        ),
        "{}",
        said(&checked)
    );
    // The next run raises it again, onto the module's image and the bundle's volumes.
    let out = live_with(&config, catalogue.path(), &["run"]);
    assert_eq!(out.status.code(), Some(0), "{}", said(&out));
    assert_eq!(standin.read("images/mesh-bus"), BUS_IMAGE);
    let again = live_with(&config, catalogue.path(), &["check", "--json"]);
    assert_eq!(effect_event(&again.stdout).get("warnings"), None, "{}", said(&again));
}
