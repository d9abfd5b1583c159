//! Tells nothing, plans nothing, and reports success in sixteen mebibytes.

use mesh_adopt_sdk::Report;

hostile::adopt_only!(|ctx| { Ok(Report { summary: "x".repeat(16 << 20) }) });
