//! The mesh read again just before a push, held to what the prediction says it is at that
//! moment: the state preflight saw with this run's own earlier pushes applied as predicted.
//! Anything else moved it — another operator, a run the lock does not cover, an earlier push
//! that did not do what was predicted — and the push is not told.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::Arc;

use mesh_adopt_manifest::ModuleManifest;

use super::{ContainerSpec, KnownModule, MeshView, PushedContainer};

/// What the mesh should be just before one push of the run, as the prediction has it.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct AheadOfPush {
    /// The module whose plan pushes.
    pub module: String,
    /// The node it pushes: the run's, whose containers are read again.
    pub node: String,
    /// Where in that plan, counting its commands from 0.
    pub command: usize,
    /// The mesh as predicted then: the containers, and the control plane's modules where
    /// preflight knew them (`modules_known`). `looked` is whether preflight looked at the
    /// mesh at all: a prediction that rests on the plans alone has nothing to hold a re-read to.
    pub expected: MeshView,
    /// The secrets this run's plans accepted before the push, as `(module, secret)`: a node
    /// may hold them already, ahead of the push that settles them.
    pub accepted: BTreeSet<(String, String)>,
    /// The containers to ask about: those preflight asked about.
    pub names: Vec<String>,
}

/// One thing found otherwise than predicted just before a push.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Moved {
    /// What moved, in words: ``container `mesh-bus` ``, ``module `nats` ``, ``secret `postgres/superuser` ``,
    /// ``module `postgres` container `mesh-store` `` (a container as a registered manifest declares it).
    pub what: String,
    /// Which of its fields: `presence`, `image`, `spec digest`, `volumes`, `running`, `owner`,
    /// `registration`, `registration order`, `prepared`, `held`; of a registered manifest,
    /// `declared` (a container it declares), `secrets` (those it declares) or any field of a
    /// container's spec (`image`, `volumes`, `environment`, …).
    pub field: String,
    /// What the prediction has.
    pub predicted: String,
    /// What the mesh showed.
    pub found: String,
}

/// `container `mesh-bus` image: predicted nats:2, found nats:9`.
impl fmt::Display for Moved {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}: predicted {}, found {}", self.what, self.field, self.predicted, self.found)
    }
}

/// What a re-read before a push found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reread {
    /// Whether the mesh was read again at all (a mesh that cannot look, or a prediction
    /// that rests on the plans alone, is not: the push goes on as it always did).
    pub looked: bool,
    /// Why the mesh could not be read: the push is not told on an unknown.
    pub unseen: Option<String>,
    /// What differs from the prediction; empty when nothing moved.
    pub moved: Vec<Moved>,
}

impl Reread {
    /// The re-read of `found`, held to `ahead`.
    pub fn of(ahead: &AheadOfPush, found: &MeshView) -> Reread {
        if !found.looked {
            return Reread::default();
        }
        if let Some(why) = &found.unseen {
            return Reread { looked: true, unseen: Some(why.clone()), moved: Vec::new() };
        }
        Reread { looked: true, unseen: None, moved: moved(ahead, found) }
    }

    /// Whether the push may go: the mesh is as predicted, or was not looked at again.
    pub fn clear(&self) -> bool {
        self.unseen.is_none() && self.moved.is_empty()
    }
}

/// How `found` differs from what `ahead` predicts: containers (presence, image, spec digest,
/// volumes, running, owner, each compared where both sides know it) and, where preflight and the
/// re-read both had the control plane's own answer, everything of it the prediction was made
/// from: the modules' registration and its order, preparation, the secrets the node holds, and
/// what each registered manifest makes a push do (its containers' whole specs, its secrets).
pub fn moved(ahead: &AheadOfPush, found: &MeshView) -> Vec<Moved> {
    let mut moved = Vec::new();
    let expected = &ahead.expected;
    let names: BTreeSet<&String> = expected.containers.keys().chain(found.containers.keys()).collect();
    for name in names {
        // Named only where something moved: nearly every re-read finds nothing.
        let mut push = |field: &str, predicted: String, found: String| {
            moved.push(Moved { what: format!("container `{name}`"), field: field.into(), predicted, found })
        };
        match (expected.containers.get(name), found.containers.get(name)) {
            (Some(want), None) => push("presence", format!("running {}", want.image), "not on the node".into()),
            (None, Some(got)) => push("presence", "not on the node".into(), format!("running {}", got.image)),
            (Some(want), Some(got)) => container_moved(want, got, push),
            (None, None) => {}
        }
    }
    if expected.modules_known && found.modules_known {
        modules_moved(&ahead.module, &expected.modules, &found.modules, &ahead.accepted, &mut moved);
    }
    moved
}

/// One container's fields, compared where both sides know them.
fn container_moved(want: &ContainerSpec, got: &ContainerSpec, mut push: impl FnMut(&str, String, String)) {
    if want.image != got.image {
        push("image", want.image.clone(), got.image.clone());
    }
    if let (Some(w), Some(g)) = (&want.digest, &got.digest)
        && w != g
    {
        push("spec digest", w.short().to_string(), g.short().to_string());
    }
    if let (Some(w), Some(g)) = (&want.volumes, &got.volumes)
        && mesh_adopt_manifest::mounts(w) != mesh_adopt_manifest::mounts(g)
    {
        push("volumes", w.join(", "), g.join(", "));
    }
    if let (Some(w), Some(g)) = (want.running, got.running)
        && w != g
    {
        let words = |running: bool| if running { "running" } else { "stopped" }.to_string();
        push("running", words(w), words(g));
    }
    // Who the node says owns it: a container raised again by another, even on the same spec,
    // is another's now.
    if let (Some(w), Some(g)) = (&want.owner, &got.owner)
        && w != g
    {
        push("owner", w.clone(), g.clone());
    }
}

/// The order of registration of the modules both sides have: the order a push applies them in.
fn order_moved(expected: &[KnownModule], found: &[KnownModule], moved: &mut Vec<Moved>) {
    let names = |of: &[KnownModule], other: &[KnownModule]| -> Vec<String> {
        of.iter().filter(|k| other.iter().any(|o| o.name == k.name)).map(|k| k.name.clone()).collect()
    };
    let (want, got) = (names(expected, found), names(found, expected));
    if want != got {
        moved.push(Moved {
            what: "the modules".into(),
            field: "registration order".into(),
            predicted: want.join(", "),
            found: got.join(", "),
        });
    }
}

/// What a registered manifest makes a push do, as predicted and as the control plane holds it
/// now: each container it declares, by its whole spec (docs/push-rule.md), field by field, and
/// the secrets it declares (a push seals those the node does not hold).
fn manifest_moved(module: &str, want: &Arc<ModuleManifest>, got: &Arc<ModuleManifest>, moved: &mut Vec<Moved>) {
    if Arc::ptr_eq(want, got) {
        return;
    }
    let (wanted, held) = (super::pushed_containers(want), super::pushed_containers(got));
    let (wanted, held) = (by_name(&wanted), by_name(&held));
    let words = |yes: bool| if yes { "declared" } else { "not declared" }.to_string();
    for name in wanted.keys().chain(held.keys()).collect::<BTreeSet<_>>() {
        let what = || format!("module `{module}` container `{name}`");
        match (wanted.get(name), held.get(name)) {
            // Equal digests are equal specs: nearly every re-read ends here.
            (Some(w), Some(g)) if w.digest == g.digest => {}
            (Some(w), Some(g)) => {
                let (w, g) = (&w.spec, &g.spec);
                for field in w.differing_fields(g) {
                    moved.push(Moved {
                        what: what(),
                        field: field.clone(),
                        predicted: value_words(w.field(&field)),
                        found: value_words(g.field(&field)),
                    });
                }
            }
            (w, _) => moved.push(Moved {
                what: what(),
                field: "declared".into(),
                predicted: words(w.is_some()),
                found: words(w.is_none()),
            }),
        }
    }
    let secrets = |manifest: &ModuleManifest| -> BTreeSet<String> { manifest.secrets.iter().cloned().collect() };
    let (w, g) = (secrets(want), secrets(got));
    if w != g {
        let list = |s: &BTreeSet<String>| {
            if s.is_empty() { "none".to_string() } else { s.iter().cloned().collect::<Vec<_>>().join(", ") }
        };
        moved.push(Moved {
            what: format!("module `{module}`"),
            field: "secrets".into(),
            predicted: list(&w),
            found: list(&g),
        });
    }
}

/// A manifest's pushed containers by name.
fn by_name(pushed: &[PushedContainer]) -> BTreeMap<&str, &PushedContainer> {
    pushed.iter().map(|c| (c.resource.name.as_str(), c)).collect()
}

/// A spec field's value in a message: a string as it is, mounts one after another, anything
/// else as its canonical JSON (RFC 8785), as the digest sees it; `none` for a field the spec
/// does not have.
fn value_words(value: Option<&serde_json::Value>) -> String {
    match value {
        None => "none".into(),
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Array(items)) if items.iter().all(serde_json::Value::is_string) => {
            items.iter().filter_map(serde_json::Value::as_str).collect::<Vec<_>>().join(", ")
        }
        Some(other) => crate::model::canonical::canonical(other),
    }
}

/// The control plane's modules: registered, prepared, and the secrets the node holds. The
/// pushing module's own registration and preparation are its plan's, told just before: a
/// command of its own that failed is the plugin's to answer for (`went-on-past-a-failure`),
/// and the node after its push is held to the prediction, so they are not compared here.
fn modules_moved(
    pushing: &str,
    expected: &[KnownModule],
    found: &[KnownModule],
    accepted: &BTreeSet<(String, String)>,
    moved: &mut Vec<Moved>,
) {
    let by_name = |modules: &[KnownModule]| -> BTreeMap<String, KnownModule> {
        modules.iter().map(|k| (k.name.clone(), k.clone())).collect()
    };
    order_moved(expected, found, moved);
    let (expected, found) = (by_name(expected), by_name(found));
    let names: BTreeSet<&String> = expected.keys().chain(found.keys()).collect();
    let words = |yes: bool, word: &str| if yes { word.to_string() } else { format!("not {word}") };
    for name in names {
        let what = format!("module `{name}`");
        let (want, got) = match (expected.get(name), found.get(name)) {
            (Some(want), Some(got)) => (want, got),
            _ if name == pushing => continue,
            (want, _) => {
                let registered = want.is_some();
                moved.push(Moved {
                    what,
                    field: "registration".into(),
                    predicted: words(registered, "registered"),
                    found: words(!registered, "registered"),
                });
                continue;
            }
        };
        // The manifest is compared for every module, the pushing one's too: the grants let a
        // plugin register only the catalogue's manifest, which is the one predicted, so any other
        // the control plane holds was put there by someone else, and its push would apply it.
        manifest_moved(name, &want.manifest, &got.manifest, moved);
        if want.prepared != got.prepared && name != pushing {
            moved.push(Moved {
                what: what.clone(),
                field: "prepared".into(),
                predicted: words(want.prepared, "prepared"),
                found: words(got.prepared, "prepared"),
            });
        }
        for secret in want.settled.iter().chain(&got.settled).collect::<BTreeSet<_>>() {
            let (held, holds) = (want.settled.contains(secret), got.settled.contains(secret));
            // A secret this run accepted may be held before the push that settles it.
            if held == holds || (!held && accepted.contains(&(name.clone(), secret.clone()))) {
                continue;
            }
            moved.push(Moved {
                what: format!("secret `{name}/{secret}`"),
                field: "held".into(),
                predicted: words(held, "held"),
                found: words(holds, "held"),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The control plane's view of one registered module, `vault`, whose container has `fields`.
    fn holding(fields: &str) -> MeshView {
        let text = format!(
            r#"{{"name": "vault", "resources": [{{"id": "vault", "type": "container", "name": "mesh-vault", {fields}}}]}}"#
        );
        let manifest = Arc::new(ModuleManifest::parse(text.as_bytes()).expect("the example parses"));
        let module = KnownModule { name: "vault".into(), manifest, prepared: true, settled: BTreeSet::new() };
        MeshView { modules: vec![module], modules_known: true, ..MeshView::looked() }
    }

    #[test]
    fn a_registered_manifest_is_compared_as_its_canonical_form_is_so_minus_zero_is_zero() {
        let ahead =
            |fields: &str| AheadOfPush { module: "vault".into(), expected: holding(fields), ..AheadOfPush::default() };
        // Written otherwise, one value: nothing moved.
        let predicted = ahead(r#""image": "v:1", "user": -0, "environment": {"N": 1.0, "S": 1e-7}"#);
        let same = holding(r#""image": "v:1", "user": 0, "environment": {"N": 1, "S": 0.0000001}"#);
        assert_eq!(moved(&predicted, &same), []);
        // Another image: the image is named, not the user written as `-0` one side and `0` the other.
        let other = holding(r#""image": "v:2", "user": 0, "environment": {"N": 1, "S": 0.0000001}"#);
        let fields: Vec<String> = moved(&predicted, &other).into_iter().map(|m| m.field).collect();
        assert_eq!(fields, ["image"]);
        // Another value is named, both sides in their canonical form.
        let another = holding(r#""image": "v:1", "user": 1, "environment": {"N": 1, "S": 0.0000001}"#);
        let [user] = moved(&predicted, &another).try_into().expect("one field moved");
        assert_eq!((user.field.as_str(), user.predicted.as_str(), user.found.as_str()), ("user", "0", "1"));
    }

    /// The re-read of `found` where the prediction has the store as `want`.
    fn moved_of(want: ContainerSpec, found: ContainerSpec) -> Vec<Moved> {
        let mut expected = MeshView::looked();
        expected.containers.insert("mesh-store".into(), want);
        let mut seen = MeshView::looked();
        seen.containers.insert("mesh-store".into(), found);
        let ahead = AheadOfPush { expected, names: vec!["mesh-store".into()], ..AheadOfPush::default() };
        Reread::of(&ahead, &seen).moved
    }

    #[test]
    fn a_container_the_node_says_another_owns_now_has_moved_and_one_it_cannot_say_of_has_not() {
        let store = || ContainerSpec::new("postgres:16", Some(vec!["/d:/data".into()]));
        let owned = |by: &str| store().with_owner(Some(by.into()));
        assert_eq!(moved_of(owned("genesis"), owned("genesis")), vec![]);
        let moved = moved_of(owned("genesis"), owned("intruder"));
        assert_eq!(moved.len(), 1, "{moved:?}");
        assert_eq!(moved[0].to_string(), "container `mesh-store` owner: predicted genesis, found intruder");
        // An engine that shows no owner label says nothing of it.
        assert_eq!(moved_of(owned("genesis"), store()), vec![]);
    }
}
