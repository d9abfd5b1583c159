//! Imports `wasi:http` (as componentize-js components do) and, in `adopt` only, sends a
//! request with it: it must load and check, and stop only when it really calls it.

use wasip2::http::{outgoing_handler, types};

hostile::adopt_only!(|ctx| {
    let request = types::OutgoingRequest::new(types::Fields::new());
    let _ = request.set_authority(Some("169.254.169.254"));
    let _ = request.set_path_with_query(Some("/latest/meta-data/"));
    let answer = outgoing_handler::handle(request, None);
    mesh_adopt_sdk::host::say(&format!("http: {}", answer.is_ok()));
    Ok(mesh_adopt_sdk::Report { summary: "sent a request".into() })
});
