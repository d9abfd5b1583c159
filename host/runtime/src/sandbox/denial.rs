//! Why the host said no to a plugin's call, as a value: the grants' refusals, the plan's hold
//! on `adopt`, and the re-read before a push. A plugin is told its words (`host-error.denied`);
//! the run keeps what it is.

use std::fmt;

use mesh_adopt_manifest::command::{BUILD_WAIT, CommandError, manifest_remote};

/// What in a well-formed command goes beyond a plugin's own provider sequence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Beyond {
    /// The words are no command.
    NotACommand(CommandError),
    /// It names another module.
    Module(String),
    /// It names another node.
    Node(String),
    /// It registers another path than its own manifest's.
    Registers(String),
    /// It builds, and the operator gave no catalogue source.
    NoSource,
    /// It builds from another repository.
    Repository(String),
    /// It builds another ref.
    Ref(String),
    /// It accepts a secret its manifest does not declare.
    UndeclaredSecret(String),
    /// It accepts from another path than the secret's own.
    AcceptsFrom(String),
}

impl fmt::Display for Beyond {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Beyond::NotACommand(why) => why.fmt(f),
            Beyond::Module(module) => write!(f, "it names module `{module}`"),
            Beyond::Node(node) => write!(f, "it names node `{node}`"),
            Beyond::Registers(remote) => write!(f, "it registers `{remote}`"),
            Beyond::NoSource => f.write_str("no catalogue source was given to build from"),
            Beyond::Repository(repository) => write!(f, "it builds from `{repository}`"),
            Beyond::Ref(reference) => write!(f, "it builds ref `{reference}`"),
            Beyond::UndeclaredSecret(secret) => write!(f, "its manifest declares no secret `{secret}`"),
            Beyond::AcceptsFrom(from) => write!(f, "it accepts from `{from}`"),
        }
    }
}

/// Why a carry goes beyond what a plugin may carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CarryBeyond {
    /// A secret to `/accepting-<secret>` of a secret the manifest does not declare.
    UndeclaredSecret {
        /// The secret.
        secret: String,
        /// Where it was carried.
        remote: String,
    },
    /// A secret or bytes somewhere no carry goes.
    Elsewhere {
        /// Whether a secret (else bytes).
        secret: bool,
        /// Where.
        remote: String,
    },
    /// Bytes to its manifest's path that are not the catalogue's manifest.
    NotTheManifest {
        /// How many bytes were carried.
        carried: usize,
        /// How many the catalogue's manifest has.
        manifest: usize,
        /// Where the manifest is written.
        path: String,
    },
}

/// A call the host refused a plugin, as a value; its `Display` is what the plugin is told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Denial {
    /// An effect during `check`, which may only read.
    EffectInCheck {
        /// The effect, as a message quotes it (`tell push node-1`).
        effect: String,
    },
    /// A read its manifest does not grant.
    NotGranted {
        /// What was asked (`credential`, `inspect of container`, `fetch of`).
        what: &'static str,
        /// Its argument.
        name: String,
        /// The plugin's module.
        module: String,
        /// The grant's key under `adopt.grants`.
        key: &'static str,
        /// The manifest that grants.
        manifest: String,
    },
    /// A tell beyond the plugin's own provider sequence.
    BeyondSequence {
        /// The command, as a message quotes it.
        told: String,
        /// What goes beyond.
        why: Beyond,
        /// The plugin's module.
        module: String,
        /// The run's node.
        node: String,
        /// The ref it may build.
        reference: String,
        /// The repository it may build from, when the operator gave one.
        repository: Option<String>,
    },
    /// A carry beyond what a plugin may carry.
    Carry {
        /// Why.
        why: CarryBeyond,
        /// The plugin's module.
        module: String,
    },
    /// A genesis credential a container runs with, handed over by a module that does not
    /// declare it adopts that container with it, or as another secret than it declares.
    HandOver {
        /// The credential.
        credential: String,
        /// The container running with it.
        container: String,
        /// The plugin's module.
        module: String,
        /// The secret it would be accepted as.
        secret: String,
        /// The secret the module declares it hands it over as, when it declares one.
        declared: Option<String>,
    },
    /// A `secret accept` from a path this plugin carried no secret to in this call.
    AcceptsUncarried {
        /// The command, as a message quotes it.
        told: String,
        /// The path.
        from: String,
    },
    /// A `module add` of a path this plugin carried nothing to in this call.
    RegistersUncarried {
        /// The command, as a message quotes it.
        told: String,
        /// The path.
        remote: String,
    },
    /// During `adopt`, a tell that is not the plan's next command.
    NotNext {
        /// The command, as a message quotes it.
        told: String,
        /// The plan's next, as a message quotes it.
        next: String,
        /// Its place in the plan, counted from 1.
        number: usize,
        /// The plan's length.
        of: usize,
    },
    /// During `adopt`, a tell after the whole plan was told.
    BeyondPlan {
        /// The command, as a message quotes it.
        told: String,
        /// The plan's length.
        of: usize,
    },
    /// During `adopt`, a carry no command of the plan uses.
    CarryNotInPlan {
        /// Where it would go.
        remote: String,
    },
    /// The mesh, read again just before a push, was not as predicted (or could not be read).
    MeshMoved {
        /// What the re-read found.
        found: crate::effect::Reread,
    },
    /// A cap on the plugin's calls or record was reached: every call is denied from then on.
    Cap(Cap),
    /// A tell's arguments hold more bytes than `limits.tell_args_bytes`.
    TellBytes {
        /// How many.
        size: usize,
        /// The limit.
        most: usize,
    },
    /// A tell has more arguments than `limits.tell_args_count`.
    TellCount {
        /// How many.
        count: usize,
        /// The limit.
        most: usize,
    },
    /// The call's arguments carry a secret's value.
    CarriesSecret,
    /// A handle that is no secret this plugin holds.
    NotASecret {
        /// What the handle table said.
        table: String,
    },
    /// The mesh refused a command of this run's for its lock: another run holds the mesh now,
    /// so nothing more of this run's goes out.
    LockBroken(crate::model::lock::LockBroken),
}

/// A cap on what a plugin does in one export call, once reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cap {
    /// `limits.host_calls`.
    HostCalls(usize),
    /// `limits.record_bytes`.
    RecordBytes(usize),
}

impl fmt::Display for Cap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cap::HostCalls(most) => {
                write!(f, "it made more than {most} host calls in one export call (limits.host_calls)")
            }
            Cap::RecordBytes(most) => {
                write!(f, "its run recorded more than {most} bytes of calls and lines (limits.record_bytes)")
            }
        }
    }
}

impl fmt::Display for Denial {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Denial::EffectInCheck { effect } => {
                write!(f, "`{effect}` changes the mesh, and `check` may only read: move it to `adopt`")
            }
            Denial::NotGranted { what, name, module, key, manifest } => write!(
                f,
                "{what} `{name}` is not granted to the `{module}` plugin: a catalogue grants it by listing it in \
                 `adopt.grants.{key}` of {manifest}"
            ),
            Denial::BeyondSequence { told, why, module: m, node: n, reference, repository } => write!(
                f,
                "`tell {told}` is beyond what a plugin may tell ({why}): the `{m}` plugin may tell only its own \
                 provider sequence (module add {}, build {} --path modules/{m} --ref {reference} --wait \
                 {BUILD_WAIT}, module issue {m} --node {n}, assign {n} {m}, prepare {n} {m}, secret accept {n} {m} \
                 <a secret its manifest declares> --from /accepting-<that secret>, push {n}); no grant widens this",
                manifest_remote(m),
                repository.as_deref().unwrap_or("<the catalogue source>"),
            ),
            Denial::Carry { why, module: m } => {
                match why {
                    CarryBeyond::UndeclaredSecret { secret, remote } => write!(
                        f,
                        "the `{m}` module's manifest declares no secret `{secret}`, so nothing of it would accept \
                         `{remote}`: a secret is carried only to `/accepting-<a secret the manifest declares>`"
                    )?,
                    CarryBeyond::Elsewhere { secret, remote } => write!(
                        f,
                        "carrying {} to `{remote}` is beyond what a plugin may carry",
                        if *secret { "a secret" } else { "bytes" }
                    )?,
                    CarryBeyond::NotTheManifest { carried, manifest, path } => write!(
                        f,
                        "these {carried} bytes are not the catalogue's manifest of `{m}` ({manifest} bytes, {path}): \
                         a plugin may register only the manifest the catalogue ships"
                    )?,
                }
                write!(
                    f,
                    ": the `{m}` plugin may carry only its catalogue manifest to `{}` and secrets to \
                     `/accepting-<name>`; no grant widens this",
                    manifest_remote(m)
                )
            }
            Denial::HandOver { credential, container, module, secret, declared: Some(declared) } => write!(
                f,
                "`{credential}` is the genesis credential `{container}` runs with, and the `{module}` module declares \
                 it hands it over as its secret `{declared}`, not `{secret}`"
            ),
            Denial::HandOver { credential, container, module, secret, declared: None } => write!(
                f,
                "`{credential}` is the genesis credential `{container}` runs with: only the module that declares it \
                 adopts `{container}` with it (`adopts[].credential` in its manifest) may hand it to the control \
                 plane as a secret; the `{module}` module may read it, not accept it as its secret `{secret}`"
            ),
            Denial::AcceptsUncarried { told, from } => write!(
                f,
                "`tell {told}` accepts `{from}`, and this plugin carried no secret there: a module accepts only a \
                 secret it carried itself"
            ),
            Denial::RegistersUncarried { told, remote } => write!(
                f,
                "`tell {told}` registers `{remote}`, and this plugin carried nothing there in this call: a module \
                 registers only the manifest it carried itself"
            ),
            Denial::NotNext { told, next, number, of } => write!(
                f,
                "`tell {told}` is not the plan's next command: the plan `check` made says `tell {next}` next \
                 (command {number} of {of}); `adopt` tells only its plan, in order"
            ),
            Denial::BeyondPlan { told, of } => write!(
                f,
                "`tell {told}` is beyond the plan: the plan `check` made has {of} commands, all told; `adopt` tells \
                 only its plan"
            ),
            Denial::CarryNotInPlan { remote } => write!(
                f,
                "a carry to `{remote}` is used by no command of the plan `check` made (only its `module add` and \
                 `secret accept` commands take what was carried); `adopt` carries only what its plan uses"
            ),
            Denial::MeshMoved { found } => match &found.unseen {
                Some(why) => write!(f, "the host could not read the mesh again before this push: {why}"),
                None => write!(
                    f,
                    "the host read the mesh again before this push and it is not as predicted ({}): another run or \
                     an operator may be at work on it",
                    found.moved.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
                ),
            },
            Denial::Cap(cap) => cap.fmt(f),
            Denial::TellBytes { size, most } => {
                write!(f, "the arguments are {size} bytes; a tell may carry at most {most} (limits.tell_args_bytes)")
            }
            Denial::TellCount { count, most } => {
                write!(f, "the tell has {count} arguments; a tell may have at most {most} (limits.tell_args_count)")
            }
            Denial::CarriesSecret => f.write_str(
                "its arguments carry a secret's value (redacted); secrets travel only by `carry` of a secret handle",
            ),
            Denial::NotASecret { table } => write!(f, "not a secret this plugin holds: {table}"),
            Denial::LockBroken(broken) => broken.fmt(f),
        }
    }
}
