//! The event schema as a contract: the current version's schema is the one the types make and
//! is kept beside every earlier one, a released version's never changes, and the schema refuses
//! every line a reader written for it could not rely on: a field dropped, an enum's value
//! changed, a key added, another version, an exit no table lists.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use crate::events::invalid;
use crate::support::{example_catalogue, mesh_adopt, plugin, root};

/// Each released schema version with the SHA-256 of its file in `docs/schema/`: a released
/// version is a promise to readers, so its schema never changes; the types then change only
/// with a new version. The version under way is added here when it is released.
const RELEASED: &[(u32, &str)] = &[(5, "6f95a19411ec37dae58d24f5115784ad3d287cbfd9478eba31f6ed29a82ef3f1")];

fn committed(version: u32) -> Vec<u8> {
    let path = root().join(format!("docs/schema/events-{version}.json"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("`{}` is not committed: {e}", path.display()))
}

fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn every_schema_from_5_on_is_committed_and_a_released_one_never_changes() {
    let current = mesh_adopt_runtime::events::SCHEMA;
    let generated = mesh_adopt_runtime::events::json_schema();
    let kept: Value = serde_json::from_slice(&committed(current)).unwrap();
    assert!(
        kept == generated,
        "docs/schema/events-{current}.json is not what the event types make: run `just schema` and review the difference"
    );
    let published: Value =
        serde_json::from_slice(&std::fs::read(root().join("docs/events.schema.json")).unwrap()).unwrap();
    assert!(published == generated, "docs/events.schema.json is not the current version's schema: run `just schema`");
    for version in 5..=current {
        let schema: Value = serde_json::from_slice(&committed(version)).unwrap();
        assert_eq!(schema["title"], format!("mesh-adopt event, schema {version}"), "docs/schema/events-{version}.json");
    }
    for (version, hash) in RELEASED {
        assert_eq!(
            sha256(&committed(*version)),
            *hash,
            "docs/schema/events-{version}.json changed after its version was released"
        );
        if *version == current {
            assert_eq!(
                sha256(&committed(current)),
                *hash,
                "the event types changed the schema of released version {current}: move `events::SCHEMA` on"
            );
        }
    }
}

/// Every object schema's property names, split into those some object requires and those
/// that may be absent somewhere: a dropped field of the first kind only must be refused.
fn property_names(schema: &Value, required: &mut BTreeSet<String>, optional: &mut BTreeSet<String>) {
    match schema {
        Value::Object(object) => {
            if let Some(Value::Object(properties)) = object.get("properties") {
                let needed: BTreeSet<&str> = object
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|r| r.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                for name in properties.keys() {
                    match needed.contains(name.as_str()) {
                        true => required.insert(name.clone()),
                        false => optional.insert(name.clone()),
                    };
                }
            }
            object.values().for_each(|v| property_names(v, required, optional));
        }
        Value::Array(items) => items.iter().for_each(|v| property_names(v, required, optional)),
        _ => {}
    }
}

/// Every string a schema fixes a value to (`const`, `enum`).
fn fixed_strings(schema: &Value, found: &mut BTreeSet<String>) {
    match schema {
        Value::Object(object) => {
            if let Some(Value::String(value)) = object.get("const") {
                found.insert(value.clone());
            }
            for value in object.get("enum").and_then(Value::as_array).into_iter().flatten() {
                if let Value::String(value) = value {
                    found.insert(value.clone());
                }
            }
            object.values().for_each(|v| fixed_strings(v, found));
        }
        Value::Array(items) => items.iter().for_each(|v| fixed_strings(v, found)),
        _ => {}
    }
}

/// Each object of `line` (the line itself first), by its path of keys and indices.
fn objects(value: &Value, path: Vec<String>, found: &mut Vec<Vec<String>>) {
    match value {
        Value::Object(object) => {
            found.push(path.clone());
            for (key, v) in object {
                objects(v, [path.clone(), vec![key.clone()]].concat(), found);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                objects(v, [path.clone(), vec![i.to_string()]].concat(), found);
            }
        }
        _ => {}
    }
}

fn at<'a>(value: &'a mut Value, path: &[String]) -> &'a mut Value {
    path.iter().fold(value, |v, step| match v {
        Value::Array(items) => &mut items[step.parse::<usize>().unwrap()],
        other => &mut other[step.as_str()],
    })
}

/// Real lines of every kind a run of the example catalogue writes: a check, the demo run
/// adopting phase three, and a run every module refuses.
fn real_lines() -> Vec<Value> {
    let dir = example_catalogue(&plugin("adopt_postgres"));
    let mut lines = Vec::new();
    for args in [
        vec!["check", "--catalog-source", "https://git.mesh.local/catalogue.git@v3.2.0"],
        vec!["run", "--catalog-source", "https://git.mesh.local/catalogue.git@v3.2.0"],
        vec!["run"],
        vec!["run", "--node", "NOT A NODE"],
    ] {
        let out = mesh_adopt().args(&args).arg("--json").catalogue(dir.path()).output();
        for line in String::from_utf8(out.stdout).unwrap().lines() {
            let value: Value = serde_json::from_str(line).unwrap();
            assert_eq!(invalid(&value), None, "{args:?} wrote a line its schema refuses: {line}");
            lines.push(value);
        }
    }
    lines
}

#[test]
fn every_mutant_of_a_real_line_is_refused_by_the_schema() {
    let schema = mesh_adopt_runtime::events::json_schema();
    let (mut required, mut optional) = (BTreeSet::new(), BTreeSet::new());
    property_names(&schema, &mut required, &mut optional);
    let mut fixed = BTreeSet::new();
    fixed_strings(&schema, &mut fixed);
    let lines = real_lines();
    let kinds: BTreeSet<&str> = lines.iter().filter_map(|l| l["event"].as_str()).collect();
    for kind in ["run", "loaded", "plan", "effect", "started", "call", "outcome", "summary", "end", "lock"] {
        assert!(kinds.contains(kind), "no `{kind}` line among the real ones: {kinds:?}");
    }
    let mut tried: BTreeMap<&str, usize> = BTreeMap::new();
    let mut accepted = Vec::new();
    let mut check = |what: &'static str, mutant: Value, original: &Value| {
        *tried.entry(what).or_default() += 1;
        if invalid(&mutant).is_none() {
            accepted.push(format!("{what}: {mutant}\n  from {original}"));
        }
    };
    for line in &lines {
        let mut paths = Vec::new();
        objects(line, Vec::new(), &mut paths);
        for path in &paths {
            let keys: Vec<String> = at(&mut line.clone(), path).as_object().unwrap().keys().cloned().collect();
            for key in &keys {
                // A field that may be absent somewhere is not one whose drop must be refused.
                if !optional.contains(key) && required.contains(key) {
                    let mut mutant = line.clone();
                    at(&mut mutant, path).as_object_mut().unwrap().remove(key);
                    check("a required field dropped", mutant, line);
                }
                let mut mutant = line.clone();
                let value = &mut at(&mut mutant, path)[key.as_str()];
                if value.as_str().is_some_and(|s| fixed.contains(s)) {
                    *value = json!("x-mutant");
                    check("an enum's value changed", mutant, line);
                }
            }
            let mut mutant = line.clone();
            at(&mut mutant, path).as_object_mut().unwrap().insert("x_mutant".into(), json!(1));
            check("a key added", mutant, line);
        }
        match line["event"].as_str() {
            Some("run") => {
                let mut mutant = line.clone();
                mutant["schema"] = json!(7);
                check("run.schema 7", mutant, line);
            }
            Some("end") => {
                let mut mutant = line.clone();
                mutant["exit"] = json!(7);
                check("end.exit 7", mutant, line);
            }
            Some("outcome") => {
                let mut mutant = line.clone();
                mutant["succeeded"] = json!(!line["succeeded"].as_bool().unwrap());
                check("an outcome's succeeded flipped", mutant, line);
            }
            _ => {}
        }
    }
    assert!(accepted.is_empty(), "{} mutants accepted:\n{}", accepted.len(), accepted.join("\n"));
    for what in ["a required field dropped", "an enum's value changed", "a key added", "run.schema 7", "end.exit 7"] {
        assert!(tried.get(what).copied().unwrap_or(0) > 0, "no mutant of kind `{what}` was tried: {tried:?}");
    }
}

/// Every example line docs/events.md shows is a line the schema accepts: the page teaches
/// only what a reader will meet.
#[test]
fn every_example_line_in_the_events_page_is_valid() {
    let page = std::fs::read_to_string(root().join("docs/events.md")).unwrap();
    let examples: Vec<&str> = page.lines().filter(|l| l.starts_with("{\"event\"")).collect();
    assert!(examples.len() > 10, "{} example lines", examples.len());
    for line in examples {
        let value: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        if let Some(why) = invalid(&value) {
            panic!("docs/events.md shows a line its schema refuses:\n{line}\n{why}");
        }
    }
}
