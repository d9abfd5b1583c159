"""A catalogue module's ``manifest.json``, as adoption rules read it.

The shape and the rules are the host's (fields left out are empty, a field given twice is
refused, ``adopt`` and its ``grants`` take no unknown fields), so a plugin and its host never
disagree on what a manifest says; ``${access:<id>}`` in a container's volumes resolves to that
access's path, as a node would mount it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any, Iterator, Optional

from . import urls
from .types import Refusal

__all__ = [
    "PLUGIN_FILE",
    "Access",
    "AdoptSection",
    "Grants",
    "Manifest",
    "ManifestResource",
    "ParseError",
    "mounts",
    "parse",
    "read",
]

#: The file a module's plugin ships as, beside its manifest, unless the manifest names another.
PLUGIN_FILE = "adopt.wasm"


@dataclass
class Grants:
    """What a catalogue grants its plugin beyond the host's defaults. Only reads can be
    granted: what a plugin may tell and carry is fixed by the host."""

    #: Genesis credentials it may carry in, by name.
    credentials: list[str] = field(default_factory=list)
    #: Containers it may inspect, by name.
    inspect: list[str] = field(default_factory=list)
    #: URLs it may fetch: exact, or a prefix ending in ``*``.
    fetch: list[str] = field(default_factory=list)

    def allows_credential(self, name: str) -> bool:
        """Whether a plugin may carry in the genesis credential ``name``."""
        return name in self.credentials

    def allows_inspect(self, name: str) -> bool:
        """Whether a plugin may inspect the container ``name``."""
        return name in self.inspect

    def allows_fetch(self, url: str) -> bool:
        """Whether a plugin may fetch ``url``: an exact grant, or a prefix grant it is plainly
        under (see :func:`mesh_adopt.urls.within_grant`)."""
        return any(urls.within_grant(grant, url) for grant in self.fetch)


@dataclass
class AdoptSection:
    """A manifest's ``adopt`` section: the catalogue author's word on the plugin."""

    #: The plugin's file, beside the manifest.
    plugin: str = PLUGIN_FILE
    #: The plugin's sha256, hex; when given, any other plugin is refused.
    sha256: Optional[str] = None
    #: The world the plugin targets, e.g. ``mesh:adopt/adopter@0.1.0``.
    world: Optional[str] = None
    #: Where the plugin's source is, relative to the manifest.
    source: Optional[str] = None
    #: What the plugin may read beyond the defaults.
    grants: Grants = field(default_factory=Grants)


@dataclass
class ManifestResource:
    """One resource a module declares."""

    #: The module's identity for it.
    id: str = ""
    #: ``container``, or another kind adoption does not look into (JSON ``type``).
    kind: str = ""
    #: For a container: its name on the node.
    name: str = ""
    #: For a container: its image.
    image: str = ""
    #: For a container: its mounts, ``host:inside[:opts]``, possibly naming accesses.
    volumes: list[str] = field(default_factory=list)


@dataclass
class Access:
    """A host path the module is given, referred to by id from its volumes."""

    id: str = ""
    path: str = ""


@dataclass
class Manifest:
    """A module manifest, as far as adoption reads it; fields it leaves out are empty."""

    #: The module's name.
    name: str = ""
    #: What it raises on a node.
    resources: list[ManifestResource] = field(default_factory=list)
    #: Named host paths its volumes refer to as ``${access:<id>}``.
    accesses: list[Access] = field(default_factory=list)
    #: Secrets the module declares; the node seals any not accepted before its push.
    secrets: list[str] = field(default_factory=list)
    #: Subjects it speaks on the bus (JSON ``bus-subjects``); a module with none is issued no
    #: account.
    bus_subjects: list[str] = field(default_factory=list)
    #: For a bus: the file its user list lives in (JSON ``bus-users``).
    bus_users: str = ""
    #: How the module's plugin ships and what it may do beyond the host's defaults.
    adopt: AdoptSection = field(default_factory=AdoptSection)

    def containers(self) -> Iterator[ManifestResource]:
        """The resources that are containers, in declaration order."""
        return (r for r in self.resources if r.kind == "container")

    def resolved_volumes(self, container: ManifestResource) -> list[str]:
        """A container's volumes with every ``${access:<id>}`` replaced by that access's path,
        accesses applied in the order the manifest lists them."""
        resolved = []
        for volume in container.volumes:
            for access in self.accesses:
                volume = volume.replace(f"${{access:{access.id}}}", access.path)
            resolved.append(volume)
        return resolved

    def resolved_containers(self) -> list[ManifestResource]:
        """The containers with their volumes resolved, as a node would raise them."""
        return [replace(c, volumes=self.resolved_volumes(c)) for c in self.containers()]


def mounts(volumes: list[str]) -> dict[str, str]:
    """Maps each inside path to the host path mounted there, from ``host:inside[:opts]``
    entries; an entry without an inside path is skipped, a later one for the same inside path
    wins."""
    at: dict[str, str] = {}
    for volume in volumes:
        parts = volume.split(":", 2)
        if len(parts) >= 2:
            at[parts[1]] = parts[0]
    return dict(sorted(at.items()))


class ParseError(ValueError):
    """Why bytes are not a module manifest: not JSON at all, JSON but not an object, or an
    object whose fields do not have a manifest's shape; the text starts with which."""


class _Shape(Exception):
    """A field of the wrong shape, in serde's words."""


class _Pairs(list):
    """A JSON object's members in document order, so repeats can be refused."""


_ASCII_WHITESPACE = b" \t\n\x0c\r"


def _unexpected(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean `{'true' if value else 'false'}`"
    if isinstance(value, int):
        return f"integer `{value}`"
    if isinstance(value, float):
        return f"floating point `{value!r}`"
    if isinstance(value, str):
        return f"string {json.dumps(value, ensure_ascii=False)}"
    if isinstance(value, _Pairs):
        return "map"
    return "sequence"


def _string(value: Any) -> str:
    if not isinstance(value, str):
        raise _Shape(f"invalid type: {_unexpected(value)}, expected a string")
    return value


def _optional_string(value: Any) -> Optional[str]:
    return None if value is None else _string(value)


def _strings(value: Any) -> list[str]:
    if not isinstance(value, list) or isinstance(value, _Pairs):
        raise _Shape(f"invalid type: {_unexpected(value)}, expected a sequence")
    return [_string(v) for v in value]


def _list_of(read: Any) -> Any:
    def reader(value: Any) -> list[Any]:
        if not isinstance(value, list) or isinstance(value, _Pairs):
            raise _Shape(f"invalid type: {_unexpected(value)}, expected a sequence")
        return [read(v) for v in value]

    return reader


def _struct(
    name: str, value: Any, fields: dict[str, tuple[str, Any]], deny_unknown: bool = False
) -> dict[str, Any]:
    """Reads an object into keyword arguments, as serde's derived ``Deserialize`` does."""
    if not isinstance(value, _Pairs):
        raise _Shape(f"invalid type: {_unexpected(value)}, expected struct {name}")
    seen: dict[str, Any] = {}
    for key, member in value:
        if key not in fields:
            if deny_unknown:
                expected = ", ".join(f"`{f}`" for f in fields)
                raise _Shape(f"unknown field `{key}`, expected one of {expected}")
            continue
        attribute, read = fields[key]
        if attribute in seen:
            raise _Shape(f"duplicate field `{key}`")
        seen[attribute] = read(member)
    return seen


def _grants(value: Any) -> Grants:
    return Grants(
        **_struct(
            "Grants",
            value,
            {"credentials": ("credentials", _strings), "inspect": ("inspect", _strings), "fetch": ("fetch", _strings)},
            deny_unknown=True,
        )
    )


def _adopt(value: Any) -> AdoptSection:
    return AdoptSection(
        **_struct(
            "AdoptSection",
            value,
            {
                "plugin": ("plugin", _string),
                "sha256": ("sha256", _optional_string),
                "world": ("world", _optional_string),
                "source": ("source", _optional_string),
                "grants": ("grants", _grants),
            },
            deny_unknown=True,
        )
    )


def _resource(value: Any) -> ManifestResource:
    return ManifestResource(
        **_struct(
            "ManifestResource",
            value,
            {
                "id": ("id", _string),
                "type": ("kind", _string),
                "name": ("name", _string),
                "image": ("image", _string),
                "volumes": ("volumes", _strings),
            },
        )
    )


def _access(value: Any) -> Access:
    return Access(**_struct("Access", value, {"id": ("id", _string), "path": ("path", _string)}))


def _manifest(value: Any) -> Manifest:
    return Manifest(
        **_struct(
            "ModuleManifest",
            value,
            {
                "name": ("name", _string),
                "resources": ("resources", _list_of(_resource)),
                "accesses": ("accesses", _list_of(_access)),
                "secrets": ("secrets", _strings),
                "bus-subjects": ("bus_subjects", _strings),
                "bus-users": ("bus_users", _string),
                "adopt": ("adopt", _adopt),
            },
        )
    )


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _json(data: bytes) -> Any:
    """One JSON value, strictly: UTF-8, no ``NaN``/``Infinity``, objects as their pairs."""
    return json.loads(data.decode("utf-8"), object_pairs_hook=_Pairs, parse_constant=_no_constant)


def parse(data: bytes) -> Manifest:
    """Parses a manifest, raising :class:`ParseError` that says whether it failed as JSON
    (``not JSON: …``), as an object (``not a JSON object``) or as a manifest
    (``not a module manifest: …``)."""
    data = bytes(data)
    try:
        value = _json(data)
    except (ValueError, UnicodeDecodeError) as e:
        raise ParseError(f"not JSON: {e}") from None
    if not data.lstrip(_ASCII_WHITESPACE).startswith(b"{"):
        raise ParseError("not a JSON object")
    try:
        return _manifest(value)
    except _Shape as e:
        raise ParseError(f"not a module manifest: {e}") from None


_last_read: Optional[tuple[bytes, Manifest]] = None


def read(module: str, data: bytes) -> Manifest:
    """Reads a module's manifest, raising a :class:`~mesh_adopt.types.Refusal` naming the module
    when it is not JSON of the expected shape.

    ``check`` and ``adopt`` run on one instance with the same manifest, so reading the same
    bytes again hands back the manifest already read instead of parsing it again; treat it as
    read-only.
    """
    global _last_read
    data = bytes(data)
    if _last_read is not None and _last_read[0] == data:
        return _last_read[1]
    try:
        manifest = parse(data)
    except ParseError as e:
        raise Refusal(f"cannot read the `{module}` module's manifest: {e}") from None
    _last_read = (data, manifest)
    return manifest
