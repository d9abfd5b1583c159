//! Tells a command of two million empty arguments: under the byte limit, far over any
//! command's length.

/// The 0.1.0 contract's bindings; the code generated to lift the context passed to an export
/// takes one argument a field.
#[allow(clippy::too_many_arguments)]
mod bindings {
    wit_bindgen::generate!({
        path: "../../../wit/0.1.0",
        world: "adopter",
        // Imports take borrowed arguments: the two million words are handed to the host as
        // they are, not copied into two million strings first.
        ownership: Borrowing { duplicate_if_necessary: false },
    });
}

use bindings::mesh::adopt::control;
use bindings::mesh::adopt::types::HostError;
use bindings::{Context, Guest, Plan, Refusal, Report};

/// How long the control plane is given for the command: an ordinary command's timeout.
const TELL_TIMEOUT_SECONDS: u32 = 60;

struct ManyEmptyArgs;

impl Guest for ManyEmptyArgs {
    fn check(_: Context) -> Result<Plan, Refusal> {
        Ok(Plan { summary: Vec::new(), commands: Vec::new() })
    }

    fn adopt(_: Context) -> Result<Report, Refusal> {
        let args = vec![""; 2_000_000];
        control::tell(&args, TELL_TIMEOUT_SECONDS).map_err(|error| Refusal {
            message: format!("failed to tell {} empty arguments: {}", args.len(), reason(&error)),
        })?;
        Ok(Report { summary: "told".into() })
    }
}

/// The host's answer in words, its kind first, as a refusal quotes it.
fn reason(error: &HostError) -> String {
    match error {
        HostError::Denied(message) => format!("denied: {message}"),
        HostError::Failed(message) => format!("failed: {message}"),
        HostError::TimedOut(message) => format!("timed out: {message}"),
        HostError::Unavailable(message) => format!("unavailable: {message}"),
    }
}

bindings::export!(ManyEmptyArgs with_types_in bindings);
