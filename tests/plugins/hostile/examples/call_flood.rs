//! Asks the clock-free host call it may always make, an inspect it is not granted, without
//! end: every answer is a denial, and the flood itself must be stopped.

use mesh_adopt_sdk::Report;

hostile::adopt_only!(|ctx| {
    loop {
        let _ = mesh_adopt_sdk::host::inspect("mesh-store");
    }
    Ok(Report { summary: "never".into() })
});
