"""What a module's ``adopt`` will read on the node, checked in ``check`` against what its
manifest grants.

The host denies an inspect or a fetch the manifest's ``adopt.grants`` does not list, but
``check`` does neither, so without this a missing grant shows only mid-adoption: after the
push, say, as a wait that never sees its server. Declaring the reads lets ``check`` refuse
before anything is registered, naming the grant to add::

    Reads().inspect("mesh-bus").fetch("http://127.0.0.1:8222/healthz").check(ctx)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from . import host, refuse

__all__ = ["Reads"]


@dataclass
class Reads:
    """The containers a module's ``adopt`` inspects and the URLs it fetches."""

    inspects: list[str] = field(default_factory=list)
    fetches: list[str] = field(default_factory=list)

    def inspect(self, name: str) -> Reads:
        """``adopt`` inspects the container ``name``; returns the reads, to chain."""
        self.inspects.append(name)
        return self

    def fetch(self, url: str) -> Reads:
        """``adopt`` fetches ``url``; returns the reads, to chain."""
        self.fetches.append(url)
        return self

    def ungranted(self) -> list[str]:
        """What the manifest's grants lack for these reads, one line each: the read and the
        grant to add. The host answers, by the rules it will hold ``adopt``'s reads to."""
        return host.ungranted(self.inspects, self.fetches)

    def check(self, ctx: Any) -> None:
        """For ``check``: refuses (``not-granted``), listing every read the module's manifest
        does not grant and the grant that would allow it."""
        ungranted = self.ungranted()
        if ungranted:
            raise refuse(
                "not-granted",
                f"the `{ctx.module}` module's adopt step reads what its manifest does not grant, so the host "
                "would deny it mid-adoption:\n - " + "\n - ".join(ungranted) + "\nNothing has been registered",
            )
