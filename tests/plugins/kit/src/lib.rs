//! What the misbehaving test plugins share: a `check` that plans nothing (`adopt_only!`) or
//! the plain provider sequence (`adopt_planned!`), so the host gets as far as `adopt`, where
//! each plugin does its one wrong thing.

/// Defines and exports a plugin whose `check` plans nothing and whose `adopt` is the given
/// block, with `ctx` in scope: `hostile_kit::adopt_only!(|ctx| { … })`.
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

#[doc(hidden)]
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
