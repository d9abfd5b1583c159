"""The control-plane commands a plugin may tell, as one typed vocabulary: the same one the
host's grants decide on and its simulated control plane carries out, so a command a plugin
builds here is read there exactly as meant.

Every name a command carries (node, module, secret, ref, repository) is a checked word: not
empty, no leading ``-`` (it could be read as an option), no ``..``, no whitespace or control
characters.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional, Union

__all__ = [
    "BUILD_TIMEOUT_SECONDS",
    "BUILD_WAIT",
    "DEFAULT_REF",
    "Assign",
    "Build",
    "Command",
    "CommandError",
    "ModuleAdd",
    "ModuleIssue",
    "Prepare",
    "Push",
    "SecretAccept",
    "accepting_remote",
    "check_word",
    "manifest_remote",
    "parse",
]

#: The ref built when the operator names none.
DEFAULT_REF = "main"

#: The build's own wait, passed to the control plane; the only one a plan may give.
BUILD_WAIT = "1200s"

#: How long a plugin lets the build command take: longer than the build's own wait, so the
#: control plane reports its own timeout rather than being cut off mid-answer.
BUILD_TIMEOUT_SECONDS = 1500


def manifest_remote(module: str) -> str:
    """Where a module's manifest is carried in the control plane."""
    return f"/{module}-module.json"


def accepting_remote(secret: str) -> str:
    """Where a secret is carried before the module accepts it."""
    return f"/accepting-{secret}"


class _Words:
    """What every command shares: it is told as its words and shown joined by spaces. A
    command that acts on a module or a node has a ``module`` or ``node`` field."""

    def words(self) -> list[str]:  # pragma: no cover - every command defines it
        """The command's words, as it is told."""
        raise NotImplementedError

    def __str__(self) -> str:
        return " ".join(self.words())


@dataclass(frozen=True)
class ModuleAdd(_Words):
    """``module add /<module>-module.json``: registers the manifest carried there."""

    remote: str

    def words(self) -> list[str]:
        """The command's words, as it is told."""
        return ["module", "add", self.remote]


@dataclass(frozen=True)
class Build(_Words):
    """``build <repository> --path modules/<module> --ref <ref> --wait 1200s``."""

    repository: str
    module: str
    reference: str

    def words(self) -> list[str]:
        """The command's words, as it is told."""
        return [
            "build",
            self.repository,
            "--path",
            f"modules/{self.module}",
            "--ref",
            self.reference,
            "--wait",
            BUILD_WAIT,
        ]


@dataclass(frozen=True)
class ModuleIssue(_Words):
    """``module issue <module> --node <node>``: a bus account; refused for a module with none."""

    module: str
    node: str

    def words(self) -> list[str]:
        """The command's words, as it is told."""
        return ["module", "issue", self.module, "--node", self.node]


@dataclass(frozen=True)
class Assign(_Words):
    """``assign <node> <module>``."""

    node: str
    module: str

    def words(self) -> list[str]:
        """The command's words, as it is told."""
        return ["assign", self.node, self.module]


@dataclass(frozen=True)
class Prepare(_Words):
    """``prepare <node> <module>``."""

    node: str
    module: str

    def words(self) -> list[str]:
        """The command's words, as it is told."""
        return ["prepare", self.node, self.module]


@dataclass(frozen=True)
class SecretAccept(_Words):
    """``secret accept <node> <module> <secret> --from /accepting-<secret>``."""

    node: str
    module: str
    secret: str
    source: str

    def words(self) -> list[str]:
        """The command's words, as it is told."""
        return ["secret", "accept", self.node, self.module, self.secret, "--from", self.source]


@dataclass(frozen=True)
class Push(_Words):
    """``push <node>``."""

    node: str

    def words(self) -> list[str]:
        """The command's words, as it is told."""
        return ["push", self.node]


#: One control-plane command of the provider sequence.
Command = Union[ModuleAdd, Build, ModuleIssue, Assign, Prepare, SecretAccept, Push]


class CommandError(ValueError):
    """Why words are not a command of the vocabulary; the text says which part is wrong."""


def _is_control(c: str) -> bool:
    return unicodedata.category(c) == "Cc"


def _visible(text: str) -> str:
    """``text`` with control characters shown as escapes, so a message quoting it stays one line."""
    named = {"\t": "\\t", "\r": "\\r", "\n": "\\n"}
    return "".join(named.get(c, f"\\u{{{ord(c):x}}}") if _is_control(c) else c for c in text)


def _bad(what: str, value: str, why: str) -> CommandError:
    return CommandError(f"its {what} `{_visible(value)}` {why}")


def _fixed(what: str, value: str, expected: str) -> CommandError:
    return CommandError(f"its {what} is `{_visible(value)}`; it must be `{expected}`")


def check_word(what: str, value: str) -> None:
    """Checks a name a command carries, raising :class:`CommandError` that says what is wrong."""
    if not value:
        raise _bad(what, value, "is empty")
    if value.startswith("-"):
        raise _bad(what, value, "starts with `-`, so it could be read as an option")
    if ".." in value:
        raise _bad(what, value, "contains `..`")
    if any(c.isspace() or _is_control(c) for c in value):
        raise _bad(what, value, "contains whitespace or a control character")


def parse(args: Sequence[str]) -> Command:
    """Reads words as a command, checking every name in them; raises :class:`CommandError`."""
    a = list(args)
    command: Command
    match a:
        case ["module", "add", remote]:
            command = ModuleAdd(remote)
        case ["build", repository, "--path", path, "--ref", reference, "--wait", wait]:
            if not path.startswith("modules/"):
                raise _fixed("build path", path, "modules/<module>")
            if wait != BUILD_WAIT:
                raise _fixed("build wait", wait, BUILD_WAIT)
            command = Build(repository, path.removeprefix("modules/"), reference)
        case ["module", "issue", module, "--node", node]:
            command = ModuleIssue(module, node)
        case ["assign", node, module]:
            command = Assign(node, module)
        case ["prepare", node, module]:
            command = Prepare(node, module)
        case ["secret", "accept", node, module, secret, "--from", source]:
            command = SecretAccept(node, module, secret, source)
        case ["push", node]:
            command = Push(node)
        case _:
            raise CommandError(
                "it is none of: module add, build, module issue, assign, prepare, secret accept, push"
            )
    _check_words(command)
    return command


def _check_words(command: Command) -> None:
    match command:
        case ModuleAdd(remote):
            check_word("manifest path", remote)
        case Build(repository, module, reference):
            check_word("repository", repository)
            check_word("module", module)
            check_word("ref", reference)
        case ModuleIssue(module, node):
            check_word("node", node)
            check_word("module", module)
        case Assign(node, module) | Prepare(node, module):
            check_word("node", node)
            check_word("module", module)
        case SecretAccept(node, module, secret, source):
            check_word("node", node)
            check_word("module", module)
            check_word("secret", secret)
            check_word("source path", source)
        case Push(node):
            check_word("node", node)
