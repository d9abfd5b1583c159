//! Asks WASI's filesystem for its preopens and what each is, as a C library or an adapter
//! does at startup, then stats one: the bookkeeping is answered, the stat stops it.

use wasip2::filesystem::preopens::get_directories;

hostile::adopt_only!(|ctx| {
    use mesh_adopt_sdk::host::say;
    let preopens = get_directories();
    for (descriptor, name) in &preopens {
        say(&format!("{name}: {:?}, {:?}", descriptor.get_type(), descriptor.get_flags()));
    }
    for (descriptor, name) in &preopens {
        say(&format!("{name} stat: {:?}", descriptor.stat().map(|s| s.size)));
    }
    Ok(mesh_adopt_sdk::Report { summary: "looked at its preopens".into() })
});
