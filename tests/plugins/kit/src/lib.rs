//! What the misbehaving test plugins share: a `check` that plans nothing, so the host gets
//! as far as `adopt`, where each plugin does its one wrong thing.

/// Defines and exports a plugin whose `adopt` is the given block, with `ctx` in scope:
/// `hostile_kit::adopt_only!(|ctx| { … })`.
#[macro_export]
macro_rules! adopt_only {
    (|$ctx:ident| $body:block) => {
        struct Hostile;

        impl mesh_adopt_sdk::Plugin for Hostile {
            fn check(_: &mesh_adopt_sdk::Context) -> Result<mesh_adopt_sdk::Plan, mesh_adopt_sdk::Refusal> {
                Ok(mesh_adopt_sdk::Plan { summary: Vec::new(), commands: Vec::new() })
            }

            #[allow(unreachable_code, unused_variables)]
            fn adopt($ctx: &mesh_adopt_sdk::Context) -> Result<mesh_adopt_sdk::Report, mesh_adopt_sdk::Refusal> $body
        }

        mesh_adopt_sdk::export!(Hostile);
    };
}
