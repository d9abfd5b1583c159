//! Plans and tells the provider sequence up to `prepare`, and never pushes: the container it
//! adopts would be applied by whichever module pushes next.

use mesh_adopt_sdk::Report;
use mesh_adopt_sdk::bindings::mesh::adopt::types::Command;
use mesh_adopt_sdk::provider::Provider;

/// The provider sequence without its push, which comes last.
fn without_push(ctx: &mesh_adopt_sdk::Context) -> Vec<Command> {
    let mut commands = Provider::new(ctx, "").commands(Vec::new()).unwrap_or_default();
    commands.pop();
    commands
}

hostile::hostile_plugin!(|ctx| without_push(ctx), |ctx| {
    // Registering carries the manifest first, as the plan's `module add` needs.
    hostile::register(ctx)?;
    for command in without_push(ctx).iter().skip(1) {
        hostile::tell_as_planned(command, 60).map_err(|e| mesh_adopt_sdk::refuse("tell-failed", format!("{e:?}")))?;
    }
    Ok(Report { summary: format!("{} adopted without a push of its own", ctx.module) })
});
