"""The component's edge: the modules componentize-py generates (``wit_world``,
``componentize_py_types``), imported only when a call needs them.

Imported lazily so the SDK can be imported, tested and used by the build script where no
bindings exist; inside a component they are always there.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import Any

from .types import (
    BundleResource,
    CatalogSource,
    Container,
    Context,
    File,
    Options,
    Other,
    Plan,
    Report,
)


#: Every generated module the SDK calls into.
MODULES = (
    "componentize_py_types",
    "wit_world.imports.types",
    "wit_world.imports.control",
    "wit_world.imports.machine",
    "wit_world.imports.log",
    "wit_world.imports.clock",
)


def module(name: str) -> ModuleType:
    """One generated bindings module, e.g. ``wit_world.imports.control``."""
    return sys.modules.get(name) or importlib.import_module(name)


def preload() -> bool:
    """Imports every generated module now, and says whether there were any to import.

    :func:`mesh_adopt.export` calls this while componentize-py pre-initialises the app, so the
    modules are in the component's snapshot: an import made later, inside ``check`` or
    ``adopt``, would search the filesystem, which the sandbox does not give, and stop the
    plugin. Outside a component (tests, tools) there is nothing to import, and nothing fails.
    """
    try:
        for name in MODULES:
            module(name)
    except ImportError:
        return False
    return True


def control() -> ModuleType:
    """The ``control`` import: credential, carry, tell."""
    return module("wit_world.imports.control")


def machine() -> ModuleType:
    """The ``machine`` import: inspect, fetch."""
    return module("wit_world.imports.machine")


def log() -> ModuleType:
    """The ``log`` import: say."""
    return module("wit_world.imports.log")


def clock() -> ModuleType:
    """The ``clock`` import: now, sleep."""
    return module("wit_world.imports.clock")


def wit_types() -> ModuleType:
    """The ``types`` interface's generated dataclasses."""
    return module("wit_world.imports.types")


def err_class() -> type:
    """``componentize_py_types.Err``: what a failed import raises and a refusing export raises."""
    return module("componentize_py_types").Err


def variant_case(value: Any) -> str:
    """The case of a generated variant value: ``HostError_TimedOut`` gives ``TimedOut``."""
    return type(value).__name__.rpartition("_")[2]


def _resource(raw: Any) -> BundleResource:
    inner = raw.value
    case = variant_case(raw)
    if case == "Container":
        return Container(id=inner.id, name=inner.name, image=inner.image, volumes=list(inner.volumes))
    if case == "File":
        return File(id=inner.id, path=inner.path)
    return Other(id=inner.id, kind=inner.kind)


def context(raw: Any) -> Context:
    """The bindings' context as the SDK's :class:`~mesh_adopt.types.Context`."""
    source = raw.options.catalog_source
    return Context(
        module=raw.module,
        manifest=bytes(raw.manifest),
        foundation=[_resource(r) for r in raw.foundation],
        options=Options(
            node=raw.options.node,
            catalog_source=None if source is None else CatalogSource(repository=source.repository, ref=source.ref),
            wait_seconds=raw.options.wait_seconds,
        ),
    )


def plan(value: Plan) -> Any:
    """The SDK's plan as the bindings' record."""
    return wit_types().Plan(summary=list(value.summary), commands=[list(c) for c in value.commands])


def report(value: Report) -> Any:
    """The SDK's report as the bindings' record."""
    return wit_types().Report(summary=value.summary)


def refusal(message: str) -> BaseException:
    """The exception a refusing export raises: ``Err(Refusal(message))``."""
    return err_class()(wit_types().Refusal(message=message))
