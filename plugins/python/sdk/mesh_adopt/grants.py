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

from . import manifest
from .manifest import Grants
from .types import Context, Refusal

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

    def ungranted(self, grants: Grants) -> list[str]:
        """What ``grants`` lacks for these reads, one line each: the read and the grant to add."""
        lines = [
            f'inspect container `{name}`: add "{name}" to `adopt.grants.inspect` in manifest.json'
            for name in self.inspects
            if not grants.allows_inspect(name)
        ]
        lines += [
            f'fetch `{url}`: add "{url}" to `adopt.grants.fetch` in manifest.json'
            for url in self.fetches
            if not grants.allows_fetch(url)
        ]
        return lines

    def check(self, ctx: Context) -> None:
        """For ``check``: refuses, listing every read the module's manifest does not grant and
        the grant that would allow it."""
        module = ctx.module
        ungranted = self.ungranted(manifest.read(module, ctx.manifest).adopt.grants)
        if ungranted:
            raise Refusal(
                f"the `{module}` module's adopt step reads what its manifest does not grant, so the host "
                "would deny it mid-adoption:\n - " + "\n - ".join(ungranted) + "\nNothing has been registered"
            )
