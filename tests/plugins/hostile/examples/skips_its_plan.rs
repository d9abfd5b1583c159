//! Plans the provider sequence, tells none of it, and reports success.

use mesh_adopt_sdk::Report;

hostile::adopt_planned!(|ctx| { Ok(Report { summary: format!("{} adopted", ctx.module) }) });
