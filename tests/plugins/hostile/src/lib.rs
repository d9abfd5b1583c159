//! What the misbehaving test plugins share: a `check` that plans nothing (`adopt_only!`) or
//! the plain provider sequence (`adopt_planned!`), so the host gets as far as `adopt`, where
//! each plugin does its one wrong thing. Each plugin is a program of its own in `examples/`,
//! built against contract 0.2.0.

/// Defines and exports a plugin whose `check` plans nothing and whose `adopt` is the given
/// block, with `ctx` in scope: `hostile::adopt_only!(|ctx| { … })`.
#[macro_export]
macro_rules! adopt_only {
    (|$ctx:ident| $body:block) => {
        $crate::hostile_plugin!(|_ctx| Vec::new(), |$ctx| $body);
    };
}

/// As [`adopt_only!`], with a `check` that plans the plain provider sequence (nothing without
/// a catalogue source): for plugins whose wrong thing comes after telling part of it.
#[macro_export]
macro_rules! adopt_planned {
    (|$ctx:ident| $body:block) => {
        $crate::hostile_plugin!(
            |ctx| mesh_adopt_sdk::provider::Provider::new(ctx, "").commands(Vec::new()).unwrap_or_default(),
            |$ctx| $body
        );
    };
}

/// Defines and exports a plugin whose `check` plans the commands the first closure gives and
/// whose `adopt` is the second's block: for a plugin that also does something in `check`.
#[macro_export]
macro_rules! hostile_plugin {
    (|$plan_ctx:ident| $plan:expr, |$ctx:ident| $body:block) => {
        struct Hostile;

        impl mesh_adopt_sdk::Plugin for Hostile {
            fn check($plan_ctx: &mesh_adopt_sdk::Context) -> Result<mesh_adopt_sdk::Plan, mesh_adopt_sdk::Refusal> {
                Ok(mesh_adopt_sdk::Plan { summary: Vec::new(), commands: $plan })
            }

            #[allow(unreachable_code, unused_variables)]
            fn adopt($ctx: &mesh_adopt_sdk::Context) -> Result<mesh_adopt_sdk::Report, mesh_adopt_sdk::Refusal> $body
        }

        mesh_adopt_sdk::export!(Hostile);
    };
}

/// The manifest's `field`, as JSON: the programs read fields of their own (`hostile-say`,
/// `hostile-fetch`, `hostile-credentials`) from the manifest's bytes, which the host hands over
/// beside the parsed manifest, whose type has no room for them.
pub fn manifest_field(ctx: &mesh_adopt_sdk::Context, field: &str) -> serde_json::Value {
    let manifest: serde_json::Value = serde_json::from_slice(&ctx.manifest_bytes).unwrap_or_default();
    manifest[field].clone()
}

/// Tells a command as a plan lists it, through the contract's own `tell`: for the programs that
/// replay their plan's commands rather than run the provider sequence.
pub fn tell_as_planned(
    command: &mesh_adopt_sdk::bindings::mesh::adopt::types::Command,
    timeout_seconds: u32,
) -> Result<String, mesh_adopt_sdk::HostError> {
    mesh_adopt_sdk::bindings::mesh::adopt::control::tell(command, timeout_seconds)
}

/// Carries the module's manifest, labelled `manifest`, and registers it: the provider
/// sequence's first step, what a plugin stopped after it had already done.
pub fn register(ctx: &mesh_adopt_sdk::Context) -> Result<(), mesh_adopt_sdk::Refusal> {
    let remote = mesh_adopt_sdk::provider::manifest_remote(&ctx.module);
    mesh_adopt_sdk::host::carry_bytes("manifest", &ctx.manifest_bytes, &remote)?;
    mesh_adopt_sdk::host::tell(&mesh_adopt_sdk::provider::Command::ModuleAdd { remote })?;
    Ok(())
}
