"""The shapes of the contract (`mesh:adopt@0.1.0`'s `types` interface) as plain Python values.

A plugin decides from a :class:`Context` and answers with a :class:`Plan` or a
:class:`Report`, or raises a :class:`Refusal`. These are the SDK's own dataclasses rather than
the generated bindings' so that a plugin (and its tests) can build and compare them without
componentize-py; :func:`mesh_adopt.export` converts between the two at the component's edge.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Union

__all__ = [
    "BundleResource",
    "CatalogSource",
    "Container",
    "Context",
    "File",
    "Options",
    "Other",
    "Plan",
    "Refusal",
    "Report",
    "refuse",
]


@dataclass
class Container:
    """A container the foundation bundle declares, as genesis raised it: what a module adopts
    in place, so its name and image are what the node-engine keys on."""

    #: The bundle's identity for it, e.g. ``store`` or ``broker``.
    id: str
    #: The container's name on the node; the node-engine keys on it.
    name: str
    #: The image it was raised from.
    image: str
    #: Its mounts, each ``host:inside[:opts]``.
    volumes: list[str] = field(default_factory=list)


@dataclass
class File:
    """A file the foundation bundle declares, such as the bus's first user list, so a module
    can check it keeps using the same one."""

    #: The bundle's identity for it, e.g. ``bus-accounts``.
    id: str
    #: Where the file lives on the node.
    path: str


@dataclass
class Other:
    """A bundle resource of a kind plugins need not understand, kept so refusals can name it."""

    #: The bundle's identity for it.
    id: str
    #: Its kind as the bundle spells it.
    kind: str


#: One resource of the foundation bundle, typed so plugins do not re-parse the bundle.
BundleResource = Union[Container, File, Other]


@dataclass
class CatalogSource:
    """Where a builder clones the catalogue from; distinct from the local checkout the host
    reads manifests out of, so a build never depends on the operator's working tree."""

    #: The repository a builder clones.
    repository: str
    #: The ref to build; the plugin picks the default when absent.
    ref: Optional[str] = None


@dataclass
class Options:
    """The operator's choices for this run, which shape the commands a plugin tells."""

    #: The node the module is assigned to and pushed on.
    node: str
    #: Where the module is built from; absent when the operator gave none.
    catalog_source: Optional[CatalogSource] = None
    #: How long to wait for the node to settle after a push, in seconds.
    wait_seconds: int = 120


@dataclass
class Context:
    """Everything a plugin decides from; the same value reaches ``check`` and ``adopt``, so
    the plan reviewed and the adoption run are decided from the same facts."""

    #: The catalogue module this plugin adopts, e.g. ``postgres``.
    module: str
    #: The module's ``manifest.json``, byte for byte, so the plugin carries exactly what the
    #: catalogue ships.
    manifest: bytes
    #: The foundation bundle genesis produced.
    foundation: list[BundleResource]
    #: The operator's options.
    options: Options


@dataclass
class Plan:
    """What ``adopt`` would do, for an operator to review before anything happens."""

    #: What will be adopted in place, kept or changed, in the plugin's words.
    summary: list[str]
    #: The control-plane commands ``adopt`` will tell, in order.
    commands: list[list[str]]


@dataclass
class Report:
    """What ``adopt`` did: one line for the operator's summary."""

    summary: str


class Refusal(Exception):
    """Why a plugin will not (or could not) adopt its module.

    Raised rather than returned, so a refusal from any depth (a host call, a manifest read, a
    wait) ends ``check`` or ``adopt`` with its own words; the export turns it into the
    contract's ``refusal``. The message names both sides of any difference and says what was
    and was not done.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self._message = message

    @property
    def message(self) -> str:
        """The refusal's text, exactly as the operator reads it."""
        return self._message

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Refusal) and other.message == self.message

    def __hash__(self) -> int:
        return hash(self.message)


def refuse(message: str) -> Refusal:
    """Builds a refusal from a message, to ``raise``: a plugin refuses instead of failing, so
    the operator reads the reason rather than a trap."""
    return Refusal(message)
