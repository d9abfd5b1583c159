//! Asks the contract's clock to sleep a year, then registers its module: the wall deadline
//! must stop it at the deadline.

hostile::adopt_only!(|ctx| {
    mesh_adopt_sdk::host::sleep_millis(365 * 24 * 60 * 60 * 1000);
    hostile::register(ctx)?;
    Ok(mesh_adopt_sdk::Report { summary: "slept a year".into() })
});
