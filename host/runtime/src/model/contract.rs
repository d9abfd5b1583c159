//! The versions of the WIT contract this host speaks, in the host's own words: what the
//! loader, the sandbox's import list, the record and the CLI name a plugin's version by.

use std::fmt;

/// The contract's package, as plugins name it in their imports.
pub const PACKAGE: &str = "mesh:adopt";

/// The world a manifest's `adopt.world` names for the newest version.
pub const WORLD: &str = Contract::NEWEST.world();

/// A version of the contract this host speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Contract {
    /// `mesh:adopt@0.1.0`: commands as words, the manifest as bytes, the context handed to
    /// each export, refusals without a code.
    V0_1,
    /// `mesh:adopt@0.2.0`: typed commands, the manifest parsed, the context handed once to
    /// `init`, refusals with a code.
    V0_2,
}

impl Contract {
    /// Every version this host loads, oldest first.
    pub const ALL: [Contract; 2] = [Contract::V0_1, Contract::V0_2];

    /// The version new plugins are written for.
    pub const NEWEST: Contract = Contract::V0_2;

    /// The version number, e.g. `0.2.0`.
    pub const fn version(self) -> &'static str {
        match self {
            Contract::V0_1 => "0.1.0",
            Contract::V0_2 => "0.2.0",
        }
    }

    /// The world a manifest's `adopt.world` names for this version.
    pub const fn world(self) -> &'static str {
        match self {
            Contract::V0_1 => "mesh:adopt/adopter@0.1.0",
            Contract::V0_2 => "mesh:adopt/adopter@0.2.0",
        }
    }

    /// The version whose number is `version`, if this host speaks it.
    pub fn of_version(version: &str) -> Option<Contract> {
        Contract::ALL.into_iter().find(|c| c.version() == version)
    }

    /// The version whose world is `world`, if this host speaks it.
    pub fn of_world(world: &str) -> Option<Contract> {
        Contract::ALL.into_iter().find(|c| c.world() == world)
    }

    /// The versions this host speaks, in words: `0.1.0 and 0.2.0`.
    pub fn spoken() -> String {
        let versions: Vec<&str> = Contract::ALL.iter().map(|c| c.version()).collect();
        match versions.split_last() {
            Some((last, [])) => last.to_string(),
            Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
            None => String::new(),
        }
    }
}

impl fmt::Display for Contract {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{PACKAGE}@{}", self.version())
    }
}
