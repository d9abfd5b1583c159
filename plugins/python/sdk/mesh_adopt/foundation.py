"""The foundation bundle genesis produced: finding the servers a module adopts in it, and
refusing, in the operator's words, when the bundle or the manifest does not line up."""

from __future__ import annotations

from collections.abc import Sequence

from . import manifest
from .types import BundleResource, Container, Context, File, Refusal

__all__ = ["adopt_in_place", "container", "file_path", "identity", "kind"]


def identity(resource: BundleResource) -> str:
    """The bundle's identity for a resource."""
    return resource.id


def kind(resource: BundleResource) -> str:
    """The bundle's kind for a resource, as a refusal would name it."""
    if isinstance(resource, Container):
        return "container"
    if isinstance(resource, File):
        return "file"
    return resource.kind


def container(foundation: Sequence[BundleResource], id: str, what: str, module: str) -> Container:
    """Finds the container the bundle calls ``id``, refusing when it is absent (listing what
    the bundle does declare) or is not a container. ``what`` names the server for the
    operator."""
    found = next((r for r in foundation if identity(r) == id), None)
    if isinstance(found, Container):
        return found
    if found is not None:
        raise Refusal(
            f"the foundation bundle's `{id}` is a {kind(found)}, not a container: "
            f"the `{module}` module has no {what} to adopt"
        )
    listed = ", ".join(identity(r) for r in foundation) or "nothing"
    raise Refusal(
        f"the foundation bundle has no `{id}`, so there is no {what} for the `{module}` module to adopt; "
        f"the bundle declares: {listed}"
    )


def adopt_in_place(ctx: Context, id: str, what: str, different_image: str) -> Container:
    """The container the bundle calls ``id``, once the module's manifest is known to adopt it
    in place: it declares a container of the same name, pinned to the same image.

    The node-engine keys containers on their name and compares a spec digest, so any other
    name raises a second server beside the bundle's and any other image replaces it. Refuses
    naming both sides; ``what`` names the server for the operator ("store") and
    ``different_image`` says what another image would do and what to do instead, e.g. "a
    different one would tear the mesh's store down and raise a new one on its data. Pin both
    to one postgres image".
    """
    module = ctx.module
    declared = manifest.read(module, ctx.manifest)
    raised = container(ctx.foundation, id, what, module)
    server = next((c for c in declared.containers() if c.name == raised.name), None)
    if server is None:
        raise Refusal(
            f"the `{module}` module declares no container named `{raised.name}`, so nothing in it adopts the "
            f"foundation's {what}; its server container must carry the name genesis raised"
        )
    if server.image != raised.image:
        raise Refusal(
            f"the `{module}` module's container `{raised.name}` is pinned to image `{server.image}`, but the "
            f"foundation's {what} runs `{raised.image}`. Adopting in place needs the same image: "
            f"{different_image}. Nothing has been registered"
        )
    return raised


def file_path(foundation: Sequence[BundleResource], id: str) -> str:
    """The path of the file the bundle calls ``id``, or ``""`` when it declares none, so a
    comparison with the manifest's path names both sides either way."""
    return next((r.path for r in foundation if isinstance(r, File) and r.id == id), "")

