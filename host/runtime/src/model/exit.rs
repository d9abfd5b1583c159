//! How a run or a command ends, as its exit status says: the numbers docs/operating.md's exit
//! code table documents, owned here so the record's `end` and `interrupted` events, an
//! embedder's process and the command line all say the same ones.

/// How a run or a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// 0: every module adopted (or checked) and every rule held; every scenario passed; a
    /// replay made every recorded call; a build placed, or found fresh, every plugin.
    Success,
    /// 1: a module refused, incomplete or stopped, a rule broken, a scenario failed, a
    /// replay diverged, a built plugin stale.
    Failed,
    /// 2: an input could not be used (catalogue, foundation, manifest, plugin, credential,
    /// plan, configuration, option); nothing was changed.
    Unusable,
    /// 75 (sysexits' `EX_TEMPFAIL`): another run holds the mesh's lock, or held it past
    /// `--lock-timeout`; nothing was done, and the same run later may pass.
    Locked,
    /// 130: interrupted by SIGINT or SIGTERM.
    Interrupted,
}

impl ExitStatus {
    /// Every status, in the order of docs/operating.md's table.
    pub const ALL: [ExitStatus; 5] =
        [ExitStatus::Success, ExitStatus::Failed, ExitStatus::Unusable, ExitStatus::Locked, ExitStatus::Interrupted];

    /// The status as a number: what the process exits with and what an `end` event records.
    pub const fn code(self) -> u8 {
        match self {
            ExitStatus::Success => 0,
            ExitStatus::Failed => 1,
            ExitStatus::Unusable => 2,
            ExitStatus::Locked => 75,
            ExitStatus::Interrupted => 130,
        }
    }

    /// [`Success`](ExitStatus::Success) when `succeeded`, else [`Failed`](ExitStatus::Failed):
    /// for a command whose only verdict is whether everything passed.
    pub fn of(succeeded: bool) -> ExitStatus {
        if succeeded { ExitStatus::Success } else { ExitStatus::Failed }
    }
}

impl From<ExitStatus> for std::process::ExitCode {
    fn from(status: ExitStatus) -> Self {
        std::process::ExitCode::from(status.code())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The numbers are docs/operating.md's exit code table, read from it: a row changed on either
    /// side fails here.
    #[test]
    fn each_status_is_the_code_the_readme_documents() {
        let guide = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/operating.md")).unwrap();
        let documented: Vec<u8> =
            guide.lines().filter_map(|line| line.strip_prefix("| `")?.split_once("` |")?.0.parse().ok()).collect();
        assert_eq!(documented, ExitStatus::ALL.map(ExitStatus::code), "docs/operating.md's exit code table");
        assert_eq!(ExitStatus::of(true), ExitStatus::Success);
        assert_eq!(ExitStatus::of(false), ExitStatus::Failed);
    }
}
