//! Asks for each credential its manifest lists under `hostile-credentials`, to reach past
//! the credentials directory, and carries what it gets.

use mesh_adopt_sdk::host::{carry_secret, credential};
use mesh_adopt_sdk::{Report, refuse};

hostile::adopt_only!(|ctx| {
    let names = hostile::manifest_field(ctx, "hostile-credentials");
    for name in names.as_array().into_iter().flatten().filter_map(|n| n.as_str()) {
        let secret = credential(name).map_err(|e| refuse(e.code(), format!("credential `{name}`: {}", e.reason())))?;
        carry_secret(&secret, "/accepting-stolen")?;
    }
    Ok(Report { summary: "reached every credential".into() })
});
