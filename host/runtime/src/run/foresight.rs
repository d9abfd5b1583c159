//! Foresight: what every push of the phase will do, worked out before any effect from the
//! mesh's state, the manifests, their declarations and the plans; and, after each push, the
//! node held to it.

use std::time::Duration;

use crate::catalogue::FoundationResource;
use crate::effect::{
    AheadOfPush, Declarations, MeshView, MissingImage, Planned, Prediction, PushEffect, SecretDisagreement,
    SecretEffect, Seen, Violation,
};
use crate::effect::{predict_ahead, rules};
use crate::events::EffectWarning;
use crate::mesh::NodeImages;
use crate::record::transcript::Entry;
use crate::run::preflight::Loaded;
use crate::run::{ModuleOutcome, RulesChecked, Run};

/// How often the node is asked whether a push has landed as predicted.
const LANDED_POLL: Duration = Duration::from_secs(2);

/// What preflight worked out the phase's pushes will do, and what it held them to.
pub(super) struct Foreseen {
    /// The mesh as it was when preflight looked.
    pub(super) view: MeshView,
    /// What the run's modules (and those an earlier run left prepared) declare.
    pub(super) declarations: Declarations,
    /// Every push's effect.
    pub(super) prediction: Prediction,
    /// The rules the prediction breaks.
    pub(super) broken: Vec<Violation>,
    /// What the mesh should be just before each push: what it is read again against then.
    pub(super) ahead: Vec<AheadOfPush>,
    /// How many container effects and seals the mesh had reported before the run: what the
    /// node does after is this run's.
    pub(super) baseline: (usize, usize),
    /// The secrets containers on the node hold that the control plane does not say it holds.
    pub(super) disagreeing: Vec<SecretDisagreement>,
    /// The images the run's modules run that the node lacks.
    pub(super) missing: Vec<MissingImage>,
}

impl Run<'_> {
    /// Works out what every push of the phase will do, from the mesh's state, the manifests,
    /// their declarations and the plans, and which rules of the mesh that would break.
    ///
    /// A module an earlier run left prepared without the hand-over its declarations need goes
    /// first, so that its own `secret accept` comes before any push: the node applies every
    /// prepared module at each push, and another module's push would seal over the credential
    /// its container runs with.
    pub(super) async fn foresee(
        &self,
        outcomes: &mut Vec<(String, ModuleOutcome)>,
        loaded: &mut Vec<Option<Loaded>>,
    ) -> Foreseen {
        let mut names: Vec<String> = self
            .foundation
            .resources
            .iter()
            .filter_map(|r| match r {
                FoundationResource::Container { name, .. } => Some(name.clone()),
                _ => None,
            })
            .collect();
        for ready in loaded.iter().flatten() {
            names.extend(ready.manifest.resolved_containers().into_iter().map(|c| c.name));
        }
        names.sort();
        names.dedup();
        self.reading(crate::events::MeshRead::State);
        let mut view = self.mesh.view(&self.options.node, &names).await;
        // A push applies every module the node has, not only this run's: where the mesh
        // names them, their containers are read too, and held to the prediction at each push.
        let others: Vec<String> = view
            .modules
            .iter()
            .flat_map(|known| {
                crate::effect::pushed_containers(&known.manifest)
                    .iter()
                    .map(|c| c.resource.name.clone())
                    .collect::<Vec<_>>()
            })
            .filter(|name| names.binary_search(name).is_err())
            .collect();
        if !others.is_empty() {
            names.extend(others);
            names.sort();
            names.dedup();
            self.reading(crate::events::MeshRead::State);
            view = self.mesh.view(&self.options.node, &names).await;
        }
        view.node = self.options.node.clone();
        if !view.looked {
            for resource in &self.foundation.resources {
                if let FoundationResource::Container { name, .. } = resource
                    && let Some(raised) = self.foundation.raised(name)
                {
                    view.containers.insert(name.clone(), raised);
                }
            }
        }
        let missing = self.images_missing(&mut view, loaded).await;
        let first = handing_over_first(&view, outcomes, loaded);
        let planned: Vec<Planned<'_>> = outcomes
            .iter()
            .zip(loaded.iter())
            .filter_map(|((module, outcome), ready)| match (outcome, ready) {
                (ModuleOutcome::Checked(plan), Some(ready)) => {
                    Some(Planned { module, manifest: &ready.manifest, commands: &plan.commands })
                }
                _ => None,
            })
            .collect();
        // Modules an earlier run left prepared are applied again by this run's pushes.
        let others = view.modules.iter().filter(|k| k.prepared).map(|k| (k.name.as_str(), &*k.manifest));
        let mut declarations =
            Declarations::of(&self.foundation, planned.iter().map(|p| (p.module, &**p.manifest)).chain(others));
        declarations.learn_earlier(&view.modules);
        let (mut prediction, mut ahead) = predict_ahead(&view, &planned);
        for push in &mut ahead {
            push.names = names.clone();
        }
        prediction.first = first;
        let (mut warnings, images_unasked) = (crate::effect::warnings(&view, &declarations), missing.is_none());
        if images_unasked && view.unseen.is_none() {
            warnings.push(EffectWarning::ImagesUnasked);
        }
        prediction.warnings = warnings;
        let run: Vec<(&str, &crate::catalogue::ModuleManifest)> =
            planned.iter().map(|p| (p.module, &**p.manifest)).collect();
        let disagreeing = crate::effect::secrets_disagreeing(&view, &run, &declarations);
        // A mesh that could not be seen stops the run before any effect: what would be
        // predicted from the rest of it is no prediction, and no rule is held to it.
        let seen = view.unseen.is_none();
        let broken = match seen {
            true => rules(&declarations, &view, &prediction, Seen::Predicted),
            false => Vec::new(),
        };
        if seen {
            self.transcript.record(Entry::Predicted { prediction: prediction.clone(), complete: view.complete });
        }
        let audit = self.mesh.audit();
        Foreseen {
            baseline: (audit.touches.len(), audit.sealed.len()),
            view,
            declarations,
            prediction,
            broken,
            ahead,
            disagreeing,
            missing: missing.unwrap_or_default(),
        }
    }

    /// Asks the node whether it has every image the run's modules run: the images it lacks,
    /// each with its module and container, or `None` when the mesh cannot ask. A node that
    /// could not answer leaves `view` unseen, as an engine that errs does: the run stops
    /// before any effect.
    async fn images_missing(&self, view: &mut MeshView, loaded: &[Option<Loaded>]) -> Option<Vec<MissingImage>> {
        if view.unseen.is_some() {
            return Some(Vec::new());
        }
        let (run, asked) =
            crate::effect::images_run(loaded.iter().flatten().map(|l| (l.env.module.as_str(), &l.manifest)));
        if asked.is_empty() {
            return Some(Vec::new());
        }
        let node = &self.options.node;
        self.reading(crate::events::MeshRead::Images);
        match self.mesh.images(node, &asked).await {
            Ok(NodeImages::Present) => Some(Vec::new()),
            Ok(NodeImages::Missing(lacks)) => Some(crate::effect::missing_images(node, &run, &lacks)),
            Ok(NodeImages::Unasked) => None,
            Err(error) => {
                view.unseen = Some(format!("node `{node}` could not say which images it has: {error}"));
                Some(Vec::new())
            }
        }
    }

    /// Checks the node against what `module`'s push was predicted to leave, asking the mesh
    /// until it matches or `--wait` has passed (a live node applies in its own time): one
    /// `effect-as-predicted` violation a container that still differs.
    pub(super) async fn verify_landed(&self, module: &str, foreseen: &Foreseen) -> Vec<Violation> {
        let Some(push) = foreseen.prediction.pushes.iter().rev().find(|p| p.module == module) else {
            return Vec::new();
        };
        let names: Vec<String> = push.after.keys().cloned().collect();
        let started = self.mesh.now();
        self.reading(crate::events::MeshRead::Landed);
        loop {
            let view = self.mesh.view(&self.options.node, &names).await;
            if !view.looked {
                return Vec::new();
            }
            // A node that could not be seen is no node found wrong: said as what it is.
            let differences = match &view.unseen {
                Some(why) => vec![format!("the node could not be looked at: {why}")],
                None => crate::effect::landed_differences(&push.after, &view),
            };
            let waited = self.mesh.now().saturating_sub(started);
            if differences.is_empty() {
                return Vec::new();
            }
            if waited >= self.options.wait {
                return differences
                    .into_iter()
                    .map(|difference| {
                        crate::effect::Rule::EffectAsPredicted
                            .broken(format!(
                                "after `{module}`'s push, waited {}s: {difference}",
                                self.options.wait.as_secs()
                            ))
                            .of(module)
                    })
                    .collect();
            }
            self.mesh.sleep(LANDED_POLL.min(self.options.wait - waited)).await;
        }
    }

    /// The rules broken by what the node did since preflight looked, where the mesh reports
    /// what its node did (the simulator does); nothing elsewhere.
    pub(super) fn observed_violations(&self, foreseen: &Foreseen, audit: &crate::mesh::Audit) -> Vec<Violation> {
        if !audit.observed {
            return Vec::new();
        }
        let touches = audit.touches.get(foreseen.baseline.0..).unwrap_or_default().to_vec();
        let sealed = audit.sealed.get(foreseen.baseline.1..).unwrap_or_default();
        let mut found = Vec::new();
        let secrets = sealed
            .iter()
            .map(|(module, secret)| SecretEffect {
                module: module.clone(),
                secret: secret.clone(),
                accepted: false,
                credential: None,
            })
            .collect();
        let happened = Prediction {
            pushes: vec![PushEffect {
                module: String::new(),
                command: 0,
                containers: touches,
                secrets,
                after: Default::default(),
            }],
            ..Prediction::default()
        };
        found.extend(rules(&foreseen.declarations, &foreseen.view, &happened, Seen::Observed));
        found
    }
}

impl Run<'_> {
    /// How far this run checked the rules of the mesh: a summary never says "held" of what
    /// nothing checked.
    pub(super) fn rules_checked(
        &self,
        modules: &[String],
        foreseen: Option<&Foreseen>,
        adopting: bool,
        observed: bool,
    ) -> RulesChecked {
        match foreseen {
            None => RulesChecked::NotPredicted,
            // A prediction from a mesh that could not be seen is no prediction.
            Some(f) if f.view.unseen.is_some() => RulesChecked::NotPredicted,
            // Checked after each push, when none landed, is checked after none.
            Some(_) if !modules.iter().any(|m| self.transcript.pushed(m)) => RulesChecked::Predicted,
            Some(_) if adopting && observed => RulesChecked::Verified,
            Some(f) if adopting && f.view.looked && f.view.containers.values().all(|c| c.volumes.is_some()) => {
                RulesChecked::Inspected
            }
            Some(f) if adopting && f.view.looked => RulesChecked::InspectedImages,
            Some(_) => RulesChecked::Predicted,
        }
    }
}

/// Moves ahead, in `outcomes` and `loaded` alike, every module of the run that an earlier run
/// left prepared with a declared hand-over its node has not settled; returns their names.
fn handing_over_first(
    view: &MeshView,
    outcomes: &mut Vec<(String, ModuleOutcome)>,
    loaded: &mut Vec<Option<Loaded>>,
) -> Vec<String> {
    let pending: Vec<&str> = view
        .modules
        .iter()
        .filter(|known| {
            known.prepared
                && known.manifest.adopts.iter().any(|a| a.secret.as_ref().is_some_and(|s| !known.settled.contains(s)))
        })
        .map(|known| known.name.as_str())
        .collect();
    let is_pending = |module: &str| pending.contains(&module);
    let already_first = outcomes.iter().take_while(|(m, _)| is_pending(m)).count();
    if outcomes.iter().skip(already_first).all(|(m, _)| !is_pending(m)) {
        return Vec::new();
    }
    let mut both: Vec<((String, ModuleOutcome), Option<Loaded>)> =
        std::mem::take(outcomes).into_iter().zip(std::mem::take(loaded)).collect();
    // A stable sort: the modules moved keep their order among themselves, and so do the rest.
    both.sort_by_key(|((module, _), _)| !is_pending(module));
    let first = both.iter().filter(|((m, _), _)| is_pending(m)).map(|((m, _), _)| m.clone()).collect();
    (*outcomes, *loaded) = both.into_iter().unzip();
    first
}
