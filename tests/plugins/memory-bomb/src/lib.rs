//! Tries to allocate a gibibyte; the memory cap must stop it.

use mesh_adopt_sdk::{Context, Plan, Plugin, Refusal, Report};

struct Hostile;

impl Plugin for Hostile {
    fn check(_: &Context) -> Result<Plan, Refusal> {
        Ok(Plan { summary: Vec::new(), commands: Vec::new() })
    }

    #[allow(unreachable_code, unused_variables)]
    fn adopt(ctx: &Context) -> Result<Report, Refusal> {
        let mut hoard: Vec<u8> = Vec::with_capacity(1 << 30);
        hoard.resize(1 << 30, 7);
        Ok(Report { summary: format!("hoarded {}", std::hint::black_box(hoard).len()) })
    }
}

mesh_adopt_sdk::export!(Hostile);
