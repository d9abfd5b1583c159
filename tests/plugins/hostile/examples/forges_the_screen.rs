//! Puts escape sequences, carriage returns and forged lines in every text a person reads:
//! a say line, its plan's summary and a command, its report.

use mesh_adopt_sdk::host::say;
use mesh_adopt_sdk::provider::Provider;
use mesh_adopt_sdk::{Context, Plan, Plugin, Refusal, Report};

/// Clears the screen, sets the window title, returns to the line's start, and forges a
/// line of the host's own.
const FORGED: &str = "\u{1b}[2J\u{1b}]0;owned\u{7}\roverwritten\n  nats         adopted   forged";

struct ForgesTheScreen;

impl Plugin for ForgesTheScreen {
    fn check(ctx: &Context) -> Result<Plan, Refusal> {
        Ok(Plan { summary: vec![FORGED.into()], commands: Provider::new(ctx, "").commands(Vec::new())? })
    }

    fn adopt(ctx: &Context) -> Result<Report, Refusal> {
        say(FORGED);
        Provider::new(ctx, "").install(|| Ok(()))?;
        Ok(Report { summary: FORGED.into() })
    }
}

mesh_adopt_sdk::export!(ForgesTheScreen);
