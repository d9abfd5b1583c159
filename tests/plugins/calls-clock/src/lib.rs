//! Calls the host's clock a hundred thousand times: the benchmark of a host call's round
//! trip (guest → host → mesh → guest).

use mesh_adopt_sdk::host::now_millis;
use mesh_adopt_sdk::{Context, Plan, Plugin, Refusal, Report};

/// How many host calls one `adopt` makes.
const CALLS: u32 = 100_000;

struct CallsClock;

impl Plugin for CallsClock {
    fn check(_: &Context) -> Result<Plan, Refusal> {
        Ok(Plan { summary: Vec::new(), commands: Vec::new() })
    }

    fn adopt(_: &Context) -> Result<Report, Refusal> {
        let mut sum: u64 = 0;
        for _ in 0..CALLS {
            sum = sum.wrapping_add(now_millis());
        }
        Ok(Report { summary: format!("{CALLS} calls, {sum}") })
    }
}

mesh_adopt_sdk::export!(CallsClock);
