//! The kinds of resource the contract knows: the words a manifest's `type` and a foundation
//! bundle's `kind` may say, one closed set for both, so a misspelt or invented kind is refused
//! where the document is read instead of being passed over as nothing to raise.

use std::fmt;

/// A kind of resource a module declares or genesis raised. A push raises only containers; the
/// others are known so that a reader can tell a resource it need not raise from a mistake.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ResourceKind {
    /// A container the node runs: the only kind a push raises, keeps or recreates.
    Container,
    /// A file on the node, such as the bus's first user list genesis wrote.
    File,
    /// A network genesis raised for the mesh's containers.
    Network,
    /// A part of a module the control plane runs itself, not a container on the node (the
    /// postgres module's provisioner).
    Service,
    /// A volume genesis raised, apart from any container's mounts.
    Volume,
}

impl ResourceKind {
    /// Every kind, in the order messages list them.
    pub const ALL: [ResourceKind; 5] = [
        ResourceKind::Container,
        ResourceKind::File,
        ResourceKind::Network,
        ResourceKind::Service,
        ResourceKind::Volume,
    ];

    /// The word a manifest's `type` and a bundle's `kind` write.
    pub fn as_str(self) -> &'static str {
        match self {
            ResourceKind::Container => "container",
            ResourceKind::File => "file",
            ResourceKind::Network => "network",
            ResourceKind::Service => "service",
            ResourceKind::Volume => "volume",
        }
    }

    /// The kind `word` names, spelt exactly (`Container` is no kind: a reader could take it
    /// two ways).
    pub fn parse(word: &str) -> Option<ResourceKind> {
        ResourceKind::ALL.into_iter().find(|kind| kind.as_str() == word)
    }

    /// Every kind as a message lists them: `` `container`, `file`, … ``.
    pub fn listed() -> String {
        ResourceKind::ALL.iter().map(|kind| format!("`{kind}`")).collect::<Vec<_>>().join(", ")
    }
}

impl fmt::Display for ResourceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_reads_back_from_its_word_and_no_other_spelling_does() {
        for kind in ResourceKind::ALL {
            assert_eq!(ResourceKind::parse(kind.as_str()), Some(kind));
            assert_eq!(ResourceKind::parse(&kind.as_str().to_ascii_uppercase()), None);
            assert_eq!(ResourceKind::parse(&format!("{kind} ")), None);
        }
        for unknown in ["", "store-superuser", "../../etc", "containers", "secret"] {
            assert_eq!(ResourceKind::parse(unknown), None, "{unknown:?}");
        }
        assert_eq!(ResourceKind::listed(), "`container`, `file`, `network`, `service`, `volume`");
    }
}
