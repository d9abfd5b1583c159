//! Calls the host's clock a hundred thousand times: the benchmark of a host call's round
//! trip (guest → host → mesh → guest).

/// The 0.1.0 contract's bindings; the code generated to lift the context passed to an export
/// takes one argument a field.
#[allow(clippy::too_many_arguments)]
mod bindings {
    wit_bindgen::generate!({ path: "../../../wit/0.1.0", world: "adopter" });
}

use bindings::mesh::adopt::clock;
use bindings::{Context, Guest, Plan, Refusal, Report};

/// How many host calls one `adopt` makes.
const CALLS: u32 = 100_000;

struct CallsClock;

impl Guest for CallsClock {
    fn check(_: Context) -> Result<Plan, Refusal> {
        Ok(Plan { summary: Vec::new(), commands: Vec::new() })
    }

    fn adopt(_: Context) -> Result<Report, Refusal> {
        let mut sum: u64 = 0;
        for _ in 0..CALLS {
            sum = sum.wrapping_add(clock::now());
        }
        Ok(Report { summary: format!("{CALLS} calls, {sum}") })
    }
}

bindings::export!(CallsClock with_types_in bindings);
