"""``mesh-adopt-build-py [--out PATH] [PLUGIN_DIR]``: builds a Python plugin into a component.

It runs componentize-py, from the environment this SDK is installed in, against the WIT inside
the package::

    componentize-py -d <wit> -w adopter componentize <module> -p <PLUGIN_DIR> -o <PATH>

where ``<module>`` is the plugin's app module, read from its ``pyproject.toml``
(``[tool.mesh-adopt] module = "app"``, ``app`` when absent). On failure it prints
componentize-py's output and exits non-zero. ``mesh-adopt build`` calls exactly this inside the
plugin's virtual environment, with ``--out`` set, so the interface is kept stable: the same
arguments, exit status 0 only when ``PATH`` holds the new component.

componentize-py snapshots an initialised interpreter whose memory holds random seeds, so two
builds of one source differ in their bytes. The component is therefore marked with what it was
built from: a custom section ``mesh-adopt:source`` holding ``sha256:<hex>`` of the files
componentize-py bundles from the plugin and this package, the WIT, and the versions of
componentize-py, of this SDK and of Python (see :func:`source_identity`), which
``mesh-adopt build --check`` compares when the bytes differ. The component is written beside
``PATH`` and renamed into place, so ``PATH`` never holds a part of one.

Also runnable as ``python -m mesh_adopt.build``.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import os
import secrets
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Optional

from . import __version__ as SDK_VERSION
from . import wit_path

__all__ = [
    "DEFAULT_MODULE", "DEFAULT_OUT", "SOURCE_SECTION", "BuildError", "app_module", "bundled_files",
    "componentize_command", "custom_section", "main", "mark_component", "source_identity", "uleb128"
]

#: The app module a plugin's ``pyproject.toml`` names when it names none.
DEFAULT_MODULE = "app"

#: Where the component is written when ``--out`` is not given: the file a module's plugin
#: ships as, beside its manifest (``PLUGIN_FILE`` in the manifest crate).
DEFAULT_OUT = "adopt.wasm"

#: The world of the contract a plugin exports.
WORLD_NAME = "adopter"

#: The custom section a built component carries its source identity in; the host reads it
#: (``SOURCE_SECTION`` in its build) to tell two builds of one source from a changed source.
SOURCE_SECTION = "mesh-adopt:source"

#: The first line of the description hashed, so a change of its layout changes every identity.
_DESCRIPTION_HEADER = b"mesh-adopt source identity v1 (python)\n"

#: Directories in a plugin left out of its identity: bytecode caches, which Python rewrites
#: on import, and every hidden directory (a virtual environment, a repository's metadata, the
#: caches of mypy, pytest or ruff), which are not its source and would make the identity differ
#: between checkouts of one source.
_SKIPPED_DIRECTORIES = frozenset({"__pycache__"})

#: Files left out of the identity by their ending: bytecode, and earlier builds' components
#: (an ``adopt.wasm`` left beside the plugin by an earlier build).
_SKIPPED_SUFFIXES = (".pyc", ".wasm")


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


def build(plugin_dir: Path, out: Path) -> str:
    """Builds the plugin in ``plugin_dir`` into ``out``, marked with its source identity, and
    returns that identity; raises :class:`BuildError` with componentize-py's output when it
    fails, leaving ``out`` as it was."""
    if not plugin_dir.is_dir():
        raise BuildError(f"`{plugin_dir}` is not a directory holding a plugin")
    module = app_module(plugin_dir)
    if not (plugin_dir / f"{module.replace('.', '/')}.py").is_file() and not (
        plugin_dir / module.replace(".", "/") / "__init__.py"
    ).is_file():
        raise BuildError(f"`{plugin_dir}` has no app module `{module}` (looked for `{module.replace('.', '/')}.py`)")
    identity = source_identity(plugin_dir, module)
    out.parent.mkdir(parents=True, exist_ok=True)
    # componentize-py writes outside the plugin, so it neither bundles a half-written component
    # nor leaves one at `out`.
    with tempfile.TemporaryDirectory(prefix="mesh-adopt-build-py-") as work:
        built = Path(work) / "component.wasm"
        command = componentize_command(plugin_dir, built, module)
        finished = subprocess.run(command, capture_output=True, text=True, env=_environment())
        if finished.returncode != 0 or not built.is_file():
            output = "\n".join(part.strip() for part in (finished.stdout, finished.stderr) if part.strip())
            raise BuildError(
                f"componentize-py could not build `{plugin_dir}` (app module `{module}`), exit status "
                f"{finished.returncode}:\n{output}"
            )
        component = built.read_bytes()
    try:
        _write_atomically(out, mark_component(component, identity))
    except OSError as e:
        raise BuildError(f"cannot write `{out}`: {e}") from None
    return identity


def uleb128(value: int) -> bytes:
    """``value`` as an unsigned LEB128, the encoding of every size in a WebAssembly binary:
    seven bits a byte, least significant first, the high bit set on all but the last."""
    if not 0 <= value <= 0xFFFF_FFFF:
        raise ValueError(f"a section size is a u32, not {value}")
    encoded = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        encoded.append(byte | 0x80 if value else byte)
        if not value:
            return bytes(encoded)


def custom_section(name: str, payload: bytes) -> bytes:
    """A custom section (id 0): its size, then the name's length, the name's UTF-8 bytes and
    the payload. Appended after a component's last section it is still a valid component,
    which ignores it."""
    encoded_name = name.encode("utf-8")
    content = uleb128(len(encoded_name)) + encoded_name + payload
    return b"\x00" + uleb128(len(content)) + content


def mark_component(component: bytes, identity: str) -> bytes:
    """``component`` with ``identity`` appended as its ``mesh-adopt:source`` section."""
    return component + custom_section(SOURCE_SECTION, identity.encode("ascii"))


def bundled_files(plugin_dir: Path, sdk_dir: Optional[Path] = None) -> list[tuple[str, Path]]:
    """What componentize-py bundles that the identity covers: every file of the plugin's
    directory and of the installed ``mesh_adopt`` package, as ``(name, path)`` sorted by name,
    where the name is ``plugin/…`` or ``mesh_adopt/…`` with ``/`` between parts, so it is the
    same wherever the plugin is checked out. Bytecode caches and components are left out
    (:data:`_SKIPPED_DIRECTORIES`, :data:`_SKIPPED_SUFFIXES`): they change without the source."""
    sdk_dir = sdk_dir if sdk_dir is not None else Path(__file__).resolve().parent
    files = [(f"plugin/{name}", path) for name, path in _files_under(plugin_dir)]
    files += [(f"mesh_adopt/{name}", path) for name, path in _files_under(sdk_dir)]
    return sorted(files)


def _files_under(root: Path) -> Iterator[tuple[str, Path]]:
    """The files below ``root`` with their ``/``-separated paths relative to it, but those
    :func:`bundled_files` leaves out; walked in sorted order so the result never depends on
    the order the file system lists them in."""
    for directory, subdirectories, names in os.walk(root):
        subdirectories[:] = sorted(
            d for d in subdirectories if d not in _SKIPPED_DIRECTORIES and not d.startswith(".")
        )
        for name in sorted(names):
            path = Path(directory) / name
            if name.endswith(_SKIPPED_SUFFIXES) or not path.is_file():
                continue
            yield path.relative_to(root).as_posix(), path


def source_identity(
    plugin_dir: Path,
    module: str = DEFAULT_MODULE,
    *,
    sdk_dir: Optional[Path] = None,
    wit: Optional[str] = None,
    componentize_py: Optional[str] = None,
    sdk: str = SDK_VERSION,
    python: Optional[str] = None,
) -> str:
    """``sha256:<hex>`` of what a build of ``plugin_dir`` is made from: the versions of
    componentize-py, of this SDK and of Python (major.minor), the app module's name, the WIT,
    and each of :func:`bundled_files` by name and content. Every part is written with its
    length, so no two run together, and none holds an absolute path or a time, so unchanged
    inputs give one identity on every machine with the same versions. The keyword arguments
    stand in for what is installed."""
    if componentize_py is None:
        try:
            componentize_py = importlib.metadata.version("componentize-py")
        except importlib.metadata.PackageNotFoundError:
            raise BuildError("componentize-py is not installed in this environment") from None
    if python is None:
        python = f"{sys.version_info.major}.{sys.version_info.minor}"
    digest = hashlib.sha256(_DESCRIPTION_HEADER)

    def field(name: str, content: bytes) -> None:
        """Adds one named part, its length before it, to the description hashed."""
        digest.update(f"{name} {len(content)}\n".encode("utf-8"))
        digest.update(content)
        digest.update(b"\n")

    field("componentize-py", componentize_py.encode("utf-8"))
    field("sdk", sdk.encode("utf-8"))
    field("python", python.encode("utf-8"))
    field("module", module.encode("utf-8"))
    field("wit", Path(wit or wit_path()).read_bytes())
    for name, path in bundled_files(plugin_dir, sdk_dir):
        try:
            content = path.read_bytes()
        except OSError as e:
            raise BuildError(f"cannot read `{path}`: {e}") from None
        field(f"file {name}", content)
    return f"sha256:{digest.hexdigest()}"


def _write_atomically(out: Path, content: bytes) -> None:
    """Writes ``content`` to a new file beside ``out`` and renames it into place, so ``out`` is
    either what it was or the whole new component, never a part of one."""
    temporary = out.with_name(f".{out.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        with open(temporary, "xb") as file:
            file.write(content)
        os.replace(temporary, out)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def _environment() -> dict[str, str]:
    """The environment componentize-py runs in: this one, with ``VIRTUAL_ENV`` naming the
    environment the SDK is installed in, so componentize-py adds its ``site-packages``."""
    env = dict(os.environ)
    # componentize-py is a Rust program: with this set, every error it reports would carry a
    # backtrace of its own code rather than just the author's mistake.
    env.pop("RUST_BACKTRACE", None)
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
        identity = build(plugin_dir, out)
    except BuildError as e:
        print(f"mesh-adopt-build-py: {e}", file=sys.stderr)
        return 1
    print(f"built {out} ({out.stat().st_size} bytes, source {identity}) from {plugin_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
