//! A mutation fuzz of the `mesh-adopt` binary, with an oracle taken from the documentation.
//!
//! Every case starts from a copy of the shipped `catalogue/` (its manifests and plugins, the
//! foundation bundle, the genesis credentials) and applies ONE mutation, chosen by proptest
//! from a fixed seed: to a module's `manifest.json`, to `foundation.json`, to a credential
//! file, or to the command line. Each mutation is classified by what docs/operating.md and
//! docs/writing-a-plugin.md say of it (each case carries the line it rests on):
//!
//! - INVALID, which the docs say is refused: the binary must exit 2, without a panic, and
//!   nothing may have reached the mesh: the `--record`, if one was written, holds no `call` of
//!   a `carry` or a `tell` (docs/events.md); its output names what was mutated where the
//!   message is predictable (the file, the option, the field);
//! - VALID, which the docs say is harmless: the binary must exit 0, its record ending in
//!   `{"event":"end","exit":0}`.
//!
//! Every run must end within [`TIMEOUT`] (it is killed and the case fails otherwise), and no
//! run may write to the catalogue. All runs share one compile cache (the suite's, in cargo's
//! temporary directory), so each plugin is compiled once; a warm debug run takes tens of
//! milliseconds, and the ~700 cases a few seconds. The seeds and case counts are fixed, so a
//! run is reproducible; a failure names the mutation, the doc line, the command, the exit
//! status, stdout, stderr, the record's last lines and the mutated file. `CLI_FUZZ_SHOW=1`
//! prints every case and what it exited with; raise the counts in the `#[test]`s to explore.
//!
//! Not in the fuzz, because no doc line classifies them (the host's code does): a duplicated
//! id or container name in the foundation bundle, a module named twice on the command line,
//! a `--catalog-source` part over 2048 bytes.

use std::collections::BTreeMap;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::sample::Index;
use proptest::strategy::Union;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};
use serde_json::{Map, Value, json};

use crate::support::{cut, mesh_adopt, root, shared_compile_cache};

/// How long one run of the binary may take before it is killed and the case fails.
const TIMEOUT: Duration = Duration::from_secs(30);

/// The catalogue source every run is given unless the mutation is of it.
const SOURCE: &str = "https://git.mesh.test/c.git";

/// Phase three, the modules run when none is named.
const MODULES: [&str; 3] = ["postgres", "nats", "mesh-vault"];

/// The one credential the shipped catalogue has (granted to `postgres`).
const CREDENTIAL: &str = "genesis/credentials/store-superuser";

/// Declares the doc lines each classification rests on, and [`DOC_LINES`], every one of them by
/// name, so [`cli_fuzz_doc_lines_quote_their_documents`] reads each: a line names the file it
/// quotes (`docs/operating.md`, `docs/<guide>.md`, a source file) before each "quotation" taken from it.
macro_rules! doc_lines {
    ($($name:ident = $line:expr;)*) => {
        $(const $name: &str = $line;)*
        const DOC_LINES: &[(&str, &str)] = &[$((stringify!($name), $name)),*];
    };
}

doc_lines! {
    DOC_EXIT_2 = "docs/operating.md, exit table: \"`2` | an input cannot be used: catalogue, foundation bundle, manifest, \
        plugin …, credential, plan file, configuration or option; nothing was changed\"";
    DOC_UTF8_IMAGE_NAME_ACCESS = "docs/writing-a-plugin.md, What a module adopts: \"Nor can one that is not UTF-8, \
        that lists no `resources`, or whose container has no image, a name a command could misread (empty, with \
        whitespace, starting with `-`), or a volume whose `${access:…}` names no access\"";
    DOC_ACCESS_ABSOLUTE = "docs/writing-a-plugin.md, What a module adopts: \"Nor can one … or an access whose \
        `path` is not absolute (the error names the manifest and the access)\"";
    DOC_SHARED_ID = "docs/writing-a-plugin.md, What a module adopts: \"A manifest in which two resources, or two \
        accesses, share an id, or whose resource is of type `Container` rather than `container`, cannot be used \
        (exit 2)\"";
    DOC_FIELD_TWICE = "docs/writing-a-plugin.md, The manifest: \"a key given twice in any of its objects, read by \
        the host or not, is refused, naming it\"";
    DOC_UNKNOWN_ADOPT_KEY =
        "docs/writing-a-plugin.md, The manifest: \"An unknown key in `adopt` or `grants` is refused.\"";
    DOC_NAME_IS_DIRECTORY = "docs/writing-a-plugin.md, The manifest: \"`name` | the module's name; must be its \
        directory's, or the manifest is refused\"";
    DOC_PLUGIN_FILE = "docs/writing-a-plugin.md, `plugin`: \"the file beside the manifest [default `adopt.wasm`]; \
        no `/` or `\\`. A missing file is refused with `build it with mesh-adopt build <module>`\"";
    DOC_PIN = "docs/writing-a-plugin.md, `sha256`: \"the pin, 64 hex digits (any case); any other plugin is \
        refused at load, naming both digests\" and Pins: \"a run refuses any other file, in preflight, with exit 2\"";
    DOC_WORLD = "docs/writing-a-plugin.md, `world`: \"when given it must be a world this host speaks \
        (`mesh:adopt/adopter@0.1.0` or `mesh:adopt/adopter@0.2.0`)\"";
    DOC_ADOPTS = "docs/writing-a-plugin.md, What a module adopts: \"An entry that names a container the bundle or \
        the manifest does not have, a credential without its secret, a secret not declared … makes the module \
        unusable (exit 2)\" and \"`credential` and `secret`, both or neither\"";
    DOC_GRANTED_CREDENTIAL = "docs/writing-a-plugin.md, `credentials` grant: \"Each must be a plain name (letters, \
        digits, `-`, `_`, `.`); preflight refuses the module unless each exists in the credentials directory, is \
        not empty and is at most 64 KiB\"";
    DOC_INSPECT_PLAIN =
        "docs/writing-a-plugin.md, `inspect` grant: \"containers the plugin may ask the node about. Plain names.\"";
    DOC_FETCH_STAR = "docs/writing-a-plugin.md, `fetch` grant: \"`http://*` is refused.\"";
    DOC_FOUNDATION_KIND = "docs/writing-a-plugin.md, What a module adopts: \"A foundation resource of kind \
        `Container` or `File` is refused the same way\"";
    DOC_KNOWN_KIND = "docs/writing-a-plugin.md, What a module adopts: \"Nor, in a manifest or in the foundation \
        bundle, can a resource of a type (a manifest's `type`, a bundle's `kind`) the contract does not know: it is \
        one of `container`, `file`, `network`, `service` and `volume`.\" and \"Each error names the file and \
        the field\"";
    DOC_NOTHING_TO_RAISE = "docs/writing-a-plugin.md, What a module adopts: \"Nor a manifest none of whose \
        resources is a container (a push raises containers only, so the module would have nothing to adopt or \
        install)\"";
    DOC_PLAIN_WORDS = "docs/writing-a-plugin.md, What a module adopts: \"nor a resource whose `id`, `type`, `kind` \
        or `name`, or an access whose `id`, holds a control character or a path separator\"";
    DOC_NUMBER_RULE = "docs/writing-a-plugin.md, What a module adopts: \"Nor a number beyond ±2^53 anywhere in \
        either document, read by the host or not\"; docs/push-rule.md, The number rule: \"Whether a number is \
        beyond is decided on its text, exactly\"";
    DOC_CREDENTIAL_WHITESPACE = "docs/writing-a-plugin.md, `credentials` grant: \"is not empty\"; the host's \
        message, host/runtime/src/catalogue/credentials/mod.rs: \"the credential … is empty or only whitespace\"";
    DOC_NAME_BYTES = "docs/operating.md, What a run promises 3: \"a node or module name over 253 bytes\" exits 2";
    DOC_CHECKED_WORD = "docs/writing-a-plugin.md, The commands a plugin may tell: \"Every name in a command is a \
        checked word: not empty, no leading `-`, no `..`, no whitespace or control characters\"; docs/operating.md, exit \
        table: \"`2` | an input cannot be used: … option\"";
    DOC_WAIT = "docs/operating.md, options: \"`--wait 120s` | `120s` | how long to wait for the node after a push, in whole \
        seconds from 1s to 12h (durations: `90`, `90s`, `5m`, `1h 30m`)\"";
    DOC_WALL_TIME = "docs/operating.md, options: \"`--plugin-wall-time 1h` | 1h (1s..=24h) | … a plan that builds is refused \
        in preflight unless this exceeds the build's 1500 s plus `--wait`\"";
    DOC_MEMORY = "docs/operating.md, options: \"`--plugin-memory MIB` | 64 (16..=4096)\"";
    DOC_PLUGIN_TIME = "docs/operating.md, options: \"`--plugin-time 10s` | 10s (1s..=1h)\"";
    DOC_UNKNOWN_MODULE = "docs/operating.md, What a run promises 1: preflight \"reads and verifies every module asked for — \
        its catalogue entry …\"; exit table: \"`2` | an input cannot be used: catalogue\"";
    DOC_UNKNOWN_FLAG = "docs/events.md, Reading a stream 4: \"Options clap itself refuses (an unknown flag, \
        `--wait 5x`) are reported on stderr only\" (exit 2)";
    DOC_MANIFEST_FIELDS = "docs/writing-a-plugin.md, The manifest: \"The host reads these fields of \
        `modules/<module>/manifest.json`; others (such as `version`) are left to the control plane\" (JSON layout \
        and key order are no field)";
    DOC_MANIFEST_DEFAULTS = "docs/writing-a-plugin.md, `plugin` \"[default `adopt.wasm`]\", `world` \"when given\", \
        `source` \"the host itself never reads it\"";
    DOC_FOUNDATION = "docs/writing-a-plugin.md, A catalogue repository: \"`foundation.json` | the foundation \
        bundle: what genesis raised (containers, files, other resources)\"";
    DOC_CREDENTIAL_OK = "docs/writing-a-plugin.md, `credentials` grant: refused only unless it \"exists in the \
        credentials directory, is not empty and is at most 64 KiB\"; the walkthrough writes one with \
        `printf 's3cret-cache-password\\n'`";
    DOC_SCRUBBED = "docs/rules.md, secret-never-shown: \"values shorter than 6 characters cannot be told from ordinary \
        text and are not scrubbed\"; only granted credentials are checked by preflight";
    DOC_NODE_NAME = "docs/operating.md, options: \"`--node NODE` | `node-1` | the node modules are assigned to: an RFC 1123 \
        subdomain (lowercase letters, digits, `-` and `.`; labels of 1–63 characters that begin and end with a letter \
        or digit; 253 characters at most), else exit 2\"";
    DOC_OPTIONS_OK = "docs/operating.md, options table (`--node` default `node-1`; `--catalog-source REPO[@REF]`; `--wait` \
        1s to 12h; `--plugin-memory` 16..=4096; `--plugin-time` 1s..=1h; `--plugin-wall-time` 1s..=24h, above \
        1500 s plus `--wait`)";
    DOC_SIMULATED_WAIT = "docs/operating.md `--wait` (1s to 12h) with docs/writing-a-plugin.md Scenarios: the simulated \
        node applies a push 5s after it (`apply_delay`) and a recreated bus answers 6s later (`bus_recovery`); a \
        wait from 60s to 2099s also keeps the wall-time rule";
    DOC_MODULES = "docs/operating.md, The commands: `mesh-adopt run [MODULE…]`, \"Modules default to phase three's order: \
        `postgres nats mesh-vault`\"; walkthrough: `mesh-adopt run redis` runs one module";
    DOC_LINK_OUT = "docs/operating.md, What a run promises 3: exit 2 for \"a catalogue's manifest, plugin or `modules/` \
        that leads out of it through a link\"";
    DOC_LINK_INSIDE = "docs/operating.md, What a run promises 3: exit 2 only for \"a catalogue's manifest, plugin or \
        `modules/` that leads out of it through a link\", not for one that stays inside";
    DOC_NOT_COMPONENT = "docs/operating.md, What a run promises 3: exit 2 for \"a plugin that is not a WebAssembly \
        component (refused before any digest of it is shown)\"";
    DOC_NOT_REGULAR = "docs/operating.md, What a run promises 3: exit 2 for \"a file that is not a regular one wherever \
        the command reads or writes one (a record, a plan, a configuration, … a FIFO, a device, a directory\"";
    DOC_SITE = "docs/operating.md, options: `--foundation FILE` \"the bundle genesis produced\", `--credentials DIR` \
        \"genesis credentials\"; exit 2 for a foundation bundle or credential that cannot be used";
    DOC_PLAN_FILE = "docs/operating.md, exit table: \"`2` | an input cannot be used: … plan file …\"; `--plan PLAN` (run)";
    DOC_SHOWN = "docs/operating.md, options: `-v` \"also print every host call\", `--json` \"the same JSON lines on stdout\"";
}

/// What the docs say a mutation does.
#[derive(Clone, Debug)]
enum Expect {
    /// Refused: exit 2, nothing reaches the mesh, and the output holds each fragment (or,
    /// for one written `!fragment`, does not hold it).
    Invalid(Vec<String>),
    /// Harmless: exit 0.
    Valid,
}

/// One mutated input: what the catalogue copy and the command line become.
#[derive(Clone)]
struct Case {
    /// The kind of mutation, as the tally counts it.
    kind: &'static str,
    /// The mutation with its random parameters, in words.
    what: String,
    /// The doc line the classification rests on.
    doc: &'static str,
    expect: Expect,
    /// Files of the catalogue copy, by path inside it: written with these bytes, or removed.
    files: Vec<(String, Option<Vec<u8>>)>,
    /// Symbolic links made in the catalogue copy (over what is there), by path inside it: to
    /// a target as given, `{dir}` standing for the copy's directory.
    links: Vec<(String, String)>,
    /// FIFOs and directories made in the catalogue copy.
    fifos: Vec<String>,
    dirs: Vec<String>,
    /// Where `--record` writes, `{dir}` standing for the copy's directory [default
    /// `{dir}/r.jsonl`].
    record: Option<String>,
    /// The modules named on the command line (none: phase three's default).
    modules: Vec<String>,
    /// The `--catalog-source` value.
    source: String,
    /// More options, after the site options.
    options: Vec<String>,
}

impl fmt::Debug for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verdict = match &self.expect {
            Expect::Invalid(fragments) => format!("INVALID (exit 2, mentioning {fragments:?})"),
            Expect::Valid => "VALID (exit 0)".to_string(),
        };
        write!(f, "[{}] {} → {verdict}", self.kind, self.what)
    }
}

impl Case {
    fn new(kind: &'static str, what: impl Into<String>, doc: &'static str, expect: Expect) -> Case {
        Case {
            kind,
            what: what.into(),
            doc,
            expect,
            files: Vec::new(),
            links: Vec::new(),
            fifos: Vec::new(),
            dirs: Vec::new(),
            record: None,
            modules: Vec::new(),
            source: SOURCE.to_string(),
            options: Vec::new(),
        }
    }

    fn invalid(kind: &'static str, what: impl Into<String>, doc: &'static str, mentions: &[&str]) -> Case {
        Case::new(kind, what, doc, Expect::Invalid(mentions.iter().map(|m| m.to_string()).collect()))
    }

    fn valid(kind: &'static str, what: impl Into<String>, doc: &'static str) -> Case {
        Case::new(kind, what, doc, Expect::Valid)
    }

    fn file(mut self, path: impl Into<String>, bytes: Option<Vec<u8>>) -> Case {
        self.files.push((path.into(), bytes));
        self
    }

    fn link(mut self, path: impl Into<String>, target: impl Into<String>) -> Case {
        self.links.push((path.into(), target.into()));
        self
    }

    fn option(mut self, option: &str, value: &str) -> Case {
        // `--opt=value`, so a value starting with `-` is still the option's.
        self.options.push(format!("{option}={value}"));
        self
    }
}

// ---------------------------------------------------------------------------------------
// The shipped catalogue, read once.

struct Shipped {
    foundation: Vec<u8>,
    manifests: BTreeMap<&'static str, Vec<u8>>,
    plugins: BTreeMap<&'static str, Vec<u8>>,
    credential: Vec<u8>,
}

fn shipped() -> &'static Shipped {
    static SHIPPED: OnceLock<Shipped> = OnceLock::new();
    SHIPPED.get_or_init(|| {
        let catalogue = root().join("catalogue");
        let read = |path: PathBuf| {
            std::fs::read(&path)
                .unwrap_or_else(|e| panic!("`{}` cannot be read ({e}): run `just build-plugins` first", path.display()))
        };
        Shipped {
            foundation: read(catalogue.join("foundation.json")),
            manifests: MODULES
                .iter()
                .map(|m| (*m, read(catalogue.join("modules").join(m).join("manifest.json"))))
                .collect(),
            plugins: MODULES.iter().map(|m| (*m, read(catalogue.join("modules").join(m).join("adopt.wasm")))).collect(),
            credential: read(catalogue.join(CREDENTIAL)),
        }
    })
}

fn manifest_path(module: &str) -> String {
    format!("modules/{module}/manifest.json")
}

fn manifest(module: &str) -> Value {
    serde_json::from_slice(&shipped().manifests[module]).unwrap()
}

fn foundation() -> Value {
    serde_json::from_slice(&shipped().foundation).unwrap()
}

fn pretty(value: &Value) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(value).unwrap();
    bytes.push(b'\n');
    bytes
}

/// The shipped manifest of `module` with `edit` applied, written as pretty JSON.
fn edited(module: &str, edit: impl FnOnce(&mut Value)) -> Vec<u8> {
    let mut value = manifest(module);
    edit(&mut value);
    pretty(&value)
}

/// An edit of a manifest, and of its `adopt` section.
type Edit = Box<dyn FnOnce(&mut Value)>;
type AdoptEdit = Box<dyn FnOnce(&mut Map<String, Value>)>;

/// The indices of `module`'s resources that are containers.
fn containers(module: &str) -> Vec<usize> {
    let value = manifest(module);
    value["resources"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .filter(|(_, r)| r["type"] == "container")
        .map(|(i, _)| i)
        .collect()
}

/// A plain word: a lower-case letter, then letters, digits and `-`.
fn word() -> impl Strategy<Value = String> {
    "[a-z][a-z0-9]{0,6}(-[a-z0-9]{1,6}){0,2}"
}

fn module() -> impl Strategy<Value = &'static str> {
    prop::sample::select(MODULES.to_vec())
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    format!("{:x}", sha2::Sha256::digest(bytes))
}

/// Every object in `value` with its keys in an order drawn from `salt` (arrays keep theirs).
fn reorder(value: &mut Value, salt: u64) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = std::mem::take(map).into_iter().collect();
            entries.sort_by_key(|(key, _)| {
                let mut hasher = std::collections::hash_map::DefaultHasher::new();
                (salt, key).hash(&mut hasher);
                hasher.finish()
            });
            for (key, mut child) in entries {
                reorder(&mut child, salt);
                map.insert(key, child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| reorder(item, salt)),
        _ => {}
    }
}

/// `value` laid out again: compact, or pretty with another indent.
fn reindented(value: &Value, style: usize) -> (Vec<u8>, &'static str) {
    let indents: [(&[u8], &str); 4] = [(b"", "compact"), (b"\t", "tabs"), (b"    ", "4 spaces"), (b" ", "1 space")];
    let (indent, name) = indents[style % indents.len()];
    if indent.is_empty() {
        return (serde_json::to_vec(value).unwrap(), name);
    }
    let mut bytes = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(indent);
    let mut serializer = serde_json::Serializer::with_formatter(&mut bytes, formatter);
    serde::Serialize::serialize(value, &mut serializer).unwrap();
    (bytes, name)
}

/// Byte sequences that are not UTF-8 anywhere.
const NOT_UTF8: [&[u8]; 7] =
    [b"\xff", b"\xfe", b"\xc0\x80", b"\x80", b"\xed\xa0\x80", b"\xf5\x80\x80\x80", b"\xe2\x82"];

/// A duration of `secs` seconds as an operator may write it.
fn duration_text(secs: u64, style: usize) -> String {
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    match style % 4 {
        0 => secs.to_string(),
        1 => format!("{secs}s"),
        2 if secs.is_multiple_of(60) => format!("{}m", secs / 60),
        2 => format!("{}m {s}s", secs / 60),
        _ => {
            let parts: Vec<String> = [(h, "h"), (m, "m"), (s, "s")]
                .iter()
                .filter(|(n, _)| *n > 0)
                .map(|(n, unit)| format!("{n}{unit}"))
                .collect();
            if parts.is_empty() { "0s".into() } else { parts.join(" ") }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Manifest mutations.

fn manifest_mutations() -> Vec<BoxedStrategy<Case>> {
    let mut arms: Vec<BoxedStrategy<Case>> = Vec::new();

    // INVALID: the manifest cut short before its closing brace.
    arms.push(
        (module(), any::<Index>())
            .prop_map(|(m, at)| {
                let bytes = &shipped().manifests[m];
                let end = bytes.iter().rposition(|b| *b == b'}').unwrap();
                let cut = 1 + at.index(end - 1);
                Case::invalid(
                    "manifest-truncated",
                    format!("{} cut to its first {cut} of {} bytes", manifest_path(m), bytes.len()),
                    DOC_EXIT_2,
                    &[&manifest_path(m), "is malformed"],
                )
                .file(manifest_path(m), Some(bytes[..cut].to_vec()))
            })
            .boxed(),
    );
    // INVALID: bytes that are not UTF-8 spliced in after a quote (inside a string, or just
    // after one).
    arms.push(
        (module(), any::<Index>(), prop::sample::select(NOT_UTF8.to_vec()))
            .prop_map(|(m, at, junk)| {
                let mut bytes = shipped().manifests[m].clone();
                let quotes: Vec<usize> =
                    bytes.iter().enumerate().filter(|(_, b)| **b == b'"').map(|(i, _)| i).collect();
                let after = quotes[at.index(quotes.len())] + 1;
                bytes.splice(after..after, junk.iter().copied());
                Case::invalid(
                    "manifest-not-utf8",
                    format!("{} with bytes {junk:02x?} (not UTF-8) spliced in at offset {after}", manifest_path(m)),
                    DOC_UTF8_IMAGE_NAME_ACCESS,
                    &[&manifest_path(m), "is malformed"],
                )
                .file(manifest_path(m), Some(bytes))
            })
            .boxed(),
    );
    // INVALID: the manifest replaced by random bytes (its `name` can never be its directory's).
    arms.push(
        (module(), prop::collection::vec(any::<u8>(), 0..64))
            .prop_map(|(m, junk)| {
                Case::invalid(
                    "manifest-junk",
                    format!("{} replaced by {} random bytes {junk:02x?}", manifest_path(m), junk.len()),
                    DOC_NAME_IS_DIRECTORY,
                    &[&manifest_path(m)],
                )
                .file(manifest_path(m), Some(junk))
            })
            .boxed(),
    );
    // INVALID: a manifest that lists no `resources` (an empty list, or none at all).
    arms.push(
        (module(), any::<bool>())
            .prop_map(|(m, removed)| {
                let bytes = edited(m, |v| {
                    if removed {
                        v.as_object_mut().unwrap().remove("resources");
                    } else {
                        v["resources"] = json!([]);
                    }
                });
                Case::invalid(
                    "manifest-no-resources",
                    format!("{}: `resources` {}", manifest_path(m), if removed { "removed" } else { "made []" }),
                    DOC_UTF8_IMAGE_NAME_ACCESS,
                    &[&manifest_path(m), "its `resources` list nothing"],
                )
                .file(manifest_path(m), Some(bytes))
            })
            .boxed(),
    );
    // INVALID: a container with no image (empty, blank, or no key at all).
    arms.push(
        (module(), any::<Index>(), prop::sample::select(vec![None, Some(""), Some(" "), Some("\t"), Some("  \n ")]))
            .prop_map(|(m, which, image)| {
                let index = containers(m)[which.index(containers(m).len())];
                let bytes = edited(m, |v| {
                    let resource = v["resources"][index].as_object_mut().unwrap();
                    match image {
                        Some(image) => resource.insert("image".into(), json!(image)),
                        None => resource.remove("image"),
                    };
                });
                let how = image.map_or("removed".to_string(), |i| format!("set to {i:?}"));
                Case::invalid(
                    "manifest-no-image",
                    format!("{}: the image of resources[{index}] {how}", manifest_path(m)),
                    DOC_UTF8_IMAGE_NAME_ACCESS,
                    &[&manifest_path(m), "names no image"],
                )
                .file(manifest_path(m), Some(bytes))
            })
            .boxed(),
    );
    // INVALID: a container name a command could misread: empty, with whitespace, or
    // starting with `-`.
    arms.push(
        (module(), any::<Index>(), word(), word(), prop::sample::select(vec![" ", "\t", "\n", "\u{a0}"]), 0..3usize)
            .prop_map(|(m, which, a, b, space, how)| {
                let index = containers(m)[which.index(containers(m).len())];
                let name = match how {
                    0 => String::new(),
                    1 => format!("{a}{space}{b}"),
                    _ => format!("-{a}"),
                };
                let id = manifest(m)["resources"][index]["id"].as_str().unwrap().to_string();
                Case::invalid(
                    "manifest-container-name",
                    format!("{}: container `{id}` renamed {name:?}", manifest_path(m)),
                    DOC_UTF8_IMAGE_NAME_ACCESS,
                    &[&manifest_path(m), &format!("its container `{id}`")],
                )
                .file(manifest_path(m), Some(edited(m, |v| v["resources"][index]["name"] = json!(name))))
            })
            .boxed(),
    );
    // INVALID: a volume whose `${access:…}` names no access.
    arms.push(
        (module(), any::<Index>(), "[a-z][a-z0-9_-]{0,11}")
            .prop_filter("an access the module does not declare", |(m, _, id)| {
                manifest(m)["accesses"].as_array().unwrap().iter().all(|a| a["id"] != id.as_str())
            })
            .prop_map(|(m, which, id)| {
                let value = manifest(m);
                let mut volumes = Vec::new();
                for (r, resource) in value["resources"].as_array().unwrap().iter().enumerate() {
                    for (v, volume) in resource["volumes"].as_array().into_iter().flatten().enumerate() {
                        if volume.as_str().unwrap().contains("${access:") {
                            volumes.push((r, v));
                        }
                    }
                }
                let (r, v) = volumes[which.index(volumes.len())];
                let old = value["resources"][r]["volumes"][v].as_str().unwrap().to_string();
                let start = old.find("${access:").unwrap();
                let end = start + old[start..].find('}').unwrap();
                let new = format!("{}${{access:{id}}}{}", &old[..start], &old[end + 1..]);
                Case::invalid(
                    "manifest-unknown-access",
                    format!("{}: volume {old:?} of resources[{r}] made {new:?}", manifest_path(m)),
                    DOC_UTF8_IMAGE_NAME_ACCESS,
                    &[&manifest_path(m), "names no access"],
                )
                .file(manifest_path(m), Some(edited(m, |v2| v2["resources"][r]["volumes"][v] = json!(new))))
            })
            .boxed(),
    );
    // INVALID: two resources with one id (a copy of one added, or another's id taken).
    arms.push(
        (module(), any::<Index>(), any::<bool>())
            .prop_map(|(m, which, copy)| {
                let value = manifest(m);
                let resources = value["resources"].as_array().unwrap();
                let (what, bytes, id) = if copy || resources.len() < 2 {
                    let index = which.index(resources.len());
                    let id = resources[index]["id"].as_str().unwrap().to_string();
                    let bytes = edited(m, |v| {
                        let copy = v["resources"][index].clone();
                        v["resources"].as_array_mut().unwrap().push(copy);
                    });
                    (format!("resources[{index}] (`{id}`) given twice"), bytes, id)
                } else {
                    let index = which.index(resources.len());
                    let other = (index + 1) % resources.len();
                    let id = resources[other]["id"].as_str().unwrap().to_string();
                    let bytes = edited(m, |v| v["resources"][index]["id"] = json!(id));
                    (format!("resources[{index}] given the id `{id}` of resources[{other}]"), bytes, id)
                };
                Case::invalid(
                    "manifest-resource-id-twice",
                    format!("{}: {what}", manifest_path(m)),
                    DOC_SHARED_ID,
                    &[&manifest_path(m), &format!("two of its resources have the id `{id}`")],
                )
                .file(manifest_path(m), Some(bytes))
            })
            .boxed(),
    );
    // INVALID: an access whose path is not absolute.
    arms.push(
        (module(), any::<Index>(), prop::sample::select(vec!["", "./", "../", "~/", "var/"]))
            .prop_map(|(m, which, start)| {
                let value = manifest(m);
                let index = which.index(value["accesses"].as_array().unwrap().len());
                let access = &value["accesses"][index];
                let id = access["id"].as_str().unwrap().to_string();
                let path = format!("{start}{}", access["path"].as_str().unwrap().trim_start_matches('/'));
                Case::invalid(
                    "manifest-access-relative",
                    format!("{}: access `{id}` given the path {path:?}", manifest_path(m)),
                    DOC_ACCESS_ABSOLUTE,
                    &[&manifest_path(m), &format!("its access `{id}` has the path `{path}`, which is not absolute")],
                )
                .file(manifest_path(m), Some(edited(m, |v| v["accesses"][index]["path"] = json!(path))))
            })
            .boxed(),
    );
    // INVALID: two accesses with one id.
    arms.push(
        (module(), any::<Index>(), any::<bool>(), "/var/lib/[a-z]{1,8}")
            .prop_map(|(m, which, copy, path)| {
                let value = manifest(m);
                let accesses = value["accesses"].as_array().unwrap();
                let index = which.index(accesses.len());
                let id = accesses[index]["id"].as_str().unwrap().to_string();
                let (what, bytes) = if copy || accesses.len() < 2 {
                    let bytes = edited(m, |v| {
                        v["accesses"].as_array_mut().unwrap().push(json!({"id": id, "path": path}));
                    });
                    (format!("a second access `{id}` added, at {path}"), bytes)
                } else {
                    let other = (index + 1) % accesses.len();
                    let bytes = edited(m, |v| v["accesses"][other]["id"] = json!(id));
                    (format!("accesses[{other}] given the id `{id}` of accesses[{index}]"), bytes)
                };
                Case::invalid(
                    "manifest-access-id-twice",
                    format!("{}: {what}", manifest_path(m)),
                    DOC_SHARED_ID,
                    &[&manifest_path(m), &format!("two of its accesses have the id `{id}`")],
                )
                .file(manifest_path(m), Some(bytes))
            })
            .boxed(),
    );
    // INVALID: a container's type in another case (`Container`).
    arms.push(
        (module(), any::<Index>(), prop::collection::vec(any::<bool>(), 9))
            .prop_map(|(m, which, upper)| {
                let index = containers(m)[which.index(containers(m).len())];
                let mut kind: String = "container"
                    .chars()
                    .zip(&upper)
                    .map(|(c, up)| if *up { c.to_ascii_uppercase() } else { c })
                    .collect();
                if kind == "container" {
                    kind = "Container".into();
                }
                Case::invalid(
                    "manifest-type-case",
                    format!("{}: resources[{index}] of type {kind:?}", manifest_path(m)),
                    DOC_SHARED_ID,
                    &[&manifest_path(m), &format!("is of type `{kind}`")],
                )
                .file(manifest_path(m), Some(edited(m, |v| v["resources"][index]["type"] = json!(kind))))
            })
            .boxed(),
    );
    // INVALID: a field the host reads given twice, in any object of the manifest the host
    // reads (the top, a resource, an access, an `adopts` entry, `adopt`, its `grants`), once
    // with the value it has and once with the same value or another.
    arms.push(
        (module(), any::<Index>(), any::<Index>(), any::<bool>())
            .prop_map(|(m, which_object, which_field, same)| {
                let value = manifest(m);
                // Every object the host reads, by JSON pointer, and the fields it reads there.
                let mut objects: Vec<(String, &[&str])> = vec![
                    (
                        String::new(),
                        &["name", "resources", "accesses", "secrets", "bus-subjects", "bus-users", "adopts", "adopt"],
                    ),
                    ("/adopt".into(), &["plugin", "sha256", "world", "source", "grants"]),
                    ("/adopt/grants".into(), &["credentials", "inspect", "fetch"]),
                ];
                for i in 0..value["resources"].as_array().unwrap().len() {
                    objects.push((format!("/resources/{i}"), &["id", "type", "name", "image", "volumes"]));
                }
                for i in 0..value["accesses"].as_array().map_or(0, Vec::len) {
                    objects.push((format!("/accesses/{i}"), &["id", "path"]));
                }
                for i in 0..value["adopts"].as_array().map_or(0, Vec::len) {
                    objects.push((format!("/adopts/{i}"), &["foundation", "container", "how", "credential", "secret"]));
                }
                objects.retain(|(pointer, read)| {
                    value
                        .pointer(pointer)
                        .and_then(Value::as_object)
                        .is_some_and(|o| o.keys().any(|k| read.contains(&k.as_str())))
                });
                let (pointer, read) = objects[which_object.index(objects.len())].clone();
                let object = value.pointer(&pointer).unwrap().as_object().unwrap().clone();
                let fields: Vec<&String> = object.keys().filter(|k| read.contains(&k.as_str())).collect();
                let field = fields[which_field.index(fields.len())].clone();
                let other = match &object[&field] {
                    Value::String(how) if field == "how" => json!(if how == "kept" { "recreated" } else { "kept" }),
                    Value::String(text) => json!(format!("{text}-2")),
                    Value::Array(_) => json!([]),
                    Value::Object(_) => json!({}),
                    v => v.clone(),
                };
                let first = if same { object[&field].clone() } else { other };
                // A marker key put first in the object, then swapped for the field's first copy.
                let mut edited_value = value.clone();
                let target = edited_value.pointer_mut(&pointer).unwrap().as_object_mut().unwrap();
                let mut with_marker = Map::new();
                with_marker.insert("\u{1}marker".into(), Value::Null);
                with_marker.extend(std::mem::take(target));
                *target = with_marker;
                let text = String::from_utf8(pretty(&edited_value)).unwrap();
                let inserted = format!("\"{field}\": {}", serde_json::to_string(&first).unwrap());
                let bytes = text.replacen("\"\\u0001marker\": null", &inserted, 1).into_bytes();
                assert_ne!(bytes, text.as_bytes(), "the marker was replaced");
                Case::invalid(
                    "manifest-field-twice",
                    format!("{}: field `{field}` of `{pointer}` given twice, first as `{inserted}`", manifest_path(m)),
                    DOC_FIELD_TWICE,
                    &[&manifest_path(m), &format!("duplicate field `{field}`")],
                )
                .file(manifest_path(m), Some(bytes))
            })
            .boxed(),
    );
    // INVALID: a key the host does not read (`version`, or one of the manifest's own) given
    // twice, at the top or in a resource: the control plane reads what the host does not.
    arms.push(
        (module(), any::<bool>(), word(), "\\PC{0,20}")
            .prop_map(|(m, in_resource, w, text)| {
                let key = if in_resource { format!("x-{w}") } else { "version".to_string() };
                let mut value = manifest(m);
                let object = if in_resource { &mut value["resources"][0] } else { &mut value };
                object[&key] = json!("\u{1}marker");
                let text_value = serde_json::to_string(&text).unwrap();
                let pretty_text = String::from_utf8(pretty(&value)).unwrap();
                let marker = format!("\"{key}\": \"\\u0001marker\"");
                let twice = format!("\"{key}\": {text_value}, \"{key}\": {text_value}");
                let bytes = pretty_text.replacen(&marker, &twice, 1).into_bytes();
                assert_ne!(bytes, pretty_text.as_bytes(), "the marker was replaced");
                let mention = format!("the key `{key}` is given twice");
                Case::invalid(
                    "manifest-unread-key-twice",
                    format!("{}: unread key `{key}` given twice", manifest_path(m)),
                    DOC_FIELD_TWICE,
                    &[&manifest_path(m), &mention],
                )
                .file(manifest_path(m), Some(bytes))
            })
            .boxed(),
    );
    // INVALID: an unknown key in `adopt` or in `adopt.grants`.
    arms.push(
        (module(), "[a-z][a-z_]{0,11}", any::<bool>(), "\\PC{0,12}")
            .prop_filter("not a key `adopt` or `grants` knows", |(_, key, _, _)| {
                !["plugin", "sha256", "world", "source", "grants", "credentials", "inspect", "fetch"]
                    .contains(&key.as_str())
            })
            .prop_map(|(m, key, in_grants, text)| {
                let bytes = edited(m, |v| {
                    let adopt = v["adopt"].as_object_mut().unwrap();
                    if in_grants {
                        let grants = adopt.entry("grants").or_insert_with(|| json!({}));
                        grants.as_object_mut().unwrap().insert(key.clone(), json!(text));
                    } else {
                        adopt.insert(key.clone(), json!(text));
                    }
                });
                Case::invalid(
                    "manifest-unknown-adopt-key",
                    format!(
                        "{}: unknown key `{key}`: {text:?} added to `adopt{}`",
                        manifest_path(m),
                        if in_grants { ".grants" } else { "" }
                    ),
                    DOC_UNKNOWN_ADOPT_KEY,
                    &[&manifest_path(m), &format!("unknown field `{key}`")],
                )
                .file(manifest_path(m), Some(bytes))
            })
            .boxed(),
    );
    // INVALID: `name` other than the directory's (another module's, or any word).
    arms.push(
        (module(), prop_oneof![module().prop_map(String::from), word()])
            .prop_filter("another name", |(m, name)| m != name)
            .prop_map(|(m, name)| {
                Case::invalid(
                    "manifest-name-not-directory",
                    format!("{}: `name` set to {name:?}", manifest_path(m)),
                    DOC_NAME_IS_DIRECTORY,
                    &[&manifest_path(m), &format!("is named `{name}`, but it lives in `modules/{m}`")],
                )
                .file(manifest_path(m), Some(edited(m, |v| v["name"] = json!(name))))
            })
            .boxed(),
    );
    // INVALID: `adopt.plugin` with a `/` or `\` (another module's plugin, a subdirectory).
    arms.push(
        (module(), module(), word(), 0..3usize)
            .prop_map(|(m, other, w, how)| {
                let plugin = match how {
                    0 => format!("../{other}/adopt.wasm"),
                    1 => format!("{w}/adopt.wasm"),
                    _ => format!("..\\{other}\\adopt.wasm"),
                };
                Case::invalid(
                    "manifest-plugin-path",
                    format!("{}: `adopt.plugin` set to {plugin:?}", manifest_path(m)),
                    DOC_PLUGIN_FILE,
                    &[&manifest_path(m), "names plugin", "it must be a file beside the manifest"],
                )
                .file(manifest_path(m), Some(edited(m, |v| v["adopt"]["plugin"] = json!(plugin))))
            })
            .boxed(),
    );
    // INVALID: `adopt.plugin` naming a file that is not there, or no file at all.
    arms.push(
        (module(), word(), prop::sample::select(vec!["", ".", ".."]), any::<bool>())
            .prop_map(|(m, w, odd, missing)| {
                let (plugin, mentions) = if missing {
                    (format!("{w}.wasm"), vec![format!("modules/{m}/{w}.wasm"), format!("mesh-adopt build {m}")])
                } else {
                    (odd.to_string(), vec![format!("modules/{m}")])
                };
                Case::invalid(
                    "manifest-plugin-missing",
                    format!("{}: `adopt.plugin` set to {plugin:?}, which is no file beside it", manifest_path(m)),
                    DOC_PLUGIN_FILE,
                    &mentions.iter().map(String::as_str).collect::<Vec<_>>(),
                )
                .file(manifest_path(m), Some(edited(m, |v| v["adopt"]["plugin"] = json!(plugin))))
            })
            .boxed(),
    );
    // INVALID: a pin that is not 64 hex digits.
    arms.push(
        (
            module(),
            prop_oneof!["[0-9a-f]{1,63}", "[0-9a-f]{65,70}", "[0-9a-f]{20}[g-z ][0-9a-f]{43}", Just(String::new())],
        )
            .prop_map(|(m, pin)| {
                Case::invalid(
                    "manifest-pin-malformed",
                    format!("{}: `adopt.sha256` set to {pin:?}", manifest_path(m)),
                    DOC_PIN,
                    &[&manifest_path(m), "which is not a sha256"],
                )
                .file(manifest_path(m), Some(edited(m, |v| v["adopt"]["sha256"] = json!(pin))))
            })
            .boxed(),
    );
    // INVALID: a well-formed pin of another plugin.
    arms.push(
        (module(), "[0-9a-fA-F]{64}")
            .prop_filter("another digest", |(m, pin)| pin.to_ascii_lowercase() != sha256_hex(&shipped().plugins[m]))
            .prop_map(|(m, pin)| {
                Case::invalid(
                    "manifest-pin-other",
                    format!("{}: `adopt.sha256` set to {pin}, not the plugin's", manifest_path(m)),
                    DOC_PIN,
                    &[&manifest_path(m), "and the manifest pins"],
                )
                .file(manifest_path(m), Some(edited(m, |v| v["adopt"]["sha256"] = json!(pin))))
            })
            .boxed(),
    );
    // INVALID: a world other than this host's.
    arms.push(
        (
            module(),
            prop_oneof![
                "mesh:adopt/adopter@0\\.[3-9]\\.[0-9]".prop_map(String::from),
                "mesh:adopt/[a-z]{1,8}@0\\.1\\.0".prop_map(String::from),
                "[a-z]{1,6}:[a-z]{1,6}/[a-z]{1,6}".prop_map(String::from),
            ],
        )
            .prop_filter("another world", |(_, world)| {
                !["mesh:adopt/adopter@0.1.0", "mesh:adopt/adopter@0.2.0"].contains(&world.as_str())
            })
            .prop_map(|(m, world)| {
                Case::invalid(
                    "manifest-world",
                    format!("{}: `adopt.world` set to {world:?}", manifest_path(m)),
                    DOC_WORLD,
                    &[&manifest_path(m), &format!("targets `{world}`")],
                )
                .file(manifest_path(m), Some(edited(m, |v| v["adopt"]["world"] = json!(world))))
            })
            .boxed(),
    );
    // INVALID: an `adopts` entry declared wrongly (the plugins' own checks do not read it).
    arms.push(
        (prop::sample::select(vec!["postgres", "nats"]), 0..5usize, word())
            .prop_map(|(m, how, w)| {
                let (what, edit): (String, Edit) = match (m, how) {
                    (_, 0) => (
                        format!("`adopts[0].foundation` set to `x-{w}`, which the bundle does not have"),
                        Box::new(move |v: &mut Value| v["adopts"][0]["foundation"] = json!(format!("x-{w}"))),
                    ),
                    ("postgres", 2) => (
                        "`adopts[0].secret` removed: a credential without its secret".into(),
                        Box::new(|v: &mut Value| drop(v["adopts"][0].as_object_mut().unwrap().remove("secret"))),
                    ),
                    ("postgres", 3) => (
                        "`adopts[0].credential` removed: a secret without its credential".into(),
                        Box::new(|v: &mut Value| drop(v["adopts"][0].as_object_mut().unwrap().remove("credential"))),
                    ),
                    ("postgres", 4) => (
                        format!("`adopts[0].secret` set to `x-{w}`, which `secrets` does not declare"),
                        Box::new(move |v: &mut Value| v["adopts"][0]["secret"] = json!(format!("x-{w}"))),
                    ),
                    _ => (
                        format!("`adopts[0].container` set to `x-{w}`, which the manifest does not have"),
                        Box::new(move |v: &mut Value| v["adopts"][0]["container"] = json!(format!("x-{w}"))),
                    ),
                };
                Case::invalid(
                    "manifest-adopts-wrong",
                    format!("{}: {what}", manifest_path(m)),
                    DOC_ADOPTS,
                    &[&manifest_path(m), "declares what it adopts wrongly"],
                )
                .file(manifest_path(m), Some(edited(m, edit)))
            })
            .boxed(),
    );
    // INVALID: a granted credential that the credentials directory does not hold.
    arms.push(
        (module(), "[a-zA-Z0-9_][a-zA-Z0-9_.-]{0,20}")
            .prop_filter("not the shipped credential, a plain name", |(_, name)| {
                name != "store-superuser" && !name.contains("..")
            })
            .prop_map(|(m, name)| {
                let bytes = edited(m, |v| {
                    let grants = v["adopt"].as_object_mut().unwrap().entry("grants").or_insert_with(|| json!({}));
                    let list = grants.as_object_mut().unwrap().entry("credentials").or_insert_with(|| json!([]));
                    list.as_array_mut().unwrap().push(json!(name));
                });
                Case::invalid(
                    "manifest-grant-absent-credential",
                    format!("{}: credential `{name}`, which genesis did not leave, granted", manifest_path(m)),
                    DOC_GRANTED_CREDENTIAL,
                    &[&manifest_path(m), &format!("grants credential `{name}`")],
                )
                .file(manifest_path(m), Some(bytes))
            })
            .boxed(),
    );
    // INVALID: a credential or inspect grant that is no plain name, or the fetch grant
    // `http://*`.
    arms.push(
        (
            module(),
            word(),
            0..5usize,
            any::<bool>(),
            prop::sample::select(vec![" ", "/", "\\", "$", "@", ":", "*", "é", "\n"]),
        )
            .prop_map(|(m, w, how, inspect, odd)| {
                let named = if inspect { "inspect" } else { "credentials" };
                let (key, grant) = match how {
                    0 => (named, format!("../{w}")),
                    1 => (named, format!("{w}{odd}{w}")),
                    2 => (named, String::new()),
                    3 => (named, format!("{odd}{w}")),
                    _ => ("fetch", "http://*".to_string()),
                };
                let bytes = edited(m, |v| {
                    let grants = v["adopt"].as_object_mut().unwrap().entry("grants").or_insert_with(|| json!({}));
                    let list = grants.as_object_mut().unwrap().entry(key).or_insert_with(|| json!([]));
                    list.as_array_mut().unwrap().push(json!(grant));
                });
                Case::invalid(
                    "manifest-grant-not-plain",
                    format!("{}: {key} grant {grant:?} added", manifest_path(m)),
                    match key {
                        "fetch" => DOC_FETCH_STAR,
                        "inspect" => DOC_INSPECT_PLAIN,
                        _ => DOC_GRANTED_CREDENTIAL,
                    },
                    &[&manifest_path(m), "grants too much"],
                )
                .file(manifest_path(m), Some(bytes))
            })
            .boxed(),
    );

    // INVALID: the manifest or the plugin a link to the same bytes outside `modules/`
    // (elsewhere in the catalogue, or the shipped catalogue's own file).
    arms.push(
        (module(), any::<bool>(), 0..3usize)
            .prop_map(|(m, plugin, how)| {
                let (file, bytes) = if plugin {
                    ("adopt.wasm", shipped().plugins[m].clone())
                } else {
                    ("manifest.json", shipped().manifests[m].clone())
                };
                let path = format!("modules/{m}/{file}");
                let copy = format!("elsewhere/{m}-{file}");
                let (target, files) = match how {
                    0 => (format!("../../{copy}"), vec![(copy.clone(), Some(bytes))]),
                    1 => (format!("{{dir}}/{copy}"), vec![(copy.clone(), Some(bytes))]),
                    _ => (root().join("catalogue").join(&path).display().to_string(), Vec::new()),
                };
                let mut case = Case::invalid(
                    "module-link-out",
                    format!("{path} made a link to {target}, outside `modules/`, holding the same bytes"),
                    DOC_LINK_OUT,
                    &[&path, "leads, through a link"],
                )
                .link(path, target);
                case.files = files;
                case
            })
            .boxed(),
    );
    // INVALID: a plugin that is not a WebAssembly component: junk, empty, a core module,
    // or the component cut short.
    arms.push(
        (module(), prop::collection::vec(any::<u8>(), 0..256), 0..4usize, any::<Index>())
            .prop_map(|(m, junk, how, at)| {
                let plugin = &shipped().plugins[m];
                let (what, bytes, mentions): (String, Vec<u8>, Vec<String>) = match how {
                    0 => (
                        format!("{} random bytes {junk:02x?}", junk.len()),
                        junk,
                        vec!["is not a WebAssembly component".into()],
                    ),
                    1 => ("empty".into(), Vec::new(), vec!["is not a WebAssembly component".into()]),
                    2 => (
                        "a core module's header".into(),
                        b"\0asm\x01\0\0\0".to_vec(),
                        vec!["is not a WebAssembly component".into()],
                    ),
                    _ => {
                        let cut = 8 + at.index(plugin.len() - 8);
                        (
                            format!("the component cut to {cut} of {} bytes", plugin.len()),
                            plugin[..cut].to_vec(),
                            Vec::new(),
                        )
                    }
                };
                let path = format!("modules/{m}/adopt.wasm");
                let mut mentions: Vec<&str> = mentions.iter().map(String::as_str).collect();
                mentions.push(&path);
                // Refused before any digest of it is shown: not even the start of one, whether it
                // does not begin as a component or is one cut short.
                let digest = sha256_hex(&bytes);
                let hidden = format!("!{}", &digest[..12]);
                mentions.push(&hidden);
                Case::invalid("plugin-not-component", format!("{path}: {what}"), DOC_NOT_COMPONENT, &mentions)
                    .file(path.clone(), Some(bytes))
            })
            .boxed(),
    );
    // VALID: the manifest or the plugin a link to a file beside it, inside `modules/`.
    arms.push(
        (module(), any::<bool>())
            .prop_map(|(m, plugin)| {
                let (file, bytes) = if plugin {
                    ("adopt.wasm", shipped().plugins[m].clone())
                } else {
                    ("manifest.json", shipped().manifests[m].clone())
                };
                let path = format!("modules/{m}/{file}");
                Case::valid(
                    "module-link-inside",
                    format!("{path} made a link to `real-{file}` beside it"),
                    DOC_LINK_INSIDE,
                )
                .file(format!("modules/{m}/real-{file}"), Some(bytes))
                .link(path, format!("real-{file}"))
            })
            .boxed(),
    );
    // VALID: laid out again (compact, tabs, other indents), with trailing whitespace.
    arms.push(
        (module(), 0..4usize, "[ \t\r\n]{0,4}")
            .prop_map(|(m, style, trailing)| {
                let (mut bytes, name) = reindented(&manifest(m), style);
                bytes.extend(trailing.as_bytes());
                Case::valid(
                    "manifest-reindented",
                    format!("{} laid out {name}, then {trailing:?}", manifest_path(m)),
                    DOC_MANIFEST_FIELDS,
                )
                .file(manifest_path(m), Some(bytes))
            })
            .boxed(),
    );
    // VALID: every object's keys in another order.
    arms.push(
        (module(), any::<u64>())
            .prop_map(|(m, salt)| {
                let mut value = manifest(m);
                reorder(&mut value, salt);
                let order: Vec<&String> = value.as_object().unwrap().keys().collect();
                let what = format!("{}: keys reordered (salt {salt}; top level {order:?})", manifest_path(m));
                Case::valid("manifest-keys-reordered", what, DOC_MANIFEST_FIELDS)
                    .file(manifest_path(m), Some(pretty(&value)))
            })
            .boxed(),
    );
    // INVALID: a resource of a type the contract does not know.
    arms.push(
        (module(), any::<Index>(), "[a-z][a-z-]{2,12}")
            .prop_filter("a type the contract does not know", |(_, _, kind)| {
                !["container", "file", "network", "service", "volume"].contains(&kind.as_str())
            })
            .prop_map(|(m, which, kind)| {
                let resources = manifest(m)["resources"].as_array().unwrap().len();
                let index = which.index(resources);
                Case::invalid(
                    "manifest-type-unknown",
                    format!("{}: resources[{index}] of type {kind:?}", manifest_path(m)),
                    DOC_KNOWN_KIND,
                    &[&manifest_path(m), &format!("`/resources/{index}/type`"), "which the contract does not know"],
                )
                .file(manifest_path(m), Some(edited(m, |v| v["resources"][index]["type"] = json!(kind))))
            })
            .boxed(),
    );
    // INVALID: no resource a container: each of another kind the contract knows.
    arms.push(
        (module(), prop::sample::select(vec!["file", "network", "service", "volume"]))
            .prop_map(|(m, kind)| {
                let bytes = edited(m, |v| {
                    for resource in v["resources"].as_array_mut().unwrap() {
                        resource["type"] = json!(kind);
                    }
                    v.as_object_mut().unwrap().remove("adopts");
                });
                Case::invalid(
                    "manifest-no-container",
                    format!("{}: every resource of type {kind:?}", manifest_path(m)),
                    DOC_NOTHING_TO_RAISE,
                    &[&manifest_path(m), "none of its resources is a container (`/resources` declares"],
                )
                .file(manifest_path(m), Some(bytes))
            })
            .boxed(),
    );
    // INVALID: a resource's id, type or name holding a control character or a path separator.
    arms.push(
        (
            module(),
            any::<Index>(),
            prop::sample::select(vec!["id", "type", "name"]),
            word(),
            word(),
            prop::sample::select(vec!["/", "\\", "\u{1b}", "\u{7}", "\u{7f}", "\u{85}"]),
        )
            .prop_map(|(m, which, field, a, b, odd)| {
                let resources = manifest(m)["resources"].as_array().unwrap().len();
                let index = which.index(resources);
                let word = format!("{a}{odd}{b}");
                let holds = if matches!(odd, "/" | "\\") { "a path separator" } else { "a control character" };
                Case::invalid(
                    "manifest-word-not-plain",
                    format!("{}: resources[{index}].{field} set to {word:?}", manifest_path(m)),
                    DOC_PLAIN_WORDS,
                    &[&manifest_path(m), &format!("`/resources/{index}/{field}`"), &format!("holds {holds}")],
                )
                .file(manifest_path(m), Some(edited(m, |v| v["resources"][index][field] = json!(word))))
            })
            .boxed(),
    );
    // INVALID: a number beyond ±2^53, in a container's spec or a field the host does not read.
    arms.push(
        (module(), any::<bool>(), (1u64 << 53) + 1..=u64::MAX, any::<bool>())
            .prop_map(|(m, read, number, negative)| {
                let number = if negative { format!("-{number}") } else { number.to_string() };
                let index = containers(m)[0];
                let (pointer, bytes) = if read {
                    let bytes = edited(m, |v| v["resources"][index]["user"] = json!("@number@"));
                    (format!("/resources/{index}/user"), bytes)
                } else {
                    ("/x-limit".to_string(), edited(m, |v| v["x-limit"] = json!("@number@")))
                };
                let bytes = String::from_utf8(bytes).unwrap().replace("\"@number@\"", &number).into_bytes();
                Case::invalid(
                    "manifest-number-beyond",
                    format!("{}: {number} at {pointer}", manifest_path(m)),
                    DOC_NUMBER_RULE,
                    &[&manifest_path(m), &format!("the number `{number}` at `{pointer}` is beyond ±2^53")],
                )
                .file(manifest_path(m), Some(bytes))
            })
            .boxed(),
    );
    // VALID: a field the host does not read changed or added.
    arms.push(
        (module(), any::<bool>(), word(), "\\PC{0,40}")
            .prop_map(|(m, version, w, text)| {
                let (what, bytes) = if version {
                    (format!("`version` set to {text:?}"), edited(m, |v| v["version"] = json!(text)))
                } else {
                    (format!("field `x-{w}`: {text:?} added"), edited(m, |v| v[format!("x-{w}")] = json!(text)))
                };
                Case::valid("manifest-unread-field", format!("{}: {what}", manifest_path(m)), DOC_MANIFEST_FIELDS)
                    .file(manifest_path(m), Some(bytes))
            })
            .boxed(),
    );
    // VALID: `adopt.plugin`, `adopt.world` or `adopt.source` left out (their defaults), or
    // `source` pointing elsewhere.
    arms.push(
        (module(), 0..4usize, "[a-z./-]{1,30}")
            .prop_map(|(m, how, source)| {
                let (what, edit): (String, AdoptEdit) = match how {
                    0 => ("`adopt.plugin` removed (default adopt.wasm)".into(), Box::new(|a| drop(a.remove("plugin")))),
                    1 => ("`adopt.world` removed".into(), Box::new(|a| drop(a.remove("world")))),
                    2 => ("`adopt.source` removed".into(), Box::new(|a| drop(a.remove("source")))),
                    _ => (
                        format!("`adopt.source` set to {source:?}"),
                        Box::new(move |a| drop(a.insert("source".into(), json!(source)))),
                    ),
                };
                Case::valid("manifest-adopt-defaults", format!("{}: {what}", manifest_path(m)), DOC_MANIFEST_DEFAULTS)
                    .file(manifest_path(m), Some(edited(m, |v| edit(v["adopt"].as_object_mut().unwrap()))))
            })
            .boxed(),
    );
    // VALID: the plugin's own digest pinned, in any case.
    arms.push(
        (module(), prop::collection::vec(any::<bool>(), 64))
            .prop_map(|(m, upper)| {
                let pin: String = sha256_hex(&shipped().plugins[m])
                    .chars()
                    .zip(upper)
                    .map(|(c, up)| if up { c.to_ascii_uppercase() } else { c })
                    .collect();
                Case::valid("manifest-pin-own", format!("{}: `adopt.sha256` set to {pin}", manifest_path(m)), DOC_PIN)
                    .file(manifest_path(m), Some(edited(m, |v| v["adopt"]["sha256"] = json!(pin))))
            })
            .boxed(),
    );
    arms
}

// ---------------------------------------------------------------------------------------
// Foundation bundle mutations.

fn foundation_mutations() -> Vec<BoxedStrategy<Case>> {
    const PATH: &str = "foundation.json";
    const MENTION: &str = "foundation.json` is malformed";
    vec![
        // INVALID: cut short before its closing brace.
        any::<Index>()
            .prop_map(|at| {
                let bytes = &shipped().foundation;
                let end = bytes.iter().rposition(|b| *b == b'}').unwrap();
                let cut = at.index(end);
                Case::invalid(
                    "foundation-truncated",
                    format!("{PATH} cut to its first {cut} of {} bytes", bytes.len()),
                    DOC_EXIT_2,
                    &[MENTION],
                )
                .file(PATH, Some(bytes[..cut].to_vec()))
            })
            .boxed(),
        // INVALID: not UTF-8, so not JSON, inside a string the host reads.
        (any::<Index>(), prop::sample::select(NOT_UTF8.to_vec()))
            .prop_map(|(at, junk)| {
                let mut bytes = shipped().foundation.clone();
                let text = String::from_utf8(bytes.clone()).unwrap();
                let places: Vec<usize> = ["\"id\": \"", "\"kind\": \"", "\"name\": \"", "\"image\": \""]
                    .iter()
                    .flat_map(|key| text.match_indices(key).map(|(i, k)| i + k.len()))
                    .collect();
                let after = places[at.index(places.len())];
                bytes.splice(after..after, junk.iter().copied());
                Case::invalid(
                    "foundation-not-utf8",
                    format!("{PATH} with bytes {junk:02x?} (not UTF-8, so not JSON) spliced in at offset {after}"),
                    DOC_EXIT_2,
                    &[MENTION],
                )
                .file(PATH, Some(bytes))
            })
            .boxed(),
        // INVALID: replaced by random bytes.
        prop::collection::vec(any::<u8>(), 0..64)
            .prop_map(|junk| {
                Case::invalid(
                    "foundation-junk",
                    format!("{PATH} replaced by {} random bytes {junk:02x?}", junk.len()),
                    DOC_EXIT_2,
                    &[MENTION],
                )
                .file(PATH, Some(junk))
            })
            .boxed(),
        // INVALID: a resource of kind `Container` or `File`.
        (any::<Index>(), prop::collection::vec(any::<bool>(), 9))
            .prop_map(|(which, upper)| {
                let mut value = foundation();
                let resources = value["resources"].as_array_mut().unwrap();
                let typed: Vec<usize> = resources
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| r["kind"] == "container" || r["kind"] == "file")
                    .map(|(i, _)| i)
                    .collect();
                let index = typed[which.index(typed.len())];
                let kind = resources[index]["kind"].as_str().unwrap().to_string();
                let mut odd: String =
                    kind.chars().zip(&upper).map(|(c, up)| if *up { c.to_ascii_uppercase() } else { c }).collect();
                if odd == kind {
                    odd = kind[..1].to_ascii_uppercase() + &kind[1..];
                }
                resources[index]["kind"] = json!(odd);
                Case::invalid(
                    "foundation-kind-case",
                    format!("{PATH}: resources[{index}] of kind {odd:?}"),
                    DOC_FOUNDATION_KIND,
                    &["foundation.json", "kinds are lower case"],
                )
                .file(PATH, Some(pretty(&value)))
            })
            .boxed(),
        // VALID: laid out again.
        (0..4usize, "[ \t\r\n]{0,4}")
            .prop_map(|(style, trailing)| {
                let (mut bytes, name) = reindented(&foundation(), style);
                bytes.extend(trailing.as_bytes());
                Case::valid(
                    "foundation-reindented",
                    format!("{PATH} laid out {name}, then {trailing:?}"),
                    DOC_FOUNDATION,
                )
                .file(PATH, Some(bytes))
            })
            .boxed(),
        // VALID: every object's keys in another order.
        any::<u64>()
            .prop_map(|salt| {
                let mut value = foundation();
                reorder(&mut value, salt);
                let first: Vec<&String> = value["resources"][0].as_object().unwrap().keys().collect();
                Case::valid(
                    "foundation-keys-reordered",
                    format!("{PATH}: keys reordered (salt {salt}; resources[0] {first:?})"),
                    DOC_FOUNDATION,
                )
                .file(PATH, Some(pretty(&value)))
            })
            .boxed(),
        // VALID: another resource genesis raised, of another kind the contract knows or a file, no
        // module's.
        (word(), prop::sample::select(vec!["network", "service", "volume"]), any::<bool>(), any::<Index>())
            .prop_map(|(w, kind, file, at)| {
                let mut value = foundation();
                let resource = if file {
                    json!({"id": format!("x-{w}"), "kind": "file", "path": format!("/etc/mesh/x-{w}.conf")})
                } else {
                    json!({"id": format!("x-{w}"), "kind": kind})
                };
                let resources = value["resources"].as_array_mut().unwrap();
                let index = at.index(resources.len() + 1);
                resources.insert(index, resource.clone());
                Case::valid(
                    "foundation-other-resource",
                    format!("{PATH}: resource {resource} inserted at {index}"),
                    DOC_FOUNDATION,
                )
                .file(PATH, Some(pretty(&value)))
            })
            .boxed(),
        // INVALID: a resource of a kind the contract does not know.
        (any::<Index>(), "[a-z][a-z-]{2,12}")
            .prop_filter("a kind the contract does not know", |(_, kind)| {
                !["container", "file", "network", "service", "volume"].contains(&kind.as_str())
            })
            .prop_map(|(which, kind)| {
                let mut value = foundation();
                let resources = value["resources"].as_array_mut().unwrap();
                let index = which.index(resources.len());
                resources[index]["kind"] = json!(kind);
                Case::invalid(
                    "foundation-kind-unknown",
                    format!("{PATH}: resources[{index}] of kind {kind:?}"),
                    DOC_KNOWN_KIND,
                    &["foundation.json", &format!("`/resources/{index}/kind`"), "which the contract does not know"],
                )
                .file(PATH, Some(pretty(&value)))
            })
            .boxed(),
        // INVALID: a resource's id, kind or name holding a control character or a path separator.
        (
            any::<Index>(),
            prop::sample::select(vec!["id", "kind", "name"]),
            word(),
            prop::sample::select(vec!["/", "\\", "\u{1b}", "\u{0}"]),
        )
            .prop_map(|(which, field, w, odd)| {
                let mut value = foundation();
                let resources = value["resources"].as_array_mut().unwrap();
                let index = which.index(resources.len());
                let word = format!("{w}{odd}");
                resources[index][field] = json!(word);
                let holds = if matches!(odd, "/" | "\\") { "a path separator" } else { "a control character" };
                Case::invalid(
                    "foundation-word-not-plain",
                    format!("{PATH}: resources[{index}].{field} set to {word:?}"),
                    DOC_PLAIN_WORDS,
                    &["foundation.json", &format!("`/resources/{index}/{field}`"), &format!("holds {holds}")],
                )
                .file(PATH, Some(pretty(&value)))
            })
            .boxed(),
        // INVALID: a number beyond ±2^53 in a container's spec, written as an integer or not.
        (
            any::<Index>(),
            prop::sample::select(vec![
                "9007199254740993",
                "9007199254740993.0",
                "1e16",
                "-1E300",
                "18446744073709551616",
            ]),
        )
            .prop_map(|(which, number)| {
                let value = foundation();
                let containers: Vec<usize> = value["resources"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| r["kind"] == "container")
                    .map(|(i, _)| i)
                    .collect();
                let index = containers[which.index(containers.len())];
                let mut value = value;
                value["resources"][index]["memory"] = json!("@number@");
                let bytes = String::from_utf8(pretty(&value)).unwrap().replace("\"@number@\"", number);
                Case::invalid(
                    "foundation-number-beyond",
                    format!("{PATH}: {number} at /resources/{index}/memory"),
                    DOC_NUMBER_RULE,
                    &["foundation.json", &format!("the number `{number}` at `/resources/{index}/memory` is beyond")],
                )
                .file(PATH, Some(bytes.into_bytes()))
            })
            .boxed(),
    ]
}

// ---------------------------------------------------------------------------------------
// Credential mutations.

/// A credential value no output could hold by chance: 16 or more characters, the first not
/// blank.
fn secret_text() -> impl Strategy<Value = String> {
    "[!-~][ -~]{15,80}"
}

fn credential_mutations() -> Vec<BoxedStrategy<Case>> {
    let path = || CREDENTIAL.to_string();
    vec![
        // INVALID: empty, or only whitespace.
        "[ \t\r\n]{0,40}"
            .prop_map(move |blank| {
                Case::invalid(
                    "credential-blank",
                    format!("{CREDENTIAL} holds {blank:?}"),
                    if blank.is_empty() { DOC_GRANTED_CREDENTIAL } else { DOC_CREDENTIAL_WHITESPACE },
                    &[CREDENTIAL, "is empty or only whitespace"],
                )
                .file(path(), Some(blank.into_bytes()))
            })
            .boxed(),
        // INVALID: more than 64 KiB.
        (65537..70000usize, any::<u8>())
            .prop_map(move |(len, fill)| {
                let byte = b'!' + fill % 90;
                Case::invalid(
                    "credential-too-large",
                    format!("{CREDENTIAL} holds {len} bytes of {:?}", byte as char),
                    DOC_GRANTED_CREDENTIAL,
                    &[CREDENTIAL, "larger than the 65536 bytes allowed"],
                )
                .file(path(), Some(vec![byte; len]))
            })
            .boxed(),
        // INVALID: not there.
        Just(())
            .prop_map(move |()| {
                Case::invalid(
                    "credential-missing",
                    format!("{CREDENTIAL} removed"),
                    DOC_GRANTED_CREDENTIAL,
                    &["genesis/credentials", "no credential `store-superuser`"],
                )
                .file(path(), None)
            })
            .boxed(),
        // VALID: the shipped value without its trailing newline, or with one more line end.
        prop::sample::select(vec!["", "\n", "\r\n"])
            .prop_map(move |end| {
                let value = shipped().credential.strip_suffix(b"\n").unwrap_or(&shipped().credential).to_vec();
                let bytes = [value.as_slice(), end.as_bytes()].concat();
                Case::valid(
                    "credential-line-end",
                    format!("{CREDENTIAL}: the shipped value ending {end:?}"),
                    DOC_CREDENTIAL_OK,
                )
                .file(path(), Some(bytes))
            })
            .boxed(),
        // VALID: another value, text or not UTF-8, with or without a trailing newline.
        (secret_text(), prop::collection::vec(any::<u8>(), 8..64), any::<bool>(), any::<bool>())
            .prop_map(move |(text, bytes, binary, newline)| {
                let mut value = if binary { [&[0xffu8][..], &bytes].concat() } else { text.into_bytes() };
                if newline {
                    value.push(b'\n');
                }
                let what = format!("{CREDENTIAL} holds {:?}", String::from_utf8_lossy(&value));
                Case::valid("credential-other-value", what, DOC_CREDENTIAL_OK).file(path(), Some(value))
            })
            .boxed(),
        // VALID: exactly 64 KiB.
        (any::<u8>(), any::<bool>())
            .prop_map(move |(fill, newline)| {
                let mut value = vec![b'!' + fill % 90; 65536];
                if newline {
                    value[65535] = b'\n';
                }
                let what = format!(
                    "{CREDENTIAL} holds 65536 bytes of {:?}{}",
                    (b'!' + fill % 90) as char,
                    if newline { " ending in a newline" } else { "" }
                );
                Case::valid("credential-64-kib", what, DOC_CREDENTIAL_OK).file(path(), Some(value))
            })
            .boxed(),
        // VALID: another credential genesis left, granted to nobody (empty, short, or long).
        (word(), prop_oneof!["[ -~]{0,5}", secret_text()])
            .prop_filter("another credential", |(name, _)| name != "store-superuser")
            .prop_map(|(name, value)| {
                Case::valid(
                    "credential-ungranted",
                    format!("genesis/credentials/{name} added, holding {value:?}"),
                    DOC_SCRUBBED,
                )
                .file(format!("genesis/credentials/{name}"), Some(value.into_bytes()))
            })
            .boxed(),
    ]
}

// ---------------------------------------------------------------------------------------
// Command-line mutations.

/// A word with something a command could misread put in it.
fn misread_word() -> impl Strategy<Value = (String, &'static str)> {
    (word(), word(), 0..5usize, prop::sample::select(vec![" ", "\t", "\n", "\u{a0}", "\u{1b}", "\u{7}"])).prop_map(
        |(a, b, how, odd)| match how {
            0 => (String::new(), "empty"),
            1 => (format!("-{a}"), "a leading `-`"),
            2 => (format!("{a}..{b}"), "`..`"),
            3 => (format!("{a}{odd}{b}"), "whitespace or a control character"),
            _ => (format!("{a} {b}"), "a space"),
        },
    )
}

/// A node name as the mesh names a node: one to three RFC 1123 labels.
fn node_name() -> impl Strategy<Value = String> {
    prop::collection::vec("[a-z0-9]([a-z0-9-]{0,12}[a-z0-9])?", 1..=3).prop_map(|labels| labels.join("."))
}

fn option_mutations() -> Vec<BoxedStrategy<Case>> {
    vec![
        // INVALID: a module the catalogue does not hold, alone or among phase three.
        (word(), any::<Index>(), any::<bool>())
            .prop_filter("not a module of the catalogue", |(w, _, _)| !MODULES.contains(&w.as_str()))
            .prop_map(|(w, at, alone)| {
                let mut modules: Vec<String> =
                    if alone { Vec::new() } else { MODULES.iter().map(|m| m.to_string()).collect() };
                modules.insert(at.index(modules.len() + 1), w.clone());
                let mut case = Case::invalid(
                    "option-unknown-module",
                    format!("modules {modules:?}: `{w}` is not in the catalogue"),
                    DOC_UNKNOWN_MODULE,
                    &[&format!("has no module `{w}`")],
                );
                case.modules = modules;
                case
            })
            .boxed(),
        // INVALID: a module name over 253 bytes, or one a command could misread.
        (254..320usize, misread_word(), any::<bool>())
            .prop_filter("not a flag clap takes", |(_, (w, _), _)| !w.starts_with('-'))
            .prop_map(|(len, (odd, why), long)| {
                let (name, doc, mention) = if long {
                    ("m".repeat(len), DOC_NAME_BYTES, "at most 253 bytes".to_string())
                } else {
                    (odd, DOC_CHECKED_WORD, "cannot be used".to_string())
                };
                let what =
                    if long { format!("a module named with {len} bytes") } else { format!("module {name:?} ({why})") };
                let mut case = Case::invalid("option-module-name", what, doc, &["the module", &mention]);
                case.modules = vec![name];
                case
            })
            .boxed(),
        // INVALID: `--node` over 253 bytes, or a word a command could misread.
        (254..400usize, misread_word(), any::<bool>())
            .prop_map(|(len, (odd, why), long)| {
                let (node, doc, what) = if long {
                    ("n".repeat(len), DOC_NAME_BYTES, format!("--node of {len} bytes"))
                } else {
                    (odd.clone(), DOC_CHECKED_WORD, format!("--node {odd:?} ({why})"))
                };
                Case::invalid("option-node", what, doc, &["--node"]).option("--node", &node)
            })
            .boxed(),
        // INVALID: `--node` no RFC 1123 subdomain, though a word a command reads as one.
        (node_name(), 0..6usize)
            .prop_map(|(node, how)| {
                let (odd, why) = match how {
                    0 => (node.to_uppercase(), "uppercase"),
                    1 => (format!("{node}_x"), "an underscore"),
                    2 => (format!("{node};rm"), "a `;`"),
                    3 => (format!("{node}-"), "a label ending in `-`"),
                    4 => (format!("{node}.{}", "l".repeat(64)), "a label of 64 characters"),
                    _ => (format!("nö{node}"), "a letter beyond ASCII"),
                };
                Case::invalid(
                    "option-node-name",
                    format!("--node {odd:?} ({why})"),
                    DOC_NODE_NAME,
                    &["--node", "RFC 1123"],
                )
                .option("--node", &odd)
            })
            .boxed(),
        // INVALID: `--catalog-source` a builder could misread: whitespace or a control
        // character in the repository, a leading `-`, `..`, an empty repository, or a ref
        // that is one of those.
        (word(), word(), misread_word(), prop::sample::select(vec![" ", "\t", "\n", "\u{a0}", "\u{1b}"]), 0..5usize)
            .prop_map(|(a, b, (odd, why), space, how)| {
                let (source, why) = match how {
                    0 => (format!("https://git.{a}.test/{a}{space}{b}.git"), "whitespace or a control character"),
                    1 => (format!("-{a}"), "a leading `-`"),
                    2 => (format!("https://git.{a}.test/c.git@{odd}"), why),
                    3 => (format!("https://git.{a}.test/{b}/../c.git"), "`..`"),
                    _ => (format!("@{b}"), "an empty repository"),
                };
                let mut case = Case::invalid(
                    "option-catalog-source",
                    format!("--catalog-source {source:?} ({}{why})", if how == 2 { "its ref holds " } else { "" }),
                    DOC_CHECKED_WORD,
                    &["--catalog-source"],
                );
                case.source = source;
                case
            })
            .boxed(),
        // INVALID: `--wait` of zero, a fraction, garbage, over 12h, or too long for the
        // default wall time.
        (0..6usize, 0..4usize, 1..100_000u64, "[a-z]{1,6}", 2100..=43_200u64, 43_201..=10_000_000u64)
            .prop_filter("a fraction of a second", |(how, _, ms, ..)| *how != 1 || ms % 1000 != 0)
            .prop_map(|(how, style, ms, garbage, long, too_long)| {
                let (wait, doc, mention) = match how {
                    0 => (duration_text(0, style), DOC_WAIT, "--wait"),
                    1 => (format!("{ms}ms"), DOC_WAIT, "--wait"),
                    2 => (garbage, DOC_WAIT, "--wait"),
                    3 => (format!("{}x", ms), DOC_WAIT, "--wait"),
                    4 => (duration_text(too_long, style), DOC_WAIT, "--wait"),
                    _ => (duration_text(long, style), DOC_WALL_TIME, "--plugin-wall-time"),
                };
                Case::invalid("option-wait", format!("--wait {wait:?}"), doc, &[mention]).option("--wait", &wait)
            })
            .boxed(),
        // INVALID: `--plugin-memory` outside 16..=4096 MiB, or not a number.
        (0..4usize, 0..16u64, 4097..10_000_000u64, "[a-z]{1,5}")
            .prop_map(|(how, low, high, garbage)| {
                let memory = match how {
                    0 => low.to_string(),
                    1 => high.to_string(),
                    2 => format!("{}MiB", 16 + low),
                    _ => garbage,
                };
                Case::invalid(
                    "option-plugin-memory",
                    format!("--plugin-memory {memory:?}"),
                    DOC_MEMORY,
                    &["--plugin-memory"],
                )
                .option("--plugin-memory", &memory)
            })
            .boxed(),
        // INVALID: `--plugin-time` outside 1s..=1h, or garbage.
        (0..4usize, 0..4usize, 1..1000u64, 3601..1_000_000u64, "[a-z]{1,5}")
            .prop_map(|(how, style, ms, secs, garbage)| {
                let time = match how {
                    0 => duration_text(0, style),
                    1 => format!("{ms}ms"),
                    2 => duration_text(secs, style),
                    _ => garbage,
                };
                Case::invalid(
                    "option-plugin-time",
                    format!("--plugin-time {time:?}"),
                    DOC_PLUGIN_TIME,
                    &["--plugin-time"],
                )
                .option("--plugin-time", &time)
            })
            .boxed(),
        // INVALID: `--plugin-wall-time` outside 1s..=24h, garbage, or not above the build's
        // 1500s plus the default 120s wait.
        (0..4usize, 0..4usize, 1..=1620u64, 86_401..10_000_000u64, "[a-z]{1,5}")
            .prop_map(|(how, style, short, long, garbage)| {
                let time = match how {
                    0 => duration_text(0, style),
                    1 => duration_text(short, style),
                    2 => duration_text(long, style),
                    _ => garbage,
                };
                Case::invalid(
                    "option-plugin-wall-time",
                    format!("--plugin-wall-time {time:?}"),
                    DOC_WALL_TIME,
                    &["--plugin-wall-time"],
                )
                .option("--plugin-wall-time", &time)
            })
            .boxed(),
        // INVALID: an option there is none of.
        word()
            .prop_map(|w| {
                let mut case = Case::invalid(
                    "option-unknown-flag",
                    format!("unknown flag --zz-{w}"),
                    DOC_UNKNOWN_FLAG,
                    &[&format!("--zz-{w}")],
                );
                case.options.push(format!("--zz-{w}"));
                case
            })
            .boxed(),
        // INVALID: `--record` to a directory, a FIFO nobody reads, or a device.
        (0..4usize, word())
            .prop_map(|(how, w)| {
                let mut case = match how {
                    0 => {
                        let mut case = Case::invalid(
                            "option-record-not-regular",
                            format!("--record to the directory {w}.d"),
                            DOC_NOT_REGULAR,
                            &["is a directory"],
                        );
                        case.dirs.push(format!("{w}.d"));
                        case.record = Some(format!("{{dir}}/{w}.d"));
                        case
                    }
                    1 => {
                        let mut case = Case::invalid(
                            "option-record-not-regular",
                            format!("--record to the FIFO {w}.fifo, which nobody reads"),
                            DOC_NOT_REGULAR,
                            &["is a FIFO"],
                        );
                        case.fifos.push(format!("{w}.fifo"));
                        case.record = Some(format!("{{dir}}/{w}.fifo"));
                        case
                    }
                    n => {
                        let device = if n == 2 { "/dev/null" } else { "/dev/full" };
                        let mut case = Case::invalid(
                            "option-record-not-regular",
                            format!("--record to {device}"),
                            DOC_NOT_REGULAR,
                            &["is a device"],
                        );
                        case.record = Some(device.to_string());
                        case
                    }
                };
                case.expect = match case.expect {
                    Expect::Invalid(mut fragments) => {
                        fragments.push("a recording is written only to a regular file".into());
                        Expect::Invalid(fragments)
                    }
                    valid => valid,
                };
                case
            })
            .boxed(),
        // INVALID: `--foundation` or `--credentials` naming nothing there.
        (word(), any::<bool>())
            .prop_map(|(w, bundle)| {
                if bundle {
                    Case::invalid(
                        "option-site-missing",
                        format!("--foundation {{dir}}/x-{w}.json, not there"),
                        DOC_SITE,
                        &[&format!("x-{w}.json"), "foundation bundle"],
                    )
                    .option("--foundation", &format!("{{dir}}/x-{w}.json"))
                } else {
                    Case::invalid(
                        "option-site-missing",
                        format!("--credentials {{dir}}/x-{w}, not there"),
                        DOC_SITE,
                        &[&format!("x-{w}"), "credentials directory"],
                    )
                    .option("--credentials", &format!("{{dir}}/x-{w}"))
                }
            })
            .boxed(),
        // INVALID: `--plan` naming a file that is no saved plan.
        (prop::collection::vec(any::<u8>(), 0..128), word())
            .prop_map(|(junk, w)| {
                Case::invalid(
                    "option-plan-junk",
                    format!("--plan {w}.json holding {} random bytes {junk:02x?}", junk.len()),
                    DOC_PLAN_FILE,
                    &[&format!("{w}.json"), "plan"],
                )
                .file(format!("{w}.json"), Some(junk))
                .option("--plan", &format!("{{dir}}/{w}.json"))
            })
            .boxed(),
        // VALID: the foundation bundle or the credentials moved out of the catalogue, and
        // `--foundation` or `--credentials` naming where.
        (word(), any::<bool>())
            .prop_map(|(w, bundle)| {
                if bundle {
                    Case::valid(
                        "option-site-moved",
                        format!("foundation.json moved to {w}/bundle.json, given as --foundation"),
                        DOC_SITE,
                    )
                    .file(format!("{w}/bundle.json"), Some(shipped().foundation.clone()))
                    .file("foundation.json", None)
                    .option("--foundation", &format!("{{dir}}/{w}/bundle.json"))
                } else {
                    Case::valid(
                        "option-site-moved",
                        format!("genesis/credentials moved to {w}/, given as --credentials"),
                        DOC_SITE,
                    )
                    .file(format!("{w}/store-superuser"), Some(shipped().credential.clone()))
                    .file(CREDENTIAL, None)
                    .option("--credentials", &format!("{{dir}}/{w}"))
                }
            })
            .boxed(),
        // VALID: another node, an RFC 1123 subdomain of at most 253 bytes.
        (prop_oneof![node_name(), Just(["a".repeat(63), "b".repeat(63), "c".repeat(63), "d".repeat(61)].join("."))])
            .prop_map(|node| {
                Case::valid("option-node-ok", format!("--node {node:?}"), DOC_NODE_NAME).option("--node", &node)
            })
            .boxed(),
        // VALID: another catalogue source, with or without a ref.
        (word(), word(), proptest::option::of("[A-Za-z0-9_][A-Za-z0-9_.-]{0,20}"), any::<bool>())
            .prop_filter("no `..`", |(_, _, reference, _)| !reference.as_deref().unwrap_or("").contains(".."))
            .prop_map(|(a, b, reference, ssh)| {
                let repository = if ssh {
                    format!("git@git.{a}.test:{b}/catalogue.git")
                } else {
                    format!("https://git.{a}.test/{b}.git")
                };
                let source = match reference {
                    Some(reference) => format!("{repository}@{reference}"),
                    None => repository,
                };
                let mut case =
                    Case::valid("option-catalog-source-ok", format!("--catalog-source {source:?}"), DOC_OPTIONS_OK);
                case.source = source;
                case
            })
            .boxed(),
        // VALID: a wait the simulated node settles within, below the wall time's limit.
        (60..=2099u64, 0..4usize)
            .prop_map(|(secs, style)| {
                let wait = duration_text(secs, style);
                Case::valid("option-wait-ok", format!("--wait {wait:?}"), DOC_SIMULATED_WAIT).option("--wait", &wait)
            })
            .boxed(),
        // VALID: memory within 16..=4096 MiB (the bounds themselves often).
        prop_oneof![Just(16u64), Just(4096u64), 16..=4096u64]
            .prop_map(|mib| {
                Case::valid("option-plugin-memory-ok", format!("--plugin-memory {mib}"), DOC_OPTIONS_OK)
                    .option("--plugin-memory", &mib.to_string())
            })
            .boxed(),
        // VALID: compute time within 1s..=1h.
        (prop_oneof![Just(1u64), Just(3600u64), 1..=3600u64], 0..5usize)
            .prop_map(|(secs, style)| {
                let time = if style == 4 { format!("{}ms", secs * 1000) } else { duration_text(secs, style) };
                Case::valid("option-plugin-time-ok", format!("--plugin-time {time:?}"), DOC_OPTIONS_OK)
                    .option("--plugin-time", &time)
            })
            .boxed(),
        // VALID: wall time above the build's 1500s plus the default 120s wait, up to 24h.
        (prop_oneof![Just(1621u64), Just(86_400u64), 1621..=86_400u64], 0..4usize)
            .prop_map(|(secs, style)| {
                let time = duration_text(secs, style);
                Case::valid("option-plugin-wall-time-ok", format!("--plugin-wall-time {time:?}"), DOC_WALL_TIME)
                    .option("--plugin-wall-time", &time)
            })
            .boxed(),
        // VALID: some of phase three's modules named, in its order.
        prop::collection::vec(any::<bool>(), 3)
            .prop_filter("at least one module", |picked| picked.iter().any(|p| *p))
            .prop_map(|picked| {
                let modules: Vec<String> =
                    MODULES.iter().zip(&picked).filter(|(_, p)| **p).map(|(m, _)| m.to_string()).collect();
                let mut case = Case::valid("option-modules-ok", format!("modules {modules:?}"), DOC_MODULES);
                case.modules = modules;
                case
            })
            .boxed(),
        // VALID: `-v`, `--json`, or both.
        (any::<bool>(), any::<bool>())
            .prop_map(|(verbose, json)| {
                let flags: Vec<String> = [(verbose || !json, "-v"), (json, "--json")]
                    .iter()
                    .filter(|(on, _)| *on)
                    .map(|(_, f)| f.to_string())
                    .collect();
                let mut case = Case::valid("option-shown-ok", format!("flags {flags:?}"), DOC_SHOWN);
                case.options = flags;
                case
            })
            .boxed(),
    ]
}

// ---------------------------------------------------------------------------------------
// The oracle.

/// What one run of the binary did.
struct Ran {
    command: String,
    status: Option<i32>,
    stdout: String,
    stderr: String,
    record: Option<String>,
    took: Duration,
}

/// A temporary directory for the cases, beside the shared compile cache.
fn scratch() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-fuzz");
        std::fs::create_dir_all(&dir).unwrap();
        dir
    })
}

/// Writes the shipped catalogue to `dir`, then the case's files.
fn write_catalogue(dir: &Path, case: &Case) {
    let shipped = shipped();
    std::fs::write(dir.join("foundation.json"), &shipped.foundation).unwrap();
    std::fs::create_dir_all(dir.join("genesis/credentials")).unwrap();
    std::fs::write(dir.join(CREDENTIAL), &shipped.credential).unwrap();
    for module in MODULES {
        let at = dir.join("modules").join(module);
        std::fs::create_dir_all(&at).unwrap();
        std::fs::write(at.join("manifest.json"), &shipped.manifests[module]).unwrap();
        std::fs::write(at.join("adopt.wasm"), &shipped.plugins[module]).unwrap();
    }
    let at = |path: &str| {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        path
    };
    for (path, bytes) in &case.files {
        match bytes {
            Some(bytes) => std::fs::write(at(path), bytes).unwrap(),
            None => std::fs::remove_file(at(path)).unwrap(),
        }
    }
    for (path, target) in &case.links {
        let _ = std::fs::remove_file(at(path));
        std::os::unix::fs::symlink(in_dir(target, dir), at(path)).unwrap();
    }
    for path in &case.fifos {
        let made = Command::new("mkfifo").arg(at(path)).status().unwrap();
        assert!(made.success(), "mkfifo {path}");
    }
    for path in &case.dirs {
        std::fs::create_dir_all(at(path)).unwrap();
    }
}

/// `text` with `{dir}` standing for `dir`.
fn in_dir(text: &str, dir: &Path) -> String {
    text.replace("{dir}", &dir.display().to_string())
}

/// Runs the binary on the case's catalogue copy, killing it after [`TIMEOUT`].
fn run(dir: &Path, case: &Case) -> Result<Ran, String> {
    let record = dir.join("r.jsonl");
    let record_at = case.record.as_deref().map_or_else(|| record.display().to_string(), |r| in_dir(r, dir));
    let mut args: Vec<String> = vec!["run".into()];
    args.extend(case.modules.iter().cloned());
    args.extend(["--catalogue".into(), dir.display().to_string()]);
    if case.source == SOURCE {
        args.extend(["--catalog-source".into(), SOURCE.into()]);
    } else {
        args.push(format!("--catalog-source={}", case.source));
    }
    args.extend(["--record".into(), record_at]);
    args.extend(case.options.iter().map(|o| in_dir(o, dir)));
    let cli = mesh_adopt().args(&args).env("XDG_CACHE_HOME", shared_compile_cache()).timeout(TIMEOUT);
    let command = cli.shown();
    let started = Instant::now();
    let out = cli.try_output()?;
    let took = started.elapsed();
    Ok(Ran {
        command,
        status: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        record: std::fs::read(&record).ok().map(|b| String::from_utf8_lossy(&b).into_owned()),
        took,
    })
}

/// Applies the oracle to one case; the error says the mutation, the command and what came out.
fn check(case: &Case) -> Result<(), String> {
    let dir = tempfile::tempdir_in(scratch()).unwrap();
    write_catalogue(dir.path(), case);
    let ran = run(dir.path(), case).map_err(|e| format!("{case:?}\nrests on: {}\n{e}", case.doc))?;
    if std::env::var_os("CLI_FUZZ_SHOW").is_some() {
        let first = ran.stderr.lines().chain(ran.stdout.lines().filter(|l| l.contains("unusable"))).next();
        eprintln!("case {case:?} => exit {:?} | {}", ran.status, cut(first.unwrap_or(""), 300));
    }
    let mut problems: Vec<String> = Vec::new();
    let output = format!("{}\n{}", ran.stdout, ran.stderr);
    if output.contains("panicked at") {
        problems.push("PANIC: the output holds `panicked at`".into());
    }
    let lines: Vec<&str> = ran.record.as_deref().unwrap_or("").lines().collect();
    let mut events: Vec<Value> = Vec::new();
    for (number, line) in lines.iter().enumerate() {
        match serde_json::from_str::<Value>(line) {
            Ok(event) => events.push(event),
            Err(e) => problems.push(format!("record line {} is not JSON ({e}): {}", number + 1, cut(line, 300))),
        }
    }
    match &case.expect {
        Expect::Invalid(fragments) => {
            if ran.status != Some(2) {
                problems.push(format!("expected exit 2 (refused), got {:?}", ran.status));
            }
            let reached: Vec<String> = events
                .iter()
                .filter(|e| e["event"] == "call" && (e["op"] == "carry" || e["op"] == "tell"))
                .map(|e| e.to_string())
                .collect();
            if !reached.is_empty() {
                problems.push(format!(
                    "the record holds {} carry/tell calls (something reached the mesh), first: {}",
                    reached.len(),
                    reached[0]
                ));
            }
            for fragment in fragments {
                match fragment.strip_prefix('!') {
                    Some(hidden) if output.contains(hidden) => {
                        problems.push(format!("the output shows {hidden:?}, which it must not"))
                    }
                    Some(_) => {}
                    None if !output.contains(fragment.as_str()) => {
                        problems.push(format!("the output does not mention {fragment:?}"))
                    }
                    None => {}
                }
            }
        }
        Expect::Valid => {
            if ran.status != Some(0) {
                problems.push(format!("expected exit 0 (harmless), got {:?}", ran.status));
            }
            match events.last() {
                Some(end) if end["event"] == "end" && end["exit"] == 0 => {}
                other => problems.push(format!("the record does not end with an `end` event of exit 0: {other:?}")),
            }
        }
    }
    // No run writes to its catalogue, refused or not.
    for (path, bytes) in &case.files {
        let now = std::fs::read(dir.path().join(path)).ok();
        if now.as_ref() != bytes.as_ref() {
            problems.push(format!("the run changed `{path}`"));
        }
    }
    if problems.is_empty() {
        return Ok(());
    }
    let files: Vec<String> = case
        .files
        .iter()
        .map(|(path, bytes)| match bytes {
            Some(bytes) => {
                format!("--- {path} ({} bytes):\n{}", bytes.len(), cut(&String::from_utf8_lossy(bytes), 1500))
            }
            None => format!("--- {path}: removed"),
        })
        .collect();
    Err(format!(
        "{case:?}\nrests on: {}\nproblems:\n  - {}\ncommand: {}\nexit: {:?} after {:?}\nstdout:\n{}\nstderr:\n{}\nrecord ({} lines):\n{}\nmutated files:\n{}",
        case.doc,
        problems.join("\n  - "),
        ran.command,
        ran.status,
        ran.took,
        cut(&ran.stdout, 4000),
        cut(&ran.stderr, 4000),
        lines.len(),
        cut(&lines.iter().rev().take(6).rev().cloned().collect::<Vec<_>>().join("\n"), 3000),
        files.join("\n")
    ))
}

/// Runs `cases` cases drawn from `arms` with proptest, from a fixed seed; fails on the first
/// case the oracle refuses (shrunk a little), and unless every arm was drawn at least once.
fn fuzz(name: &str, seed: u8, cases: u32, arms: Vec<BoxedStrategy<Case>>) {
    let started = Instant::now();
    let config = Config { cases, failure_persistence: None, max_shrink_iters: 24, ..Config::default() };
    let mut runner = TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &[seed; 32]));
    let arm_count = arms.len();
    let tally: Mutex<BTreeMap<&'static str, (usize, bool)>> = Mutex::new(BTreeMap::new());
    let result = runner.run(&Union::new(arms), |case| {
        tally.lock().unwrap().entry(case.kind).or_insert((0, matches!(case.expect, Expect::Valid))).0 += 1;
        check(&case).map_err(TestCaseError::fail)
    });
    let tally = tally.into_inner().unwrap();
    if let Err(failure) = result {
        panic!("cli_fuzz {name}: {failure}");
    }
    let (valid, invalid): (Vec<_>, Vec<_>) = tally.iter().partition(|(_, (_, v))| *v);
    let runs: usize = tally.values().map(|(n, _)| n).sum();
    eprintln!(
        "cli_fuzz {name}: {runs} cases in {:.1?} (seed {seed})\n  INVALID {:?}\n  VALID   {:?}",
        started.elapsed(),
        invalid.iter().map(|(k, (n, _))| format!("{k}×{n}")).collect::<Vec<_>>(),
        valid.iter().map(|(k, (n, _))| format!("{k}×{n}")).collect::<Vec<_>>(),
    );
    assert_eq!(
        tally.len(),
        arm_count,
        "cli_fuzz {name}: only {} of the {arm_count} kinds of mutation were drawn ({:?}); raise the cases or change the seed",
        tally.len(),
        tally.keys().collect::<Vec<_>>()
    );
}

/// The unmutated catalogue adopts, and its record shows carries and tells: the oracle's
/// "nothing reached the mesh" has something to miss.
#[test]
fn cli_fuzz_baseline_adopts_and_reaches_the_mesh() {
    let case = Case::valid("baseline", "the shipped catalogue, unmutated", DOC_OPTIONS_OK);
    check(&case).unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir_in(scratch()).unwrap();
    write_catalogue(dir.path(), &case);
    let ran = run(dir.path(), &case).unwrap();
    let record = ran.record.unwrap();
    for op in ["carry", "tell"] {
        assert!(
            record.lines().any(|l| {
                let e: Value = serde_json::from_str(l).unwrap();
                e["event"] == "call" && e["op"] == op
            }),
            "the baseline's record holds no `{op}` call:\n{record}"
        );
    }
}

#[test]
fn cli_fuzz_manifests() {
    fuzz("manifests", 1, 300, manifest_mutations());
}

#[test]
fn cli_fuzz_foundation() {
    fuzz("foundation", 2, 70, foundation_mutations());
}

#[test]
fn cli_fuzz_credentials() {
    fuzz("credentials", 3, 70, credential_mutations());
}

#[test]
fn cli_fuzz_options() {
    fuzz("options", 4, 260, option_mutations());
}

/// Every "quotation" in a doc line is still what the file named last before it says (its
/// parts around a `…` in order; line breaks, runs of spaces and Markdown's `**` aside), so a
/// case cannot go on resting on a sentence the docs no longer hold.
#[test]
fn cli_fuzz_doc_lines_quote_their_documents() {
    let flat = |text: &str| text.replace("**", "").split_whitespace().collect::<Vec<_>>().join(" ");
    let mut quotations = 0;
    let mut stale = Vec::new();
    for (name, line) in DOC_LINES {
        let parts: Vec<&str> = line.split('"').collect();
        assert!(parts.len() % 2 == 1, "{name}: a quotation is not closed: {line}");
        let mut file = None;
        for (i, part) in parts.into_iter().enumerate() {
            if i % 2 == 0 {
                let mut named = part.split_whitespace().map(|w| w.trim_matches([',', ':', ';', '(', ')']));
                file = named.rfind(|w| w.ends_with(".md") || w.ends_with(".rs")).or(file);
                continue;
            }
            quotations += 1;
            let Some(file) = file else {
                stale.push(format!("{name}: \"{part}\" names no file before it"));
                continue;
            };
            let text = std::fs::read_to_string(root().join(file)).unwrap_or_else(|e| panic!("{name}: {file}: {e}"));
            let text = flat(&text);
            let mut from = 0;
            for piece in part.split('…').map(flat).filter(|p| !p.is_empty()) {
                match text[from..].find(&piece) {
                    Some(at) => from += at + piece.len(),
                    None => {
                        let of = if piece == flat(part) { String::new() } else { format!(" (of \"{part}\")") };
                        stale.push(format!("{name}: {file} does not say \"{piece}\"{of}"));
                        break;
                    }
                }
            }
        }
    }
    assert!(stale.is_empty(), "{} of {quotations} quotations are stale:\n{}", stale.len(), stale.join("\n"));
}
