"""What the tests share: a context as the scenarios' defaults make it, and a fresh fake host."""

from __future__ import annotations

from typing import Any

from . import fake_bindings
from .fake_bindings import types as t

CATALOGUE = "https://git.mesh.test/catalogue.git"


def manifest(module: str = "postgres", **fields: Any) -> Any:
    """A parsed manifest as the host hands it over: empty but for ``fields``."""
    fields.setdefault("secrets", ["superuser"])
    empty = dict(name=module, containers=[], bus_subjects=[], bus_users="", adopts=[],
                 grants=t.Grants(credentials=[], inspect=[], fetch=[]))
    return t.Manifest(**{**empty, **fields})


def context(module: str = "postgres", manifest_: Any = None, foundation: Any = None, source: bool = True) -> Any:
    return t.Context(
        module=module,
        manifest=manifest_ if manifest_ is not None else manifest(module),
        manifest_bytes=b'{"name": "%s"}' % module.encode(),
        foundation=list(foundation or []),
        options=t.Options(
            node="node-1",
            catalog_source=t.CatalogSource(repository=CATALOGUE, ref=None) if source else None,
            wait_seconds=120,
        ),
    )


def container(id: str, name: str, image: str) -> Any:
    return t.BundleResource_Container(t.Container(id=id, name=name, image=image, volumes=[]))


def host() -> fake_bindings.FakeHost:
    return fake_bindings.install()


__all__ = ["CATALOGUE", "container", "context", "host", "manifest", "t"]
