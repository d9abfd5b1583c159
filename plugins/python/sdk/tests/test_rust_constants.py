"""The values this SDK restates from the Rust side, held to the Rust source they are declared
in (the manifest crate, the Rust SDK, the host's build), so neither side changes alone. Read
from the repository the SDK sits in; a copy of the SDK outside it has no Rust to compare with."""

import json
import re
import tomllib
import unittest
from pathlib import Path
from typing import Any, Callable

import mesh_adopt
from mesh_adopt import build, host, provider

from .support import context, host as fake

REPOSITORY = (Path(__file__).resolve().parent / "../../../..").resolve()
OUTSIDE = not (REPOSITORY / "plugins" / "Cargo.toml").is_file()

MANIFEST_COMMAND = "plugins/manifest/src/command.rs"

#: Each constant this SDK restates: its name in the SDK, its value, the Rust file declaring it
#: (the host's, whose files move, the directory of its command's sources) and its name there.
HELD = [
    ("provider.DEFAULT_REF", provider.DEFAULT_REF, MANIFEST_COMMAND, "DEFAULT_REF"),
    ("provider.BUILD_TIMEOUT_SECONDS", provider.BUILD_TIMEOUT_SECONDS, MANIFEST_COMMAND, "BUILD_TIMEOUT_SECONDS"),
    ("build.DEFAULT_OUT", build.DEFAULT_OUT, "plugins/manifest/src/lib.rs", "PLUGIN_FILE"),
    ("host.TELL_TIMEOUT_SECONDS", host.TELL_TIMEOUT_SECONDS, "plugins/sdk/src/host.rs", "TELL_TIMEOUT_SECONDS"),
    ("host.SHOWN", host.SHOWN, "plugins/sdk/src/host.rs", "SHOWN"),
    ("WORLD", mesh_adopt.WORLD, "plugins/sdk/src/lib.rs", "WORLD"),
    ("build.SOURCE_SECTION", build.SOURCE_SECTION, "host/cli/src", "SOURCE_SECTION"),
]

_STRING = r'"(?:[^"\\]|\\.)*"'


def _source(path: str) -> str:
    return (REPOSITORY / path).read_text(encoding="utf-8")


def _crate_version(path: str) -> str:
    """The crate's own version, as ``env!("CARGO_PKG_VERSION")`` reads it."""
    crate = REPOSITORY / path[: path.rindex("/src/")] / "Cargo.toml"
    return tomllib.loads(crate.read_text(encoding="utf-8"))["package"]["version"]


def _rust_files(path: str) -> list[str]:
    """The Rust files at ``path``: the file itself, or every one under the directory."""
    at = REPOSITORY / path
    if not at.is_dir():
        return [path]
    return sorted(str(file.relative_to(REPOSITORY)) for file in at.rglob("*.rs"))


def rust_const(at: str, name: str) -> Any:
    """A constant's value, from its one ``[pub] const NAME: T = value;`` line in the Rust file
    at ``at``, or in the files under it: a string, an integer, or a ``concat!`` of strings and
    the crate's version."""
    declaration = re.compile(rf"^\s*(?:pub\s+)?const\s+{name}\s*:[^=]+=\s*(.+);\s*$", re.M)
    found = [(file, line) for file in _rust_files(at) if (line := declaration.search(_source(file)))]
    if len(found) != 1:
        raise AssertionError(f"{at} declares `const {name}` in {len(found)} files, not one")
    [(path, line)] = found
    value = line[1]
    if re.fullmatch(_STRING, value):
        return json.loads(value)
    if re.fullmatch(r"\d[\d_]*(?:[ui](?:8|16|32|64|size))?", value):
        return int(re.sub(r"[ui]\w+$", "", value).replace("_", ""))
    parts = re.fullmatch(r"concat!\((.*)\)", value)
    if parts:
        return "".join(
            _crate_version(path) if part == 'env!("CARGO_PKG_VERSION")' else json.loads(part)
            for part in re.split(r",\s*", parts[1])
        )
    raise AssertionError(f"{path}: `{name}` is `{value}`, not a value this test reads")


def rust_format(path: str, name: str) -> Callable[[str], str]:
    """A ``pub fn name(arg: &str) -> String { format!("…{arg}…") }`` of the Rust file at
    ``path``, as a function."""
    fn = re.search(rf"pub fn {name}\((\w+): &str\) -> String \{{\s*format!\(({_STRING})\)\s*\}}", _source(path))
    if fn is None:
        raise AssertionError(f"{path} declares no `fn {name}` that formats its argument")
    arg, template = fn[1], json.loads(fn[2])
    return lambda value: template.replace(f"{{{arg}}}", value)


@unittest.skipIf(OUTSIDE, "the SDK is not in its repository")
class RustConstants(unittest.TestCase):
    def test_the_constants_are_the_rust_ones(self) -> None:
        for name, value, path, rust_name in HELD:
            with self.subTest(name):
                self.assertEqual(value, rust_const(path, rust_name), f"{name} differs from {path}'s {rust_name}")

    def test_the_remote_paths_are_the_manifest_crates(self) -> None:
        fake()
        ctx = context(module="postgres")
        self.assertEqual(
            provider.Provider(ctx).manifest_remote(), rust_format(MANIFEST_COMMAND, "manifest_remote")("postgres")
        )
        self.assertEqual(
            provider.accept_command(ctx, "superuser").value.source,
            rust_format(MANIFEST_COMMAND, "accepting_remote")("superuser"),
        )
