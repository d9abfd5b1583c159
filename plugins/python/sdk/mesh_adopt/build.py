"""``mesh-adopt-build-py [--out PATH] [PLUGIN_DIR]``: builds a Python plugin into a component.

It runs componentize-py, from the environment this SDK is installed in, against the WIT inside
the package::

    componentize-py -d <wit> -w adopter componentize <module> -p <PLUGIN_DIR> -o <PATH>

where ``<module>`` is the plugin's app module, read from its ``pyproject.toml``
(``[tool.mesh-adopt] module = "app"``, ``app`` when absent). On failure it prints
componentize-py's output and exits non-zero. ``mesh-adopt build`` calls exactly this inside the
plugin's virtual environment, with ``--out`` set, so the interface is kept stable: the same
arguments, exit status 0 only when ``PATH`` holds the new component.

Also runnable as ``python -m mesh_adopt.build``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Optional

from . import wit_path

__all__ = ["DEFAULT_MODULE", "DEFAULT_OUT", "BuildError", "app_module", "componentize_command", "main"]

#: The app module a plugin's ``pyproject.toml`` names when it names none.
DEFAULT_MODULE = "app"

#: Where the component is written when ``--out`` is not given.
DEFAULT_OUT = "adopt.wasm"

#: The world of the contract a plugin exports.
WORLD_NAME = "adopter"


class BuildError(Exception):
    """Why a plugin could not be built, in words for the operator."""


def app_module(plugin_dir: Path) -> str:
    """The app module componentize-py wraps: ``[tool.mesh-adopt] module`` in the plugin's
    ``pyproject.toml``, else ``app``."""
    pyproject = plugin_dir / "pyproject.toml"
    if not pyproject.is_file():
        return DEFAULT_MODULE
    try:
        settings = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise BuildError(f"cannot read `{pyproject}`: {e}") from None
    module = settings.get("tool", {}).get("mesh-adopt", {}).get("module", DEFAULT_MODULE)
    if not isinstance(module, str) or not all(part.isidentifier() for part in module.split(".")):
        raise BuildError(
            f"`{pyproject}` names {module!r} as `[tool.mesh-adopt] module`; it must be a Python module name"
        )
    if module == WORLD_NAME or module.split(".")[0] in ("wit_world", "componentize_py_types"):
        raise BuildError(f"`{pyproject}` names `{module}` as the app module; that name is the bindings'")
    return module


def componentize_command(plugin_dir: Path, out: Path, module: str, wit: Optional[str] = None) -> list[str]:
    """The componentize-py command line, run by the interpreter this SDK is installed in, so
    the componentize-py of the same environment builds it."""
    runner = "import sys; from componentize_py import script; sys.argv[0] = 'componentize-py'; sys.exit(script())"
    return [
        sys.executable,
        "-c",
        runner,
        "-d",
        wit or wit_path(),
        "-w",
        WORLD_NAME,
        "componentize",
        module,
        "-p",
        str(plugin_dir),
        "-o",
        str(out),
    ]


def build(plugin_dir: Path, out: Path) -> None:
    """Builds the plugin in ``plugin_dir`` into ``out``, raising :class:`BuildError` with
    componentize-py's output when it fails."""
    if not plugin_dir.is_dir():
        raise BuildError(f"`{plugin_dir}` is not a directory holding a plugin")
    module = app_module(plugin_dir)
    if not (plugin_dir / f"{module.replace('.', '/')}.py").is_file() and not (
        plugin_dir / module.replace(".", "/") / "__init__.py"
    ).is_file():
        raise BuildError(f"`{plugin_dir}` has no app module `{module}` (looked for `{module.replace('.', '/')}.py`)")
    out.parent.mkdir(parents=True, exist_ok=True)
    command = componentize_command(plugin_dir, out, module)
    finished = subprocess.run(command, capture_output=True, text=True, env=_environment())
    if finished.returncode != 0:
        output = "\n".join(part.strip() for part in (finished.stdout, finished.stderr) if part.strip())
        raise BuildError(
            f"componentize-py could not build `{plugin_dir}` (app module `{module}`), exit status "
            f"{finished.returncode}:\n{output}"
        )


def _environment() -> dict[str, str]:
    """The environment componentize-py runs in: this one, with ``VIRTUAL_ENV`` naming the
    environment the SDK is installed in, so componentize-py adds its ``site-packages``."""
    env = dict(os.environ)
    if sys.prefix != sys.base_prefix:
        env["VIRTUAL_ENV"] = sys.prefix
    return env


def main(argv: Optional[Sequence[str]] = None) -> int:
    """The console script: parses the arguments, builds, and returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="mesh-adopt-build-py",
        description="Build a Python mesh-adopt plugin into a WebAssembly component with componentize-py.",
    )
    parser.add_argument(
        "--out",
        metavar="PATH",
        default=DEFAULT_OUT,
        help=f"where to write the component (default: ./{DEFAULT_OUT})",
    )
    parser.add_argument(
        "plugin_dir",
        metavar="PLUGIN_DIR",
        nargs="?",
        default=".",
        help="the plugin's directory, holding its pyproject.toml and app module (default: .)",
    )
    args = parser.parse_args(argv)
    plugin_dir, out = Path(args.plugin_dir), Path(args.out)
    try:
        build(plugin_dir, out)
    except BuildError as e:
        print(f"mesh-adopt-build-py: {e}", file=sys.stderr)
        return 1
    print(f"built {out} from {plugin_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
