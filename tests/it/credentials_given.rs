//! Credentials an installer hands over as one JSON object (`--credentials -`, or a file or pipe
//! named): a run adopts with them and no output holds a value; values are taken exactly as
//! given, where a directory's file loses one trailing newline; a document that is not an
//! object of names to text is refused naming where it came from.

use crate::support::{SUPERUSER, catalogue, mesh_adopt, text};

const SOURCE: &str = "https://git.mesh.test/catalogue.git@v3";

/// The JSON object of the example catalogue's one credential, its value `value`.
fn document(value: &str) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({ "store-superuser": value })).unwrap()
}

#[test]
fn credentials_on_standard_input_adopt_and_appear_in_no_output() {
    let dir = catalogue();
    // The directory holds another value: what adopts is the one given on standard input.
    std::fs::write(dir.path().join("genesis/credentials/store-superuser"), "not-the-one-given\n").unwrap();
    let record = dir.path().join("run.jsonl");
    let ran = mesh_adopt()
        .args(["run", "--json", "--credentials", "-", "--catalog-source", SOURCE, "--record"])
        .arg(&record)
        .catalogue(dir.path())
        .stdin_bytes(document(SUPERUSER))
        .output();
    let (stdout, stderr) = (text(&ran.stdout), text(&ran.stderr));
    assert_eq!(ran.status.code(), Some(0), "{stdout}{stderr}");
    let recorded = std::fs::read_to_string(&record).unwrap();
    for (what, said) in [("stdout", &stdout), ("stderr", &stderr), ("the record", &recorded)] {
        assert!(!said.contains(SUPERUSER), "{what} holds the credential's value");
    }
    // The value given is the one carried: the record names the credential handed over.
    assert!(recorded.contains("store-superuser"), "{recorded}");
}

#[test]
fn a_value_given_in_json_is_exact_where_a_files_loses_its_newline() {
    let dir = catalogue();
    let digest_of = |given: Option<Vec<u8>>| {
        let plan = dir.path().join("plan.json");
        let mut check = mesh_adopt().args(["check", "--catalog-source", SOURCE, "--out"]).arg(&plan);
        if let Some(bytes) = given {
            check = check.args(["--credentials", "-"]).stdin_bytes(bytes);
        }
        let checked = check.catalogue(dir.path()).output();
        assert_eq!(checked.status.code(), Some(0), "{}{}", text(&checked.stdout), text(&checked.stderr));
        let saved: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&plan).unwrap()).unwrap();
        let postgres = saved["modules"].as_array().unwrap().iter().find(|m| m["module"] == "postgres").unwrap();
        postgres["credentials_digest"].as_str().unwrap().to_string()
    };
    std::fs::write(dir.path().join("genesis/credentials/store-superuser"), format!("{SUPERUSER}\n")).unwrap();
    let from_the_directory = digest_of(None);
    assert_eq!(digest_of(Some(document(SUPERUSER))), from_the_directory);
    assert_ne!(digest_of(Some(document(&format!("{SUPERUSER}\n")))), from_the_directory);
}

#[test]
fn a_json_file_serves_as_standard_input_does_and_a_bad_document_is_refused_by_where_it_came_from() {
    let dir = catalogue();
    let file = dir.path().join("given.json");
    std::fs::write(&file, document(SUPERUSER)).unwrap();
    let checked = mesh_adopt()
        .args(["check", "--catalog-source", SOURCE, "--credentials"])
        .arg(&file)
        .catalogue(dir.path())
        .output();
    assert_eq!(checked.status.code(), Some(0), "{}", text(&checked.stderr));

    for (given, says) in [
        (&br#"["a"]"#[..], "it is not an object"),
        (br#"{"store-superuser": 7}"#, "the value of `store-superuser` is not text"),
        (br#"{"store-superuser": "x""#, "EOF"),
    ] {
        let refused = mesh_adopt()
            .args(["check", "--catalog-source", SOURCE, "--credentials", "-"])
            .catalogue(dir.path())
            .stdin_bytes(given)
            .output();
        let said = format!("{}{}", text(&refused.stdout), text(&refused.stderr));
        assert_eq!(refused.status.code(), Some(2), "{said}");
        assert!(
            said.contains("the credentials given in standard input are not a JSON object of names to text"),
            "{said}"
        );
        assert!(said.contains(says), "{said}");
    }
}

/// A control plane's answer the live mesh cut at `output_bytes` in the middle of a credential's
/// value: what is left of the value at the cut goes as the value does, from the stream, the
/// record and the words alike.
#[test]
fn what_is_left_of_a_value_where_a_mesh_cut_its_output_is_not_shown() {
    let standin = crate::live::StandIn::new();
    let config = standin.path().join("cut.toml");
    let text_of = std::fs::read_to_string(standin.config(None)).unwrap();
    std::fs::write(&config, format!("output_bytes = 4096\n{text_of}")).unwrap();
    // 4096 is 292 times 14 and 8: the cut leaves `zzLiveSe` of the value at the answer's end.
    let value = "zzLiveSecret9";
    std::fs::write(standin.path().join("fail-carry"), format!("{value}-").repeat(600)).unwrap();
    let dir = crate::lock::catalogue();
    for json in [true, false] {
        let record = dir.path().join(format!("run-{json}.jsonl"));
        let ran = crate::lock::run(&config, dir.path(), record.file_name().unwrap().to_str().unwrap(), &[])
            .args(["--credentials", "-"])
            .args(json.then_some("--json"))
            .stdin_bytes(document(value))
            .output();
        let (stdout, stderr) = (text(&ran.stdout), text(&ran.stderr));
        assert_eq!(ran.status.code(), Some(1), "{stdout}{stderr}");
        let recorded = std::fs::read_to_string(&record).unwrap();
        assert!(recorded.contains("<secret store-superuser>"), "the answer was not redacted at all: {recorded}");
        for (what, said) in [("stdout", &stdout), ("stderr", &stderr), ("the record", &recorded)] {
            assert!(!said.contains("zzLive"), "{what} holds what is left of the value at the cut");
        }
    }
}
