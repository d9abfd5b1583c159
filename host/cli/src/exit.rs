//! The exit statuses the command documents (README.md's table): one type for every command
//! to return, turned into the process's exit code in one place, `main`.

use mesh_adopt_runtime::RunReport;
use mesh_adopt_runtime::events;

/// How a command ended, as its exit status says.
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
    /// 130: interrupted by SIGINT or SIGTERM.
    Interrupted,
}

// The status an interrupted run records in its last event is the one the process exits with.
const _: () = assert!(ExitStatus::Interrupted.code() == events::EXIT_INTERRUPTED);

impl ExitStatus {
    /// The status as a number: what the process exits with and what an `end` event records.
    pub const fn code(self) -> u8 {
        match self {
            ExitStatus::Success => 0,
            ExitStatus::Failed => 1,
            ExitStatus::Unusable => 2,
            ExitStatus::Interrupted => events::EXIT_INTERRUPTED,
        }
    }

    /// [`Success`](ExitStatus::Success) when `succeeded`, else [`Failed`](ExitStatus::Failed):
    /// for a command whose only verdict is whether everything passed.
    pub fn of(succeeded: bool) -> ExitStatus {
        if succeeded { ExitStatus::Success } else { ExitStatus::Failed }
    }

    /// The status a run's outcomes give ([`RunReport::exit_code`]): 2 when a module could
    /// not be used, 1 when one did not succeed, else 0.
    pub fn of_report(report: &RunReport) -> ExitStatus {
        match report.exit_code() {
            0 => ExitStatus::Success,
            2 => ExitStatus::Unusable,
            _ => ExitStatus::Failed,
        }
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

    /// The numbers are README.md's exit code table.
    #[test]
    fn each_status_is_its_documented_code() {
        let codes = [ExitStatus::Success, ExitStatus::Failed, ExitStatus::Unusable, ExitStatus::Interrupted]
            .map(ExitStatus::code);
        assert_eq!(codes, [0, 1, 2, 130]);
        assert_eq!(ExitStatus::of(true), ExitStatus::Success);
        assert_eq!(ExitStatus::of(false), ExitStatus::Failed);
    }
}
