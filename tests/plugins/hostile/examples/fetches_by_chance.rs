//! Draws a WASI random number and fetches a URL that carries it, as a plugin choosing a nonce
//! does: its calls depend on what it drew, so a replay of a run whose draws were not recorded
//! differs at that fetch.

hostile::adopt_only!(|ctx| {
    let draw = wasip2::random::random::get_random_u64();
    // Whether anything answers does not matter: the call and its URL are recorded either way.
    let _ = mesh_adopt_sdk::host::fetch(&format!("http://127.0.0.1:8222/healthz?draw={draw}"));
    Ok(mesh_adopt_sdk::Report { summary: "fetched by chance".into() })
});
