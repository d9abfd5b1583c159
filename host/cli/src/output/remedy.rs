//! A remedy in the command line's words: the runtime says what mends an error or a hold as an
//! action and its arguments; here that becomes the flag to give, the command to run or the
//! file to mend.

use mesh_adopt_runtime::Remedy;

/// The flag that sets a limit of the sandbox's, where the command line has one.
fn limit_flag(limit: &str) -> Option<&'static str> {
    match limit {
        "wall_time" => Some("--plugin-wall-time"),
        "guest_time" => Some("--plugin-time"),
        "memory_bytes" => Some("--plugin-memory"),
        _ => None,
    }
}

/// `remedy` as a person at the command line acts on it.
pub fn words(remedy: &Remedy) -> String {
    match remedy {
        Remedy::SetLimit { limit, must } => match limit_flag(limit) {
            Some(flag) => format!("give `{flag}` {must}"),
            None => format!("raise limits.{limit} ({must}): the host's own limit, not set from the command line"),
        },
        Remedy::BuildAnotherRun => "run the command again".into(),
        other => other.to_string(),
    }
}

/// The remedy of the first typed error in `error`'s chain, the runtime's or the live mesh's:
/// each names its own as data, and a context the command added on the way up keeps it.
pub fn of_error(error: &anyhow::Error) -> Option<Remedy> {
    error.chain().find_map(|cause| {
        use mesh_adopt_runtime::error as e;
        let cause = cause as &(dyn std::error::Error + 'static);
        if let Some(typed) = cause.downcast_ref::<mesh_adopt_runtime::Error>() {
            return Some(typed.remedy());
        }
        if let Some(flagged) = cause.downcast_ref::<crate::args::Flagged>() {
            return Some(flagged.0.remedy());
        }
        macro_rules! remedy_of {
            ($($kind:ty),*) => { $(if let Some(typed) = cause.downcast_ref::<$kind>() { return Some(typed.remedy()); })* };
        }
        remedy_of!(
            e::PluginError,
            e::EngineError,
            e::CacheError,
            e::CredentialError,
            e::FileError,
            e::OptionError,
            e::NameError,
            mesh_adopt_runtime::plan::PlanFileError,
            mesh_adopt_runtime::plan::PlanKeyError,
            mesh_adopt_runtime::mesh::replay::RecordingError,
            mesh_adopt_live::ConfigError
        );
        None
    })
}

/// The hint a module's line in the summary ends with, for the remedies a person acts on at
/// once: a short one in parentheses, or, where there are two ways to mend it (a stale pin), both
/// after a colon.
pub fn hint(remedy: &Remedy, module: &str) -> Option<String> {
    Some(match remedy {
        Remedy::BuildPlugin { .. } => format!(" (build it with `mesh-adopt build {module}`)"),
        Remedy::PinPlugin { .. } => format!(": {}", words(remedy)),
        Remedy::SetLimit { limit, .. } => format!(" (`{}` raises it)", limit_flag(limit)?),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_remedy_is_worded() {
        let path = std::path::PathBuf::from("modules/postgres/manifest.json");
        for (remedy, said) in [
            (Remedy::RetryLater, "run it again later"),
            (Remedy::WaitForLock { id: "abc".into() }, "once lock `abc` is let go"),
            (Remedy::Unlock { id: "abc".into(), force: false }, "`mesh-adopt unlock abc`"),
            (Remedy::Unlock { id: "abc".into(), force: true }, "`mesh-adopt unlock abc --force`"),
            (
                Remedy::SetOption { option: "--node".into(), must: "an RFC 1123 name".into() },
                "give --node an RFC 1123 name",
            ),
            (
                Remedy::SetLimit { limit: "wall_time".into(), must: "more than 1620s".into() },
                "give `--plugin-wall-time` more than 1620s",
            ),
            (
                Remedy::SetLimit { limit: "table_elements".into(), must: "more than 10".into() },
                "raise limits.table_elements",
            ),
            (Remedy::BuildPlugin { module: "nats".into() }, "`mesh-adopt build nats`"),
            (
                Remedy::PinPlugin { module: "nats".into(), manifest: path.clone(), sha256: "ab".into() },
                "set `adopt.sha256` to \"ab\"",
            ),
            (
                Remedy::EditFile { path: path.clone(), at: Some("/adopts/0".into()) },
                "mend `/adopts/0` in `modules/postgres/manifest.json`",
            ),
            (Remedy::MakePlanAgain, "`mesh-adopt check --out PLAN`"),
            (Remedy::InspectMesh { what: "the bus".into() }, "look at the mesh before running again: the bus"),
            (Remedy::MendModules { modules: vec!["nats".into()] }, "the outcome of nats"),
            (Remedy::BuildAnotherRun, "run the command again"),
            (Remedy::Report, "report it"),
        ] {
            let worded = words(&remedy);
            assert!(worded.contains(said), "{remedy:?}: {worded}");
        }
    }
}
