//! Reads `/etc/passwd` through WASI's filesystem, then says what it got.

hostile::adopt_only!(|ctx| {
    let got = std::fs::read("/etc/passwd");
    mesh_adopt_sdk::host::say(&format!("read: {:?}", got.map(|b| b.len())));
    Ok(mesh_adopt_sdk::Report { summary: "read a file".into() })
});
