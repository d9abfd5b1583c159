"""What the tests share: a context as the scenarios' defaults make it, and a fresh fake host."""

from __future__ import annotations

import json
from typing import Any

from . import fake_bindings

from mesh_adopt import CatalogSource, Container, Context, File, Options, Other

CATALOGUE = "https://git.mesh.test/catalogue.git"


def context(
    module: str = "postgres",
    manifest: Any = None,
    foundation: Any = None,
    source: bool = True,
) -> Context:
    if manifest is None:
        manifest = {"secrets": ["superuser"]}
    return Context(
        module=module,
        manifest=manifest if isinstance(manifest, bytes) else json.dumps(manifest).encode(),
        foundation=list(foundation or []),
        options=Options(
            node="node-1",
            catalog_source=CatalogSource(CATALOGUE) if source else None,
            wait_seconds=120,
        ),
    )


def host() -> fake_bindings.FakeHost:
    return fake_bindings.install()


__all__ = ["CATALOGUE", "Container", "File", "Other", "context", "host"]
