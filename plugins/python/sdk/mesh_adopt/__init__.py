"""The guest side of mesh-adopt for Python: what a catalogue module's ``adopt.wasm`` is written
with when it is built by componentize-py.

A plugin subclasses :class:`Plugin` and exports it with :func:`export`, in the module
componentize-py wraps (``app.py``)::

    WitWorld = mesh_adopt.export(Postgres)

The contract's shapes are componentize-py's generated bindings, re-exported here
(``Context``, ``Manifest``, ``Plan``, ``Report``, ``Container``, the ``command`` variant's
cases ``Command_Push`` and the rest): the host hands the manifest over parsed, so the SDK
carries no parser and no command vocabulary of its own. The host's capabilities are wrapped
in :mod:`mesh_adopt.host` so that every failed call raises one
:class:`~mesh_adopt.host.HostCallError`, a :class:`Refusal` naming the call;
:mod:`mesh_adopt.provider` is the register → build → issue → assign → prepare → push
sequence; :mod:`mesh_adopt.foundation`, :mod:`mesh_adopt.handover`, :mod:`mesh_adopt.wait`
and :mod:`mesh_adopt.grants` are the helpers the Rust SDK has, with the same words and
refusal codes.
"""

from __future__ import annotations

import abc
import importlib
import importlib.machinery
import linecache
import os
import sys

# Imported here so they are in the component's snapshot: an import at run time would ask
# the filesystem, which the sandbox does not give.
import traceback
import typing
from importlib import resources
from types import ModuleType
from typing import Any, Union

#: The SDK's version, which is the contract's: ``mesh:adopt@0.2.0``.
__version__ = "0.2.0"


def wit_path() -> str:
    """The path of the contract this SDK is built against (``mesh_adopt/wit/adopter.wit``), for
    componentize-py's ``-d``: the WIT travels inside the package."""
    return str(resources.files(__name__).joinpath("wit", "adopter.wit"))


#: The contract this SDK is built against, as ``wit/adopter.wit`` states it.
WIT: str = resources.files(__name__).joinpath("wit", "adopter.wit").read_text(encoding="utf-8")

#: The world a plugin built with this SDK targets: what a manifest's ``adopt.world`` names.
WORLD = f"mesh:adopt/adopter@{__version__}"

#: The generated modules the SDK calls into, by their short names.
_GENERATED = ("types", "control", "machine", "log", "clock")

#: The contract's types a plugin may import from here; they are the generated ones.
_TYPES = frozenset(
    "AdoptedAs Adoption Build BundleResource BundleResource_Container BundleResource_File "
    "BundleResource_Other CatalogSource Command Command_Assign Command_Build Command_ModuleAdd "
    "Command_ModuleIssue Command_Prepare Command_Push Command_SecretAccept Container Context File "
    "Grants HostError Manifest Options Other Placement Plan Report SecretAccept".split()
)


def generated(name: str) -> ModuleType:
    """One module componentize-py generates: ``types``, ``control``, ``machine``, ``log``,
    ``clock`` (``wit_world.imports.<name>``), or ``componentize_py_types``."""
    full = name if name == "componentize_py_types" else f"wit_world.imports.{name}"
    return sys.modules.get(full) or importlib.import_module(full)


def __getattr__(name: str) -> Any:
    """The contract's types, from the generated bindings, on first use (so the SDK imports
    where there are none, as in its build command)."""
    if name in _TYPES:
        try:
            return getattr(generated("types"), name)
        except ImportError as e:
            raise AttributeError(f"`mesh_adopt.{name}` is a generated binding, and there are none here: {e}") from None
    raise AttributeError(f"module 'mesh_adopt' has no attribute {name!r}")


def case(value: Any) -> str:
    """The case of a generated variant value: ``Command_SecretAccept(…)`` gives
    ``SecretAccept``, ``HostError_TimedOut(…)`` ``TimedOut``."""
    return type(value).__name__.rpartition("_")[2]


class Refusal(Exception):
    """Why a plugin will not (or could not) adopt its module, raised so a refusal from any
    depth ends ``check`` or ``adopt``; the export hands the host ``{code, message}``.

    ``code`` is kebab-case and stable (``image-differs``), for an installer or a scenario to
    act on; ``message`` is for the operator and names both sides of any difference.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code!r}, {self.message!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Refusal) and (other.code, other.message) == (self.code, self.message)

    def __hash__(self) -> int:
        return hash((self.code, self.message))


def refuse(code: str, message: str) -> Refusal:
    """A refusal to ``raise``: ``raise refuse("bus-gone", "…")``."""
    return Refusal(code, message)


class Plugin(abc.ABC):
    """A module's adoption rules. Subclass it, implement both methods, and export the class
    with :func:`export`. The host hands the context once (``init``); both methods are given
    that one value, raise :class:`Refusal` to refuse, and run on one instance."""

    @abc.abstractmethod
    def check(self, ctx: Any) -> Any:
        """Decides, changing nothing, whether and how the module can be adopted: a ``Plan``.
        The host denies every effect while this runs, so it may only read."""

    @abc.abstractmethod
    def adopt(self, ctx: Any) -> Any:
        """Adopts the module: a ``Report``."""


def _shaped(result: Any, name: str, method: str, fields: dict[str, Any]) -> Any:
    """``result``, or a ``TypeError`` (a bug, which traps) unless it is the generated record
    ``name`` whose fields pass ``fields``' checks; a string summary would otherwise become a
    plan line per character."""
    if type(result).__name__ != name or type(result).__module__ != generated("types").__name__:
        raise TypeError(f"`{method}` returned {type(result).__name__}, not a mesh_adopt.{name}")
    for field, (ok, shape) in fields.items():
        if not ok(getattr(result, field)):
            raise TypeError(f"a {name}'s `{field}` is {shape}, not {getattr(result, field)!r}")
    return result


def _lines(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and all(isinstance(line, str) for line in value)


def _commands(value: Any) -> bool:
    cases = typing.get_args(generated("types").Command)
    return isinstance(value, (list, tuple)) and all(isinstance(c, cases) for c in value)


_PLAN = {
    "summary": (_lines, "a list of lines (list[str])"),
    "commands": (_commands, "a list of commands (Command_Push(…) and the rest)"),
}
_REPORT = {"summary": (lambda s: isinstance(s, str), "one line (str)")}

#: What the sandbox stops, as Python's audit events name it.
_SANDBOXED = frozenset(
    "open os.listdir os.scandir os.chdir os.mkdir os.remove os.rename os.rmdir os.chmod os.truncate "
    "os.utime os.link os.symlink shutil.copyfile shutil.rmtree tempfile.mkstemp tempfile.mkdtemp "
    "socket.connect socket.bind socket.getaddrinfo urllib.Request os.stat os.lstat os.access".split()
)

#: Calls the sandbox stops that Python raises no audit event for: wrapped to raise one.
_UNAUDITED = ("stat", "lstat", "access")
_watching = [False]


def _sandbox_call(event: str, args: tuple[Any, ...]) -> None:
    """An audit hook: while an export runs, a call the sandbox will stop (a file opened, a
    directory listed, a module imported from disk) first prints where the plugin made it, so
    the host's stop report, which shows stderr, names the Python file and line."""
    if not _watching[0] or not (event in _SANDBOXED or event == "import"):
        return
    if event == "import" and (args[0] in sys.builtin_module_names or importlib.machinery.FrozenImporter.find_spec(args[0])):
        return
    _watching[0] = False
    try:
        shown = ", ".join(repr(a) for a in args[:2]) if event != "import" else repr(args[0])
        what = f"imported {shown} at run time" if event == "import" else f"called {event}({shown})"
        frames = [f for f in traceback.extract_stack(sys._getframe(1)) if f.filename != __file__]
        stack = "".join(traceback.format_list(frames))
        print(f"mesh_adopt: the plugin {what}, which the sandbox stops; from (most recent call last):\n{stack}",
              end="", file=sys.stderr, flush=True)
    finally:
        _watching[0] = True


def _audited(event: str, call: Any) -> Any:
    """`call`, raising the audit event `event` first (`os.path.exists` and the like go
    through `os.stat`)."""

    def audited(path: Any, *args: Any, **kwargs: Any) -> Any:
        sys.audit(event, path)
        return call(path, *args, **kwargs)

    return audited


def _watched(method: Any, *args: Any) -> Any:
    """Runs one export's work with the sandbox watch on (installed once, on first use)."""
    if not getattr(_watched, "hooked", False):
        sys.addaudithook(_sandbox_call)
        for name in _UNAUDITED:
            setattr(os, name, _audited(f"os.{name}", getattr(os, name)))
        _watched.hooked = True  # type: ignore[attr-defined]
    _watching[0] = True
    try:
        return method(*args)
    finally:
        _watching[0] = False


def _tracebacks_without_source() -> None:
    """Makes a traceback print without reading source files: an exception that escapes an
    export is printed (to stderr, which the host shows) before the plugin traps, and reading
    its source lines would ask the filesystem, so the host would report that call instead."""
    linecache.checkcache = lambda filename=None: None  # type: ignore[assignment]
    linecache.updatecache = lambda filename, module_globals=None: []  # type: ignore[assignment]


def export(plugin: Union[type[Plugin], Plugin]) -> type:
    """The ``WitWorld`` class componentize-py looks for in the app module, running ``plugin``
    (a :class:`Plugin` subclass or instance): ``WitWorld = export(Postgres)``.

    ``init`` keeps the context (a second ``init`` keeps the first); ``check`` and ``adopt`` hand
    it to the plugin and a :class:`Refusal` back as the contract's ``refusal``, or refuse
    ``no-context`` when the host called them first. Any other exception is a bug and traps, with
    its traceback (file and line, without source) on stderr; so does a result of the wrong
    shape. It imports the generated bindings now, while componentize-py pre-initialises the
    app, since the sandbox gives no filesystem to import them from later.
    """
    instance = plugin() if isinstance(plugin, type) else plugin
    for name in _GENERATED:
        try:
            generated(name)
        except ImportError:
            break
    _tracebacks_without_source()
    given: list[Any] = []

    def run(method: str, shape: dict[str, Any], name: str) -> Any:
        if not given:
            raise _err(refuse("no-context", "the host called an export before `init`: no context to act on"))
        try:
            result = getattr(instance, method)(given[0])
        except Refusal as refusal:
            raise _err(refusal) from None
        return _shaped(result, name, method, shape)

    class WitWorld:
        """The world's exports, delegating to the exported plugin."""

        def init(self, ctx: Any) -> None:
            """The contract's ``init``."""
            if not given:
                given.append(ctx)

        def check(self) -> Any:
            """The contract's ``check``."""
            return _watched(run, "check", _PLAN, "Plan")

        def adopt(self) -> Any:
            """The contract's ``adopt``."""
            return _watched(run, "adopt", _REPORT, "Report")

    WitWorld.plugin = instance  # type: ignore[attr-defined]
    return WitWorld


def _err(refusal: Refusal) -> BaseException:
    """What a refusing export raises: ``Err(Refusal(code, message))``."""
    return generated("componentize_py_types").Err(generated("types").Refusal(code=refusal.code, message=refusal.message))


from .host import ErrorKind, HostCallError  # noqa: E402

__all__ = ["WIT", "WORLD", "ErrorKind", "HostCallError", "Plugin", "Refusal", "case", "export", "refuse", "wit_path"]
__all__ += sorted(_TYPES)
