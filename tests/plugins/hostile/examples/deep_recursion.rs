//! Recurses without end; the stack limit must stop it.

use mesh_adopt_sdk::Report;

hostile::adopt_only!(|ctx| {
    #[allow(unconditional_recursion)]
    fn down(depth: u64) -> u64 {
        std::hint::black_box(down(std::hint::black_box(depth + 1))) + 1
    }
    Ok(Report { summary: format!("{}", down(0)) })
});
