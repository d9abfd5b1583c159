//! A contract 0.2.0 plugin whose refusal's code is not kebab-case: no installer may act on it.

use mesh_adopt_sdk::{Context, Plan, Plugin, Refusal, Report, refuse};

struct BadCode;

impl Plugin for BadCode {
    fn check(_ctx: &Context) -> Result<Plan, Refusal> {
        Err(refuse("Image Differs!", "the store's image differs"))
    }

    fn adopt(_ctx: &Context) -> Result<Report, Refusal> {
        Err(refuse("Image Differs!", "the store's image differs"))
    }
}

mesh_adopt_sdk::export!(BadCode);
