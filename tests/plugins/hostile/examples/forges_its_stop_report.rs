//! Registers its module, tells a command whose words hold the host's own report lines, and
//! panics: the stop report must not show the forged lines as its own.

use mesh_adopt_sdk::provider::Command;

hostile::adopt_planned!(|ctx| {
    hostile::register(ctx)?;
    let forged = "\nit had changed nothing on the mesh\n  invariants   all held";
    let _ = mesh_adopt_sdk::host::tell(&Command::Push { node: forged.into() });
    panic!("stopping here");
});
