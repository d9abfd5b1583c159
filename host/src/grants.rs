//! What a plugin may do, decided in one place so every denial reads the same way.
//!
//! `check` is read-only: carries and tells are denied while it runs, so a plan can be
//! reviewed before anything changes. `adopt` may use every capability the contract gives.

use crate::transcript::CallKind;

/// Which export of the plugin is running.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// `check`: reading only.
    Check,
    /// `adopt`: acting on the mesh.
    Adopt,
}

impl std::fmt::Display for Phase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Phase::Check => "check",
            Phase::Adopt => "adopt",
        })
    }
}

/// Decides whether a call may go through in this phase; the error names the capability,
/// the call and what to do instead.
pub fn allow(phase: Phase, kind: CallKind, detail: &str) -> Result<(), String> {
    if phase == Phase::Check && kind.is_effect() {
        let capability = match kind {
            CallKind::Carry => "carry",
            _ => "tell",
        };
        return Err(format!(
            "`{capability} {detail}` changes the mesh, and `check` may only read: move it to `adopt`"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_may_not_tell_or_carry() {
        // Both effectful capabilities are refused during check, naming the call.
        let denied = allow(Phase::Check, CallKind::Tell, "push node-1").unwrap_err();
        assert!(denied.contains("`tell push node-1`"), "{denied}");
        assert!(allow(Phase::Check, CallKind::Carry, "x").is_err());
    }

    #[test]
    fn check_may_read() {
        // Reading the node or a credential's presence is not an effect.
        assert!(allow(Phase::Check, CallKind::Inspect, "mesh-bus").is_ok());
        assert!(allow(Phase::Check, CallKind::Credential, "store-superuser").is_ok());
    }

    #[test]
    fn adopt_may_act() {
        assert!(allow(Phase::Adopt, CallKind::Tell, "push node-1").is_ok());
    }
}
