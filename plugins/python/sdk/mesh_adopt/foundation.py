"""The foundation bundle genesis produced: finding the servers a module adopts in it, and
refusing, in the operator's words, when the bundle or the manifest does not line up.

A bundle resource is the generated ``bundle-resource`` variant: ``BundleResource_Container``,
``BundleResource_File`` or ``BundleResource_Other``, its record in ``.value``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import case, refuse

__all__ = ["adopt_in_place", "container", "file_path", "identity", "kind", "mounts"]


def identity(resource: Any) -> str:
    """The bundle's identity for a resource."""
    return resource.value.id


def kind(resource: Any) -> str:
    """The bundle's kind for a resource, as a refusal would name it."""
    return {"Container": "container", "File": "file"}.get(case(resource)) or resource.value.kind


def container(foundation: Sequence[Any], id: str, what: str, module: str) -> Any:
    """The ``Container`` the bundle calls ``id``, refusing when it is absent
    (``foundation-missing``, listing what the bundle does declare) or is not a container
    (``foundation-not-a-container``). ``what`` names the server for the operator."""
    found = next((r for r in foundation if identity(r) == id), None)
    if found is not None and case(found) == "Container":
        return found.value
    if found is not None:
        raise refuse(
            "foundation-not-a-container",
            f"the foundation bundle's `{id}` is a {kind(found)}, not a container: "
            f"the `{module}` module has no {what} to adopt",
        )
    listed = ", ".join(identity(r) for r in foundation) or "nothing"
    raise refuse(
        "foundation-missing",
        f"the foundation bundle has no `{id}`, so there is no {what} for the `{module}` module to adopt; "
        f"the bundle declares: {listed}",
    )


def adopt_in_place(ctx: Any, id: str, what: str, different_image: str) -> Any:
    """The container the bundle calls ``id``, once the module's manifest is known to adopt it
    in place: it declares a container of the same name (else ``container-not-declared``),
    pinned to the same image (else ``image-differs``).

    The node-engine keys containers on their name and compares a spec digest, so any other
    name raises a second server beside the bundle's and any other image replaces it. Refuses
    naming both sides; ``what`` names the server for the operator ("store") and
    ``different_image`` says what another image would do and what to do instead, e.g. "a
    different one would tear the mesh's store down and raise a new one on its data. Pin both
    to one postgres image".
    """
    module = ctx.module
    raised = container(ctx.foundation, id, what, module)
    server = next((c for c in ctx.manifest.containers if c.name == raised.name), None)
    if server is None:
        raise refuse(
            "container-not-declared",
            f"the `{module}` module declares no container named `{raised.name}`, so nothing in it adopts the "
            f"foundation's {what}; its server container must carry the name genesis raised",
        )
    if server.image != raised.image:
        raise refuse(
            "image-differs",
            f"the `{module}` module's container `{raised.name}` is pinned to image `{server.image}`, but the "
            f"foundation's {what} runs `{raised.image}`. Adopting in place needs the same image: "
            f"{different_image}. Nothing has been registered",
        )
    return raised


def file_path(foundation: Sequence[Any], id: str) -> str:
    """The path of the file the bundle calls ``id``, or ``""`` when it declares none, so a
    comparison with the manifest's path names both sides either way."""
    return next((r.value.path for r in foundation if case(r) == "File" and r.value.id == id), "")


def mounts(volumes: Sequence[str]) -> dict:
    """Volumes (``host:inside[:opts]``) as a map from each inside path to its host path."""
    return {parts[1]: parts[0] for parts in (v.split(":", 2) for v in volumes) if len(parts) > 1}
