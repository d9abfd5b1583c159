//! Recurses without end; the stack limit must stop it.

use mesh_adopt_sdk::{Context, Plan, Plugin, Refusal, Report};

struct Hostile;

impl Plugin for Hostile {
    fn check(_: &Context) -> Result<Plan, Refusal> {
        Ok(Plan { summary: Vec::new(), commands: Vec::new() })
    }

    #[allow(unreachable_code, unused_variables)]
    fn adopt(ctx: &Context) -> Result<Report, Refusal> {
        #[allow(unconditional_recursion)]
        fn down(depth: u64) -> u64 {
            std::hint::black_box(down(std::hint::black_box(depth + 1))) + 1
        }
        Ok(Report { summary: format!("{}", down(0)) })
    }
}

mesh_adopt_sdk::export!(Hostile);
