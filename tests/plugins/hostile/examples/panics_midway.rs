//! Registers its module, then panics.

hostile::adopt_planned!(|ctx| {
    hostile::register(ctx)?;
    panic!("the plugin lost its footing after registering {}", ctx.module);
});
