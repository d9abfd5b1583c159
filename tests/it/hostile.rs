//! Plugins that try to take the machine or the mesh: each is a real component built from
//! `tests/plugins/`, run as the `postgres` module (so it holds the store superuser's grant),
//! and each must be stopped with a clear error, having changed nothing it had no right to.

use mesh_adopt_runtime::events::Op;
use mesh_adopt_runtime::mesh::simulated::{Fault, FaultEffect};
use mesh_adopt_runtime::{Mode, ModuleOutcome};
use serde_json::json;

use mesh_adopt_runtime::error::StopKind;

use crate::support::{Ran, SUPERUSER, TestMesh, assert_mentions, catalogue, mesh_adopt, plugin, text};

/// Runs the plugin `name` as the postgres plugin on the tight host.
async fn run_hostile(name: &str, edit: impl FnOnce(&mut TestMesh)) -> Ran {
    // Hostile plugins run as `postgres` without its hand-over: what each shows is the sandbox's.
    let mut mesh = TestMesh::new().with_plugin("postgres", name).handover_undeclared();
    mesh.tight = true;
    edit(&mut mesh);
    mesh.run_modules(&["postgres"], Mode::Adopt).await
}

/// Asserts the mesh was not touched at all.
fn untouched(ran: &Ran) {
    assert!(ran.commands().is_empty(), "{:?}", ran.commands());
    assert!(ran.mesh.carried().is_empty(), "{:?}", ran.mesh.carried());
}

#[tokio::test]
async fn an_infinite_loop_is_stopped_at_the_guest_time_deadline() {
    let ran = run_hostile("loops_forever", |_| {}).await;
    let failure = ran.failure("postgres");
    assert_mentions(
        failure,
        &["`postgres` plugin", "modules/postgres/adopt.wasm", "sha256", "during `adopt`", "guest time"],
    );
    assert_mentions(failure, &["it had changed nothing on the mesh"]);
    assert_eq!(ran.stop_kind("postgres"), StopKind::GuestTime);
    untouched(&ran);
}

#[tokio::test]
async fn a_memory_bomb_is_stopped_at_the_memory_cap() {
    let ran = run_hostile("memory_bomb", |_| {}).await;
    assert_mentions(ran.failure("postgres"), &["during `adopt`", "memory", "raise limits.memory_bytes"]);
    // The limit is named once.
    assert_eq!(ran.failure("postgres").matches("limits.memory_bytes").count(), 1, "{}", ran.failure("postgres"));
    assert_eq!(ran.stop_kind("postgres"), StopKind::Memory);
    untouched(&ran);
}

#[tokio::test]
async fn deep_recursion_is_stopped_at_the_stack_limit() {
    let ran = run_hostile("deep_recursion", |_| {}).await;
    assert_mentions(ran.failure("postgres"), &["during `adopt`", "stack"]);
    assert_eq!(ran.stop_kind("postgres"), StopKind::Trap);
    untouched(&ran);
}

#[tokio::test]
async fn a_say_flood_is_cut_and_stopped() {
    let ran = run_hostile("say_flood", |_| {}).await;
    assert_mentions(ran.failure("postgres"), &["said more than 200 lines", "limits.say_lines"]);
    assert_eq!(ran.transcript.said("postgres").len(), 200);
    assert_eq!(ran.stop_kind("postgres"), StopKind::Limit);
    untouched(&ran);
}

#[tokio::test]
async fn huge_tell_arguments_are_denied() {
    let ran = run_hostile("huge_tell_args", |_| {}).await;
    assert_mentions(ran.refusal("postgres"), &["denied", "the arguments are 1048585 bytes", "at most 65536"]);
    untouched(&ran);
}

#[tokio::test]
async fn telling_another_modules_verbs_is_denied() {
    let ran = run_hostile("tells_other_module", |_| {}).await;
    assert_mentions(
        ran.refusal("postgres"),
        &["`tell assign node-1 nats`", "beyond what a plugin may tell", "no grant widens this"],
    );
    untouched(&ran);
}

#[tokio::test]
async fn carrying_outside_its_paths_is_denied() {
    let ran = run_hostile("carries_outside", |_| {}).await;
    assert_mentions(ran.refusal("postgres"), &["`/etc/mesh/control/config.json`", "beyond what a plugin may carry"]);
    untouched(&ran);
}

#[tokio::test]
async fn a_credential_name_with_traversal_is_denied() {
    let ran = run_hostile("credential_escape", |mesh| {
        mesh.manifest("postgres")["hostile-credentials"] = json!(["../../../etc/shadow"]);
    })
    .await;
    assert_mentions(
        ran.refusal("postgres"),
        &["credential `../../../etc/shadow` is not granted", "adopt.grants.credentials"],
    );
    untouched(&ran);
}

#[tokio::test]
async fn a_manifest_granting_a_traversal_is_refused_at_load() {
    let ran = run_hostile("credential_escape", |mesh| {
        mesh.manifest("postgres")["adopt"]["grants"]["credentials"] = json!(["../outside"]);
    })
    .await;
    assert_mentions(ran.failure("postgres"), &["grants too much", "`../outside` is not a plain name"]);
    untouched(&ran);
}

#[tokio::test]
async fn a_symlink_out_of_the_credentials_directory_is_not_followed() {
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("host-secret");
    std::fs::write(&target, "the machine's own secret").unwrap();
    let ran = run_hostile("credential_escape", move |mesh| {
        mesh.credential_links.push(("linked".into(), target));
        mesh.manifest("postgres")["adopt"]["grants"]["credentials"] = json!(["linked"]);
        mesh.manifest("postgres")["hostile-credentials"] = json!(["linked"]);
    })
    .await;
    // Preflight verifies every credential a manifest grants, so the link is refused before
    // the plugin runs at all.
    assert_mentions(ran.failure("postgres"), &["`linked`", "no credential `linked`", "cannot be read"]);
    untouched(&ran);
}

#[tokio::test]
async fn fetching_an_ungranted_url_is_denied() {
    let ran = run_hostile("fetches_ungranted", |_| {}).await;
    assert_mentions(
        ran.refusal("postgres"),
        &["fetch of `http://169.254.169.254/latest/meta-data/` is not granted", "adopt.grants.fetch"],
    );
    untouched(&ran);
}

#[tokio::test]
async fn inspecting_an_ungranted_container_is_denied() {
    let ran = run_hostile("inspects_ungranted", |_| {}).await;
    assert_mentions(
        ran.refusal("postgres"),
        &["inspect of container `mesh-control` is not granted", "adopt.grants.inspect"],
    );
    untouched(&ran);
}

#[tokio::test]
async fn a_secret_smuggled_into_a_say_line_is_redacted_and_fails_the_run() {
    let ran = run_hostile("smuggles_secret_say", |_| {}).await;
    assert!(ran.said("postgres", "the superuser is <secret store-superuser>"));
    assert!(ran.transcript.visible_text().iter().all(|t| !t.contains(SUPERUSER)));
    assert!(!ran.report.succeeded());
    assert_eq!(ran.broken(), ["secret-never-shown"]);
    assert_mentions(&ran.report.violations[0].detail, &["`store-superuser`", "a say line"]);
    untouched(&ran);
}

#[tokio::test]
async fn a_secret_smuggled_into_a_tell_is_denied_redacted_and_fails_the_run() {
    let ran = run_hostile("smuggles_secret_tell", |_| {}).await;
    assert_mentions(ran.refusal("postgres"), &["denied", "carry a secret's value"]);
    // The command never reached the control plane, and its record is scrubbed.
    assert!(ran.commands().is_empty());
    assert!(ran.transcript.visible_text().iter().all(|t| !t.contains(SUPERUSER)));
    assert!(ran.broken().iter().all(|b| *b == "secret-never-shown") && !ran.broken().is_empty());
}

#[tokio::test]
async fn a_panic_mid_way_is_reported_with_what_was_already_done() {
    let ran = run_hostile("panics_midway", |_| {}).await;
    let failure = ran.failure("postgres");
    assert_mentions(
        failure,
        &[
            "during `adopt`",
            "its stderr:",
            "lost its footing after registering postgres",
            "its last host call: tell module add /postgres-module.json",
            "what it had already done:",
            "manifest (",
            "module add /postgres-module.json",
        ],
    );
    assert_eq!(ran.commands(), ["module add /postgres-module.json"]);
}

#[tokio::test]
async fn the_machine_itself_is_out_of_reach() {
    let ran = run_hostile("reaches_for_the_host", |_| {}).await;
    // No environment, then no files: the first path it opens stops it, naming the path.
    assert_eq!(ran.transcript.said("postgres"), ["env: 0 variables, 0 arguments"]);
    assert_mentions(
        ran.failure("postgres"),
        &["the sandbox gives no filesystem access", "descriptor.open-at`", "`etc/passwd`"],
    );
    untouched(&ran);
}

#[tokio::test]
async fn a_plugin_whose_digest_differs_from_the_pin_is_refused_naming_both() {
    let ran = run_hostile("adopt_postgres", |mesh| {
        mesh.manifest("postgres")["adopt"]["sha256"] = json!("0".repeat(64));
    })
    .await;
    assert_mentions(
        ran.failure("postgres"),
        &["refused to load plugin", "adopt.wasm", "its sha256 is ", &"0".repeat(64)],
    );
    untouched(&ran);
}

#[tokio::test]
async fn a_plugin_matching_its_pin_loads() {
    use sha2::Digest;
    let digest =
        format!("{:x}", sha2::Sha256::digest(std::fs::read(crate::support::plugin("adopt_postgres")).unwrap()));
    let ran = run_hostile("adopt_postgres", move |mesh| {
        mesh.manifest("postgres")["adopt"]["sha256"] = json!(digest);
    })
    .await;
    ran.assert_adopted("postgres");
}

#[tokio::test]
async fn a_manifest_naming_another_world_is_refused_naming_both() {
    let ran = run_hostile("adopt_postgres", |mesh| {
        mesh.manifest("postgres")["adopt"]["world"] = json!("mesh:adopt/adopter@0.3.0");
    })
    .await;
    assert_mentions(
        ran.failure("postgres"),
        &["`mesh:adopt/adopter@0.3.0`", "`mesh:adopt/adopter@0.1.0` and `mesh:adopt/adopter@0.2.0`"],
    );
    untouched(&ran);
}

#[tokio::test]
async fn a_manifest_asking_to_widen_tell_is_refused_at_load() {
    // What a plugin may tell is the host's to say: the grants have no key for it.
    let ran = run_hostile("adopt_postgres", |mesh| {
        mesh.manifest("postgres")["adopt"]["grants"]["tell"] = json!(["assign node-1 nats"]);
    })
    .await;
    assert_mentions(ran.failure("postgres"), &["modules/postgres/manifest.json", "malformed", "unknown field `tell`"]);
    untouched(&ran);
}

#[tokio::test]
async fn a_tell_of_two_million_empty_arguments_is_denied_with_a_short_message() {
    let ran = run_hostile("many_empty_args", |_| {}).await;
    // The host's answer, as recorded: denied, naming the cap, keeping a bounded prefix of
    // the arguments and how many there were.
    let told = ran.transcript.events().into_iter().find_map(|e| match e {
        mesh_adopt_runtime::record::transcript::Entry::Call { request, outcome: Err(error), .. } => {
            Some((request, error))
        }
        _ => None,
    });
    let (request, error) = told.expect("the tell is recorded");
    assert_eq!(error.kind, mesh_adopt_runtime::events::ErrorKind::Denied);
    assert_mentions(&error.message, &["the tell has 2000000 arguments", "limits.tell_args_count"]);
    assert_eq!(request.cut, Some(mesh_adopt_runtime::events::ArgsCut { words: 2_000_000, bytes: 0 }));
    assert!(request.args.len() <= 16, "{} arguments kept", request.args.len());
    let detail = request.words();
    assert!(detail.ends_with("(2000000 words, 0 bytes)"), "{detail}");
    assert!(detail.len() < 1_000 && error.message.len() < 1_000, "{} and {} bytes", detail.len(), error.message.len());
    // However the plugin takes the denial, nothing it says repeats the flood.
    let outcome = format!("{:?}", ran.report.outcome("postgres"));
    assert!(outcome.len() < 4_000, "an outcome of {} bytes", outcome.len());
    untouched(&ran);
}

#[tokio::test]
async fn a_flood_of_host_calls_is_stopped_at_its_cap() {
    let ran = run_hostile("call_flood", |_| {}).await;
    assert_mentions(ran.failure("postgres"), &["more than 10000 host calls", "limits.host_calls"]);
    assert_eq!(ran.stop_kind("postgres"), StopKind::Limit);
    // The calls within the cap, and the one that reached it: nothing after is kept.
    let calls = ran
        .transcript
        .events()
        .iter()
        .filter(|e| matches!(e, mesh_adopt_runtime::record::transcript::Entry::Call { .. }))
        .count();
    assert_eq!(calls, 10_001);
    untouched(&ran);
}

#[tokio::test]
async fn a_huge_report_is_cut() {
    let ran = run_hostile("huge_report", |_| {}).await;
    let Some(mesh_adopt_runtime::ModuleOutcome::Adopted(report)) = ran.report.outcome("postgres") else {
        panic!("{:?}", ran.report.outcome("postgres").map(|o| format!("{o:?}").chars().take(200).collect::<String>()))
    };
    assert!(report.len() <= 17 << 10, "a report of {} bytes", report.len());
    assert!(report.ends_with("(cut)"));
}

#[tokio::test]
async fn a_huge_plan_is_refused_before_any_effect() {
    let ran = run_hostile("huge_plan", |_| {}).await;
    assert_mentions(ran.failure("postgres"), &["100000 commands", "limits.plan_commands"]);
    assert_eq!(ran.report.exit_code(), 2);
    untouched(&ran);
}

#[tokio::test]
async fn a_secret_the_mesh_echoes_never_reaches_the_plugin() {
    // The control plane answers the push with the superuser in its error output.
    let echoed = format!("push refused: password {SUPERUSER} rejected");
    let ran = TestMesh::new()
        .with_setup(move |setup| {
            setup.faults.push(Fault {
                op: Op::Tell,
                matching: "push".into(),
                times: 1,
                effect: FaultEffect::Fail(echoed),
            })
        })
        .run_modules(&["postgres"], Mode::Adopt)
        .await;
    let refusal = ran.refusal("postgres");
    assert_mentions(refusal, &["password <secret store-superuser> rejected"]);
    assert!(!refusal.contains(SUPERUSER));
    // The plugin only ever saw the redacted text, so nothing it wrote shows the value.
    assert!(!ran.broken().contains(&"secret-never-shown"), "{:?}", ran.report.violations);
}

#[test]
fn plugin_text_reaches_the_terminal_with_every_escape_made_visible() {
    let dir = crate::support::example_catalogue(&crate::support::plugin("forges_the_screen"));
    crate::support::undeclare_handover_in(dir.path());
    let out = crate::support::mesh_adopt()
        .args(["run", "postgres", "--catalog-source", "https://git.mesh.test/c.git"])
        .catalogue(dir.path())
        .output();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains('\u{1b}') && !stdout.contains('\r') && !stdout.contains('\u{7}'), "{stdout:?}");
    assert!(!stdout.lines().any(|l| l.starts_with("  nats")), "a forged line: {stdout}");
    // Shown, visibly: in the say line, the plan and the report.
    assert!(stdout.matches("\\u{1b}[2J\\u{1b}]0;owned\\u{7}\\roverwritten\\n").count() >= 3, "{stdout}");
}

#[tokio::test]
async fn a_secret_value_a_plugin_never_asked_for_is_still_redacted_and_fails_the_run() {
    // mesh-vault alone: no module of the run asks for the superuser, yet its plugin knows it.
    let mut mesh = TestMesh::new().with_plugin("mesh-vault", "says_from_its_manifest");
    mesh.manifest("mesh-vault")["hostile-say"] = json!(format!("the password is {SUPERUSER}"));
    let ran = mesh.run_modules(&["mesh-vault"], Mode::Adopt).await;
    let said = ran.transcript.said("mesh-vault").join("\n");
    assert!(!said.contains(SUPERUSER), "{said}");
    assert_mentions(&said, &["the password is <secret store-superuser>"]);
    assert!(ran.broken().contains(&"secret-never-shown"), "{:?}", ran.report.violations);
}

#[tokio::test]
async fn a_secret_shown_while_checking_stops_the_run_before_any_effect() {
    // postgres comes first and is fine; mesh-vault's check says a secret it should not know.
    let mut mesh = TestMesh::new().with_plugin("mesh-vault", "says_from_its_manifest");
    mesh.manifest("mesh-vault")["hostile-say-in-check"] = json!(format!("the password is {SUPERUSER}"));
    let ran = mesh.run_modules(&["postgres", "mesh-vault"], Mode::Adopt).await;
    untouched(&ran);
    assert_eq!(ran.broken(), ["secret-never-shown"], "{:?}", ran.report.violations);
    assert_eq!(ran.report.violations.len(), 1, "{:?}", ran.report.violations);
    for (module, outcome) in &ran.report.modules {
        let ModuleOutcome::NotRun { because, code, .. } = outcome else { panic!("{module}: {outcome:?}") };
        assert_eq!(*code, mesh_adopt_runtime::report::Ending::SecretShown);
        assert_mentions(because, &["preflight caught a secret shown", "`mesh-vault`", "nothing was adopted"]);
        assert!(!because.contains(SUPERUSER), "{because}");
    }
}

#[tokio::test]
async fn a_secret_cannot_be_handed_to_another_module_through_its_accepting_path() {
    let ran = run_hostile("hands_over_its_secret", |_| {}).await;
    assert_mentions(ran.refusal("postgres"), &["declares no secret `unseal-key`", "/accepting-unseal-key"]);
    untouched(&ran);
}

#[tokio::test]
async fn a_credential_a_container_runs_with_is_accepted_only_by_that_containers_declared_adopter() {
    // The vault is granted the store's superuser to read, and takes it as its own key.
    let mut mesh = TestMesh::new().with_plugin("mesh-vault", "hands_over_a_credential_it_reads");
    mesh.manifest("mesh-vault")["adopt"]["grants"]["credentials"] = serde_json::json!(["store-superuser"]);
    let ran = mesh.run().await;
    let stopped = ran.refusal("mesh-vault");
    assert_mentions(
        stopped,
        &[
            "`store-superuser` is the genesis credential `mesh-store` runs with",
            "only the module that declares it adopts `mesh-store` with it",
            "not accept it as its secret `unseal-key`",
        ],
    );
    assert!(!stopped.contains(SUPERUSER), "{stopped}");
    assert!(
        !ran.mesh.accepted().iter().any(|(module, _)| module == "mesh-vault"),
        "the vault's key was accepted: {:?}",
        ran.mesh.accepted()
    );
    assert_eq!(ran.mesh.carried().get("/accepting-unseal-key"), None, "{:?}", ran.mesh.carried());
    // postgres, which declares it adopts the store with it, hands it over as ever.
    ran.assert_adopted("postgres");
}

#[tokio::test]
async fn a_module_accepts_only_a_secret_it_carried_itself() {
    let ran = TestMesh::new()
        .with_plugin("postgres", "accepts_without_carrying")
        .run_modules(&["postgres"], Mode::Adopt)
        .await;
    assert_mentions(ran.refusal("postgres"), &["carried no secret there", "accepts only a secret it carried itself"]);
    assert!(ran.mesh.accepted().is_empty(), "{:?}", ran.mesh.accepted());
}

#[tokio::test]
async fn a_plugin_cannot_forge_lines_of_its_stop_report() {
    let ran = run_hostile("forges_its_stop_report", |_| {}).await;
    let failure = ran.failure("postgres");
    // The forged lines are a typed push's node, so they follow its verb and a space.
    assert_mentions(failure, &["its last host call: tell push \\nit had changed nothing", "what it had already done"]);
    assert!(!failure.lines().any(|l| l.trim() == "it had changed nothing on the mesh"), "{failure}");
    assert!(!failure.lines().any(|l| l.trim().starts_with("invariants")), "{failure}");
}

#[test]
fn a_plugin_that_swallows_its_denials_is_not_adopted_and_the_summary_says_why_without_v() {
    let dir = catalogue();
    std::fs::copy(plugin("registers_without_carrying"), dir.path().join("modules/postgres/adopt.wasm")).unwrap();
    let out = mesh_adopt()
        .args(["run", "--catalog-source", "https://git.mesh.test/catalogue.git@v3", "postgres"])
        .catalogue(dir.path())
        .output();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    let summary = stdout.split("\nsummary\n").nth(1).expect("a summary");
    assert!(summary.contains("postgres") && !summary.contains("adopted   "), "{summary}");
    assert!(
        summary.contains("not adopted: its plugin was denied `tell module add /postgres-module.json`"),
        "{summary}"
    );
}

/// A refusal over several lines keeps its line breaks on the terminal, each line indented
/// under the module's outcome, so it reads as written and none of it can pass for a line of
/// the host's own.
#[test]
fn a_refusals_own_line_breaks_are_kept_and_indented_never_escaped() {
    let dir = crate::support::catalogue();
    let path = dir.path().join("modules/nats/manifest.json");
    let mut manifest: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    manifest["bus-users"] = "/etc/other/accounts.conf".into();
    manifest["accesses"][0]["path"] = "/var/lib/mesh/other".into();
    std::fs::write(&path, serde_json::to_vec(&manifest).unwrap()).unwrap();
    let out = crate::support::mesh_adopt()
        .args(["check", "nats", "--catalog-source", "https://git.mesh.test/c.git"])
        .catalogue(dir.path())
        .output();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(!stdout.contains("\\n"), "an escaped line break: {stdout}");
    let lines: Vec<&str> = stdout.lines().collect();
    let at = lines.iter().position(|l| l.contains("bus-layout-differs")).unwrap_or_else(|| panic!("{stdout}"));
    assert!(lines[at].ends_with("is not where the `nats` module keeps it:"), "{stdout}");
    assert!(lines[at + 1].starts_with("                          - its streams (/data)"), "{stdout}");
    assert!(lines[at + 2].starts_with("                          - its user list"), "{stdout}");
}
