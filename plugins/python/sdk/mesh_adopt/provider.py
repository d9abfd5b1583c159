"""The sequence every provider module is installed by: carry and register the manifest,
build it from the catalogue source, issue its account, assign and prepare it on the node, run
the module's own step, push.

The plan ``check`` shows and the calls ``adopt`` makes come from the same :class:`Provider`,
so the plan an operator reviews is the sequence that runs. Commands are the contract's
``command`` variant, as componentize-py generates it (``Command_Push("node-1")``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from . import generated, host, refuse

__all__ = ["BUILD_TIMEOUT_SECONDS", "DEFAULT_REF", "Provider", "accept_command"]

#: The ref built when the operator names none.
DEFAULT_REF = "main"

#: How long a plugin lets the build command take: longer than the build's own wait, so the
#: control plane reports its own timeout rather than being cut off mid-answer.
BUILD_TIMEOUT_SECONDS = 1500


class Provider:
    """One module's provider sequence, for its ``check`` (:meth:`commands`) and its ``adopt``
    (:meth:`install`)."""

    def __init__(self, ctx: Any, build_note: str = "") -> None:
        """``build_note`` tells the operator what the build is for, e.g. that the server is
        adopted; it follows ``building <module>`` on the line said before the build."""
        self._ctx = ctx
        self._build_note = build_note
        self._module = ctx.module
        self._node = ctx.options.node

    def manifest_remote(self) -> str:
        """Where the manifest is carried to in the control plane."""
        return f"/{self._module}-module.json"

    def _before_own_step(self) -> tuple[Any, ...]:
        """The sequence's commands before the module's own step, in order; refuses
        ``no-catalogue-source`` when there is nothing to build from."""
        t, module, node = generated("types"), self._module, self._node
        source = self._ctx.options.catalog_source
        if source is None:
            raise refuse(
                "no-catalogue-source",
                f"the `{module}` module must be built, and no catalogue source was given to build it from "
                "(--catalog-source REPO[@REF]): the catalogue checkout is only where its manifest is read; "
                "a builder clones the catalogue repository",
            )
        ref = DEFAULT_REF if source.ref is None else source.ref
        return (
            t.Command_ModuleAdd(self.manifest_remote()),
            t.Command_Build(t.Build(repository=source.repository, module=module, ref=ref)),
            t.Command_ModuleIssue(t.Placement(node=node, module=module)),
            t.Command_Assign(t.Placement(node=node, module=module)),
            t.Command_Prepare(t.Placement(node=node, module=module)),
        )

    def commands(self, before_push: Sequence[Any] = ()) -> list[Any]:
        """The commands the sequence tells, in order, with ``before_push`` where the module's
        own step goes: the plan's ``commands``. Refuses as :meth:`install` would when there is
        nothing to build from."""
        return [*self._before_own_step(), *before_push, generated("types").Command_Push(self._node)]

    def install(self, before_push: Callable[[], None] = lambda: None) -> None:
        """Runs the sequence; ``before_push`` is the module's own step, run just before the
        push. Any host call that fails ends it with a refusal naming the call, except the
        account: a module that declares nothing to say on the bus is refused one, and that is
        no reason to stop."""
        m, n = self._module, self._node
        add, build, issue, assign, prepare = self._before_own_step()
        host.carry_bytes(f"{m}-module.json", bytes(self._ctx.manifest_bytes), self.manifest_remote())
        host.tell(add)
        host.say(f"registered {m}")

        host.say(f"building {m} {self._build_note}".rstrip())
        host.tell_within(build, BUILD_TIMEOUT_SECONDS)

        try:
            host.tell(issue)
        except host.HostCallError:
            host.say(f"no account for {m}: it declares nothing to say on the bus")
        else:
            host.say(f"account issued for {m}")

        host.tell(assign)
        host.tell(prepare)
        host.say(f"prepared {m} on {n}")
        before_push()
        host.tell(generated("types").Command_Push(n))
        host.say(f"pushed {n}")


def accept_command(ctx: Any, secret: str) -> Any:
    """The command that accepts ``secret`` into the module from where it was carried
    (``/accepting-<secret>``); what a plan lists before the push and what
    :meth:`mesh_adopt.handover.Handover.deliver` tells."""
    t = generated("types")
    return t.Command_SecretAccept(
        t.SecretAccept(node=ctx.options.node, module=ctx.module, secret=secret, source=f"/accepting-{secret}")
    )
