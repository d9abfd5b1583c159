"""The sequence every provider module is installed by: carry and register the manifest,
build it from the catalogue source, issue its account, assign and prepare it on the node, run
the module's own step, push.

The plan ``check`` shows and the calls ``adopt`` makes come from the same :class:`Provider`,
so the plan an operator reviews is the sequence that runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from . import host
from .command import (
    BUILD_TIMEOUT_SECONDS,
    DEFAULT_REF,
    Assign,
    Build,
    Command,
    ModuleAdd,
    ModuleIssue,
    Prepare,
    Push,
    SecretAccept,
    accepting_remote,
    manifest_remote,
)
from .types import Context, Refusal

__all__ = ["Provider", "accept_command", "tell_command"]


class Provider:
    """One module's provider sequence, for its ``check`` (:meth:`commands`) and its ``adopt``
    (:meth:`install`)."""

    def __init__(self, ctx: Context, build_note: str = "") -> None:
        """``build_note`` tells the operator what the build is for, e.g. that the server is
        adopted; it follows ``building <module>`` on the line said before the build."""
        self._ctx = ctx
        self._build_note = build_note

    @property
    def _module(self) -> str:
        return self._ctx.module

    @property
    def _node(self) -> str:
        return self._ctx.options.node

    def manifest_remote(self) -> str:
        """Where the manifest is carried to in the control plane."""
        return manifest_remote(self._module)

    def _build_command(self) -> Build:
        source = self._ctx.options.catalog_source
        if source is None:
            raise Refusal(
                f"the `{self._module}` module must be built, and no catalogue source was given to build it from "
                "(--catalog-source REPO[@REF]): the catalogue checkout is only where its manifest is read; "
                "a builder clones the catalogue repository"
            )
        return Build(source.repository, self._module, DEFAULT_REF if source.ref is None else source.ref)

    def _before_own_step(self) -> tuple[ModuleAdd, Build, ModuleIssue, Assign, Prepare]:
        """The sequence's commands before the module's own step, in order."""
        module, node = self._module, self._node
        return (
            ModuleAdd(self.manifest_remote()),
            self._build_command(),
            ModuleIssue(module, node),
            Assign(node, module),
            Prepare(node, module),
        )

    def commands(self, before_push: Sequence[Sequence[str]] = ()) -> list[list[str]]:
        """The commands the sequence tells, in order, with ``before_push`` where the module's
        own step goes: the plan's ``commands``. Refuses as :meth:`install` would when there is
        nothing to build from."""
        commands = [c.words() for c in self._before_own_step()]
        commands.extend(list(words) for words in before_push)
        commands.append(Push(self._node).words())
        return commands

    def install(self, before_push: Callable[[], None] = lambda: None) -> None:
        """Runs the sequence; ``before_push`` is the module's own step, run just before the
        push. Any host call that fails ends it with a refusal naming the call, except the
        account: a module that declares nothing to say on the bus is refused one, and that is
        no reason to stop."""
        m, n = self._module, self._node
        add, build, issue, assign, prepare = self._before_own_step()
        host.carry_bytes(f"{m}-module.json", self._ctx.manifest, self.manifest_remote())
        tell_command(add)
        host.say(f"registered {m}")

        host.say(f"building {m} {self._build_note}".rstrip())
        host.tell_within(build.words(), BUILD_TIMEOUT_SECONDS)

        try:
            tell_command(issue)
        except host.HostCallError:
            host.say(f"no account for {m}: it declares nothing to say on the bus")
        else:
            host.say(f"account issued for {m}")

        tell_command(assign)
        tell_command(prepare)
        host.say(f"prepared {m} on {n}")
        before_push()
        tell_command(Push(n))
        host.say(f"pushed {n}")


def accept_command(ctx: Context, secret: str) -> SecretAccept:
    """The command that accepts ``secret`` into the module from where it was carried; what a
    plan lists before the push and what :meth:`mesh_adopt.handover.Handover.deliver` tells."""
    return SecretAccept(ctx.options.node, ctx.module, secret, accepting_remote(secret))


def tell_command(command: Command) -> str:
    """Tells one command of the vocabulary with the ordinary timeout."""
    return host.tell(command.words())
