//! Saved plans through the binary: `check --out PLAN` writes what `run --plan PLAN` applies,
//! only to the inputs it was made from, holding nothing a guess at a credential could be
//! checked against, and written private.

use crate::support::{catalogue, mesh_adopt, text};

const SOURCE: &str = "https://git.mesh.test/catalogue.git@v3";

#[test]
fn a_saved_plan_applies_to_its_inputs_and_refuses_after_an_edit() {
    let dir = catalogue();
    let plan = dir.path().join("plan.json");
    let plan_arg = plan.to_str().unwrap();
    let checked =
        mesh_adopt().args(["check", "--catalog-source", SOURCE, "--out", plan_arg]).catalogue(dir.path()).output();
    assert_eq!(checked.status.code(), Some(0), "{}", text(&checked.stderr));
    let saved: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&plan).unwrap()).unwrap();
    assert_eq!(saved["schema"], 4);
    assert_eq!(saved["modules"].as_array().unwrap().len(), 3);
    // The plan binds the mesh and what its pushes were predicted to do there, as data.
    assert_eq!(saved["mesh"], "the simulated mesh (node `node-1`)");
    let kept = serde_json::json!({"kind": "container", "container": "mesh-store", "module": "postgres",
        "effect": {"change": "kept", "image": "postgres:16.4-bookworm"}});
    assert!(saved["effect"].as_array().unwrap().contains(&kept), "{saved}");
    assert_eq!(saved["modules"][0]["commands"][0], serde_json::json!(["module", "add", "/postgres-module.json"]));

    // One edit to the foundation (a resource added that no module adopts): every module still
    // checks, but the plan no longer applies, and nothing moves.
    let foundation = dir.path().join("foundation.json");
    let original = std::fs::read_to_string(&foundation).unwrap();
    let mut edited: serde_json::Value = serde_json::from_str(&original).unwrap();
    edited["resources"].as_array_mut().unwrap().push(serde_json::json!({"id": "cache", "kind": "file", "path": "/c"}));
    std::fs::write(&foundation, edited.to_string()).unwrap();
    let stale =
        mesh_adopt().args(["run", "--catalog-source", SOURCE, "--plan", plan_arg]).catalogue(dir.path()).output();
    let stdout = text(&stale.stdout);
    assert_eq!(stale.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("the saved plan does not apply: the foundation bundle changed"), "{stdout}");
    assert!(!stdout.contains("adopted   ") && !stdout.contains("registered"), "{stdout}");

    // A credential changed since the plan was made: refused too.
    std::fs::write(&foundation, &original).unwrap();
    let credential = dir.path().join("genesis/credentials/store-superuser");
    let superuser = std::fs::read_to_string(&credential).unwrap();
    std::fs::write(&credential, "another-superuser-value\n").unwrap();
    let stale =
        mesh_adopt().args(["run", "--catalog-source", SOURCE, "--plan", plan_arg]).catalogue(dir.path()).output();
    assert_eq!(stale.status.code(), Some(1));
    let stdout = text(&stale.stdout);
    assert!(stdout.contains("the credentials the `postgres` module's manifest grants changed"), "{stdout}");
    std::fs::write(&credential, superuser).unwrap();

    // The inputs it was made from: adopted.
    std::fs::write(&foundation, original).unwrap();
    let applied =
        mesh_adopt().args(["run", "--catalog-source", SOURCE, "--plan", plan_arg]).catalogue(dir.path()).output();
    assert_eq!(applied.status.code(), Some(0), "{}", text(&applied.stdout));
    // Another option than the plan's: refused, naming it.
    let other = mesh_adopt()
        .args(["run", "--catalog-source", SOURCE, "--node", "node-2", "--plan", plan_arg])
        .catalogue(dir.path())
        .output();
    assert!(text(&other.stdout).contains("the node is `node-2` now"), "{}", text(&other.stdout));
}

#[test]
fn a_plan_file_holds_nothing_a_guess_at_a_credential_can_be_checked_against() {
    use sha2::{Digest as _, Sha256};
    let dir = catalogue();
    let plan = dir.path().join("plan.json");
    let plan_arg = plan.to_str().unwrap();
    let checked =
        mesh_adopt().args(["check", "--catalog-source", SOURCE, "--out", plan_arg]).catalogue(dir.path()).output();
    assert_eq!(checked.status.code(), Some(0), "{}", text(&checked.stderr));
    let saved = std::fs::read_to_string(&plan).unwrap();
    // Neither the value's digest nor that of the credential as the host once framed it (name
    // and value with their lengths) is there: a digest keyed outside the file is.
    let name = "store-superuser";
    let value = std::fs::read_to_string(dir.path().join("genesis/credentials").join(name)).unwrap();
    let value = value.trim_end_matches('\n');
    let mut framed = Vec::new();
    framed.extend((name.len() as u64).to_le_bytes());
    framed.extend(name.as_bytes());
    framed.extend((value.len() as u64).to_le_bytes());
    framed.extend(value.as_bytes());
    for guess in [Sha256::digest(value.as_bytes()), Sha256::digest(&framed)] {
        let hex: String = guess.iter().map(|b| format!("{b:02x}")).collect();
        assert!(!saved.contains(&hex), "the plan holds the plain sha256 of the credential:\n{saved}");
    }
    let parsed: serde_json::Value = serde_json::from_str(&saved).unwrap();
    let digest = parsed["modules"][0]["credentials_digest"].as_str().unwrap();
    assert_eq!(digest.len(), 64, "{saved}");
    let key = std::fs::read(dir.path().join("state/mesh-adopt/plan-key")).unwrap();
    assert!(!saved.contains(&key.iter().map(|b| format!("{b:02x}")).collect::<String>()));

    // Taken to another machine (another plan key): it says it cannot check the credentials,
    // and nothing moves.
    let elsewhere = mesh_adopt()
        .args(["run", "--catalog-source", SOURCE, "--plan", plan_arg])
        .catalogue(dir.path())
        .env("XDG_STATE_HOME", dir.path().join("another-machine"))
        .output();
    let stdout = text(&elsewhere.stdout);
    assert_eq!(elsewhere.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("another plan key") && stdout.contains("cannot check"), "{stdout}");
    assert!(!stdout.contains("registered"), "{stdout}");
    // Here it applies.
    let applied =
        mesh_adopt().args(["run", "--catalog-source", SOURCE, "--plan", plan_arg]).catalogue(dir.path()).output();
    assert_eq!(applied.status.code(), Some(0), "{}", text(&applied.stdout));
}

#[test]
fn a_plan_written_over_an_existing_file_is_made_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = catalogue();
    let plan = dir.path().join("plan.json");
    std::fs::write(&plan, "").unwrap();
    std::fs::set_permissions(&plan, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = mesh_adopt()
        .args(["check", "--catalog-source", SOURCE, "--out", plan.to_str().unwrap()])
        .catalogue(dir.path())
        .output();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(std::fs::metadata(&plan).unwrap().permissions().mode() & 0o777, 0o600);
}

/// A plan saved by a host before effects were kept as data (schema 3, its effects as lines of
/// text) is refused as any other format's plan is, naming both formats, and nothing moves.
#[test]
fn a_plan_of_schema_three_is_refused_as_another_formats_plan() {
    let dir = catalogue();
    let plan = dir.path().join("plan.json");
    let plan_arg = plan.to_str().unwrap();
    let checked =
        mesh_adopt().args(["check", "--catalog-source", SOURCE, "--out", plan_arg]).catalogue(dir.path()).output();
    assert_eq!(checked.status.code(), Some(0), "{}", text(&checked.stderr));
    let mut saved: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&plan).unwrap()).unwrap();
    saved["schema"] = 3.into();
    saved["effect"] = serde_json::json!(["mesh-store kept postgres:16.4-bookworm (by postgres)"]);
    std::fs::write(&plan, saved.to_string()).unwrap();
    let refused =
        mesh_adopt().args(["run", "--catalog-source", SOURCE, "--plan", plan_arg]).catalogue(dir.path()).output();
    let said = format!("{}{}", text(&refused.stdout), text(&refused.stderr));
    assert_eq!(refused.status.code(), Some(2), "{said}");
    assert!(said.contains("it is a plan of format 3; this host reads format 4"), "{said}");
    assert!(!said.contains("registered"), "{said}");
}
