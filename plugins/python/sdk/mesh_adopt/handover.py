"""A genesis credential handed over to the module as one of its secrets: carried to
``/accepting-<secret>``, then accepted, just before the push.

A server genesis raised already has its password; the mesh cannot make up that value, and a
push without it would seal random bytes where the working one has to be. One
:class:`Handover` gives the plan its command, ``check`` its refusals and ``adopt`` its
before-push step, so what the operator reviews is what runs::

    def superuser(ctx):
        return Handover(ctx, "superuser", "store-superuser", "the store's superuser")

    def check(self, ctx):
        handover = superuser(ctx)
        handover.check()
        return Plan(
            summary=[handover.summary()],
            commands=Provider(ctx).commands([handover.command()]),
        )

    def adopt(self, ctx):
        Provider(ctx).install(superuser(ctx).deliver)
        ...
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import Refusal, host, refuse
from .provider import accept_command

__all__ = ["Handover"]


@dataclass(frozen=True)
class Handover:
    """One genesis credential to be accepted as one module secret.

    The genesis credential ``credential`` (granted in the manifest's
    ``adopt.grants.credentials``) becomes the module's secret ``secret`` (declared in its
    ``secrets``); ``what`` names it for the operator, e.g. "the store's superuser".
    """

    ctx: Any
    secret: str
    credential: str
    what: str

    def command(self) -> Any:
        """The ``secret accept …`` command, as the plan lists it before the push."""
        return accept_command(self.ctx, self.secret)

    def summary(self) -> str:
        """The plan's line for it."""
        return f"carry genesis credential `{self.credential}` in as secret `{self.secret}` before the push"

    def check(self) -> None:
        """For ``check``: refuses unless the manifest declares the secret (the node would not
        take it otherwise) and the host can hand the credential over now. The credential is
        asked for, which ``check`` may do, so a credential the manifest does not grant is
        refused here with the host's words on how to grant it."""
        module = self.ctx.module
        declared = self.ctx.manifest.secrets
        if self.secret not in declared:
            listed = ", ".join(f"`{s}`" for s in declared) or "none"
            raise refuse(
                "secret-not-declared",
                f"the `{module}` module's manifest declares no secret `{self.secret}` (it declares {listed}), so "
                f"the node would not accept {self.what} as one of its secrets: add \"{self.secret}\" to "
                "`secrets` in its manifest.json. Nothing has been registered"
            )
        with self._credential():
            pass

    def deliver(self) -> None:
        """For ``adopt``, as the provider sequence's before-push step: carries the credential
        in and accepts it, then says so."""
        with self._credential() as handle:
            accept = accept_command(self.ctx, self.secret)
            host.carry_secret(handle, accept.value.source)
            host.tell(accept)
            host.say(f"accepted {self.secret}: {self.what}, as genesis made it")

    def _credential(self) -> Any:
        try:
            return host.credential(self.credential)
        except host.HostCallError as error:
            raise self._missing(error) from None

    def _missing(self, error: host.HostCallError) -> Refusal:
        """The refusal for a credential the host cannot hand over."""
        return refuse(
            "credential-unavailable",
            f"{self.what} (genesis credential `{self.credential}`) cannot be had ({error.reason()}), so the "
            f"`{self.ctx.module}` module would have nothing to open its server with, and the mesh cannot make "
            "up the one the server already has"
        )
