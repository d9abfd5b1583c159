"""The guest side of mesh-adopt for Python: what a catalogue module's ``adopt.wasm`` is written
with when it is built by componentize-py.

A plugin subclasses :class:`Plugin` and exports it with :func:`export`, in the module
componentize-py wraps (``app.py``)::

    WitWorld = mesh_adopt.export(Postgres)

The capabilities the host grants (carry, tell, credential, inspect, fetch, say, the clock) are
wrapped in :mod:`mesh_adopt.host` so that every failed call raises one
:class:`~mesh_adopt.host.HostCallError`, a :class:`Refusal` naming the call;
:mod:`mesh_adopt.provider` is the register → build → issue → assign → prepare → push sequence
every provider module shares; :mod:`mesh_adopt.manifest` and :mod:`mesh_adopt.foundation` read
the two documents a plugin decides from.

What several modules do around that sequence has a helper each, made so that ``check`` and
``adopt`` come from one value and ``check`` refuses whatever ``adopt`` would stumble on:

- :func:`mesh_adopt.foundation.adopt_in_place`: the bundle's container, once the manifest
  declares it under the same name and image;
- :class:`mesh_adopt.handover.Handover`: a genesis credential carried in and accepted as a
  module secret, with the plan's command and the check that it can be;
- :func:`mesh_adopt.wait.wait_until` and :func:`mesh_adopt.wait.wait_for_image`: bounded waits
  on the host's clock;
- :class:`mesh_adopt.grants.Reads`: the containers and URLs ``adopt`` will read, checked
  against the manifest's grants.
"""

from __future__ import annotations

import abc
import linecache
# Imported here so it is in the component's snapshot: the interpreter imports it to print an
# exception that escapes an export, and an import then would ask the filesystem.
import traceback  # noqa: F401
from importlib import resources
from typing import Any, Union

from . import _bindings
from .host import ErrorKind, HostCallError, HostError
from .types import (
    BundleResource,
    CatalogSource,
    Container,
    Context,
    File,
    Options,
    Other,
    Plan,
    Refusal,
    Report,
    refuse,
)

__all__ = [
    "WIT",
    "WORLD",
    "BundleResource",
    "CatalogSource",
    "Container",
    "Context",
    "ErrorKind",
    "File",
    "HostCallError",
    "HostError",
    "Options",
    "Other",
    "Plan",
    "Plugin",
    "Refusal",
    "Report",
    "export",
    "refuse",
    "wit_path",
]

#: The SDK's version, which is the contract's: ``mesh:adopt@0.1.0``.
__version__ = "0.1.0"


def wit_path() -> str:
    """The path of the contract this SDK is built against (``mesh_adopt/wit/adopter.wit``), for
    componentize-py's ``-d``: the WIT travels inside the package, so a plugin builds against
    the contract its SDK version names."""
    return str(resources.files(__name__).joinpath("wit", "adopter.wit"))


#: The contract this SDK is built against, as ``wit/adopter.wit`` states it; the package's
#: version is the contract's.
WIT: str = resources.files(__name__).joinpath("wit", "adopter.wit").read_text(encoding="utf-8")

#: The world a plugin built with this SDK targets: what a manifest's ``adopt.world`` names.
WORLD = f"mesh:adopt/adopter@{__version__}"


class Plugin(abc.ABC):
    """A module's adoption rules. Subclass it, implement both methods, and export the class
    with :func:`export`.

    Both methods receive the same :class:`Context`, raise :class:`Refusal` (or let a
    :class:`HostCallError` through) to refuse, and run on one instance for a whole run.
    """

    @abc.abstractmethod
    def check(self, ctx: Context) -> Plan:
        """Decides, changing nothing, whether and how the module can be adopted. The host
        denies every effect while this runs, so it may only read."""

    @abc.abstractmethod
    def adopt(self, ctx: Context) -> Report:
        """Adopts the module."""


def _is_lines(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and all(isinstance(line, str) for line in value)


def _shaped_plan(planned: Any) -> Plan:
    """``check``'s result, refused with a ``TypeError`` (a bug, which traps) unless it is a
    :class:`Plan` of lines and commands: a string summary would otherwise become a plan line
    per character."""
    if not isinstance(planned, Plan):
        raise TypeError(f"`check` returned {type(planned).__name__}, not a mesh_adopt.Plan")
    if not _is_lines(planned.summary):
        raise TypeError(f"a Plan's `summary` is a list of lines (list[str]), not {planned.summary!r}")
    if not isinstance(planned.commands, (list, tuple)) or not all(_is_lines(c) for c in planned.commands):
        raise TypeError(f"a Plan's `commands` is a list of commands (list[list[str]]), not {planned.commands!r}")
    return planned


def _shaped_report(done: Any) -> Report:
    """``adopt``'s result, refused with a ``TypeError`` unless it is a :class:`Report` of one
    line."""
    if not isinstance(done, Report):
        raise TypeError(f"`adopt` returned {type(done).__name__}, not a mesh_adopt.Report")
    if not isinstance(done.summary, str):
        raise TypeError(f"a Report's `summary` is one line (str), not {done.summary!r}")
    return done


def _tracebacks_without_source() -> None:
    """Makes a traceback print without reading source files. An exception that escapes an
    export is printed (to stderr, which the host shows) before the plugin traps; reading the
    source lines for it would ask the filesystem, which the sandbox does not give, and the
    host would report that call instead of the exception."""
    linecache.checkcache = lambda filename=None: None  # type: ignore[assignment]
    linecache.updatecache = lambda filename, module_globals=None: []  # type: ignore[assignment]


def export(plugin: Union[type[Plugin], Plugin]) -> type:
    """The ``WitWorld`` class componentize-py looks for in the app module, running ``plugin``
    (a :class:`Plugin` subclass or instance): ``WitWorld = export(Postgres)``.

    It converts the bindings' context into the SDK's :class:`Context`, the plugin's
    :class:`Plan` and :class:`Report` back, and a :class:`Refusal` into the contract's
    ``refusal``. It also imports the generated bindings while the app is pre-initialised, since
    the sandbox gives no filesystem to import them from later. Any other exception is a bug in
    the plugin and traps, so the host reports the plugin stopped rather than a made-up refusal,
    with the exception and its traceback (file and line, without source) on stderr; so does a
    result that is not a :class:`Plan` or :class:`Report` of the right shape.
    """
    instance = plugin() if isinstance(plugin, type) else plugin
    _bindings.preload()
    _tracebacks_without_source()

    class WitWorld:
        """The world's exports, delegating to the exported plugin."""

        def check(self, ctx: Any) -> Any:
            """The contract's ``check``."""
            try:
                planned = instance.check(_bindings.context(ctx))
            except Refusal as refusal:
                raise _bindings.refusal(refusal.message) from None
            return _bindings.plan(_shaped_plan(planned))

        def adopt(self, ctx: Any) -> Any:
            """The contract's ``adopt``."""
            try:
                done = instance.adopt(_bindings.context(ctx))
            except Refusal as refusal:
                raise _bindings.refusal(refusal.message) from None
            return _bindings.report(_shaped_report(done))

    WitWorld.__qualname__ = WitWorld.__name__ = "WitWorld"
    WitWorld.plugin = instance  # type: ignore[attr-defined]
    return WitWorld
