//! Calling a loaded plugin's exports, each call in a sandbox of its own
//! ([`crate::sandbox::call`]): `check` alone, `adopt` held to a plan, or both on one instance.

use wasmtime::Store;

use crate::contract::Adopter;
use crate::model::Report;
use crate::model::{Context, Export, Plan, Refusal, Stopped};
use crate::plugin::{Plugin, PluginHost};
use crate::sandbox::call::Callee;
use crate::sandbox::state::{BeforePush, PlanCursor, RunEnv, RunState};

/// What `adopt` did with the plan it was held to.
#[derive(Debug, Clone)]
pub struct Adopted {
    /// What the plugin returned.
    pub result: Result<Report, Refusal>,
    /// The plan's commands it never told, in order; empty when it told the whole plan.
    pub left: Vec<crate::model::PluginCommand>,
}

impl PluginHost {
    /// Instantiates the plugin in a fresh sandbox and drops it without calling an export:
    /// shows it starts on this host, and measures what starting costs.
    #[cfg(feature = "bench")]
    pub(crate) async fn instantiate_idle(&self, plugin: &Plugin, env: &RunEnv) -> Result<(), Stopped> {
        self.call(plugin, env, Export::Check, async |_, _| Ok(())).await
    }

    /// One export call in a fresh sandbox (see [`crate::sandbox::call`]): the plugin
    /// instantiated in it, then `export` called on the instance.
    async fn call<T>(
        &self,
        plugin: &Plugin,
        env: &RunEnv,
        phase: Export,
        export: impl AsyncFnOnce(&mut Adopter, &mut Store<RunState>) -> wasmtime::Result<T>,
    ) -> Result<T, Stopped> {
        let callee = Callee { path: &plugin.path, digest: &plugin.digest, engine: plugin.pre.engine() };
        let _slot = self.slots.acquire().await.expect("the host's slots are never closed");
        crate::sandbox::call::call(&self.limits, callee, env, phase, async |store: &mut Store<RunState>| {
            let mut adopter = plugin.pre.instantiate(&mut *store).await.map_err(|e| self.limits.limit_stop(e))?;
            export(&mut adopter, store).await
        })
        .await
    }

    /// Runs `check` and, when it plans and `proceed` accepts the plan, `adopt` on the same
    /// instance, held to that plan: one instantiation serves both, with effects denied until
    /// `adopt` begins and every tell then checked against the plan's next command;
    /// `before_push` is asked before each push goes out.
    pub(crate) async fn check_then_adopt(
        &self,
        plugin: &Plugin,
        env: &RunEnv,
        ctx: &Context,
        proceed: impl FnOnce(&Plan) -> bool,
        before_push: Option<std::sync::Arc<dyn BeforePush>>,
    ) -> Result<(Result<Plan, Refusal>, Option<Adopted>), Stopped> {
        self.call(plugin, env, Export::Check, async |adopter, store| {
            let planned = adopter.check(&mut *store, ctx).await?;
            let plan = match &planned {
                Ok(plan) if proceed(plan) => plan,
                _ => return Ok((planned, None)),
            };
            let state = store.data_mut();
            state.begin_export(Export::Adopt);
            state.plan = Some(PlanCursor { commands: plan.commands.clone(), told: 0, before_push });
            let result = adopter.adopt(&mut *store, ctx).await?;
            let left = store.data_mut().plan.take().map(PlanCursor::left).unwrap_or_default();
            Ok((planned, Some(Adopted { result, left })))
        })
        .await
    }

    /// Runs the plugin's read-only `check`, for the benchmarks.
    #[cfg(feature = "bench")]
    pub(crate) async fn check(
        &self,
        plugin: &Plugin,
        env: &RunEnv,
        ctx: &Context,
    ) -> Result<Result<Plan, Refusal>, Stopped> {
        self.check_in(plugin, env, ctx).await
    }

    /// Runs the plugin's read-only `check`.
    pub(crate) async fn check_in(
        &self,
        plugin: &Plugin,
        env: &RunEnv,
        ctx: &Context,
    ) -> Result<Result<Plan, Refusal>, Stopped> {
        self.call(plugin, env, Export::Check, async |adopter, store| adopter.check(store, ctx).await).await
    }

    /// Runs the plugin's `adopt`, held to `plan` (what its `check` made): a tell that is not
    /// the plan's next command is denied.
    #[cfg(feature = "bench")]
    pub(crate) async fn adopt(
        &self,
        plugin: &Plugin,
        env: &RunEnv,
        ctx: &Context,
        plan: &Plan,
    ) -> Result<Adopted, Stopped> {
        self.call(plugin, env, Export::Adopt, async |adopter, store| {
            store.data_mut().plan = Some(PlanCursor { commands: plan.commands.clone(), told: 0, before_push: None });
            let result = adopter.adopt(&mut *store, ctx).await?;
            let left = store.data_mut().plan.take().map(PlanCursor::left).unwrap_or_default();
            Ok(Adopted { result, left })
        })
        .await
    }
}
