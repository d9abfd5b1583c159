"""The build command's source identity: the ``mesh-adopt:source`` section and what it hashes.

No componentize-py run: the identity is computed from files, the section from bytes.
"""

import os
import tempfile
import unittest
from pathlib import Path
from typing import Optional

from mesh_adopt.build import (
    SOURCE_SECTION,
    _write_atomically,
    bundled_files,
    custom_section,
    mark_component,
    source_identity,
    uleb128,
)

#: The smallest component: the preamble (magic, version 0x0d, layer 1) and no sections.
EMPTY_COMPONENT = b"\x00asm\x0d\x00\x01\x00"

#: Stand-ins for the installed versions, so the tests do not depend on the environment.
VERSIONS = {"componentize_py": "0.25.0", "sdk": "0.1.0", "python": "3.11"}


class Section(unittest.TestCase):
    def test_sizes_are_unsigned_leb128(self) -> None:
        self.assertEqual(uleb128(0), b"\x00")
        self.assertEqual(uleb128(127), b"\x7f")
        self.assertEqual(uleb128(128), b"\x80\x01")
        self.assertEqual(uleb128(300), b"\xac\x02")
        self.assertEqual(uleb128(16_384), b"\x80\x80\x01")
        self.assertEqual(uleb128(0xFFFF_FFFF), b"\xff\xff\xff\xff\x0f")
        with self.assertRaises(ValueError):
            uleb128(-1)
        with self.assertRaises(ValueError):
            uleb128(2**32)

    def test_a_custom_section_is_id_0_size_name_and_payload(self) -> None:
        identity = "sha256:" + "ab" * 32
        section = custom_section(SOURCE_SECTION, identity.encode("ascii"))
        name = b"mesh-adopt:source"
        self.assertEqual(section[0], 0)
        self.assertEqual(section[1], 1 + len(name) + len(identity))  # 89: one byte
        self.assertEqual(section[2], len(name))
        self.assertEqual(section[3 : 3 + len(name)], name)
        self.assertEqual(section[3 + len(name) :], identity.encode("ascii"))
        self.assertEqual(len(section), 2 + section[1])

    def test_a_section_of_128_bytes_or_more_has_a_two_byte_size(self) -> None:
        payload = b"a" * 200
        section = custom_section("x", payload)
        size = 1 + 1 + len(payload)  # 202
        self.assertEqual(section[:4], bytes([0x00, 0x80 | (size & 0x7F), size >> 7, 0x01]))
        self.assertEqual(section[4:5], b"x")
        self.assertEqual(section[5:], payload)

    def test_marking_appends_the_section_after_the_component(self) -> None:
        identity = "sha256:" + "0f" * 32
        marked = mark_component(EMPTY_COMPONENT, identity)
        self.assertEqual(marked[:8], EMPTY_COMPONENT)
        self.assertEqual(marked[8:], custom_section(SOURCE_SECTION, identity.encode("ascii")))


class Identity(unittest.TestCase):
    def setUp(self) -> None:
        work = tempfile.TemporaryDirectory(prefix="mesh-adopt-source-identity-")
        self.addCleanup(work.cleanup)
        self.root = Path(work.name)
        self.plugin = self.root / "plugin"
        (self.plugin / "helpers").mkdir(parents=True)
        (self.plugin / "app.py").write_text("from helpers import name\n")
        (self.plugin / "helpers" / "__init__.py").write_text("name = 'vault'\n")
        (self.plugin / "pyproject.toml").write_text('[tool.mesh-adopt]\nmodule = "app"\n')
        self.sdk = self.root / "site-packages" / "mesh_adopt"
        (self.sdk / "wit").mkdir(parents=True)
        (self.sdk / "__init__.py").write_text("__version__ = '0.1.0'\n")
        self.wit = self.sdk / "wit" / "adopter.wit"
        self.wit.write_text("package mesh:adopt@0.1.0;\n")

    def identity(self, plugin: Optional[Path] = None, **versions: str) -> str:
        """The identity of the test's plugin (or ``plugin``) and SDK, with the stand-in versions
        but those given."""
        return source_identity(
            plugin or self.plugin, "app", sdk_dir=self.sdk, wit=str(self.wit), **{**VERSIONS, **versions}
        )

    def test_it_is_sha256_and_stable(self) -> None:
        identity = self.identity()
        self.assertRegex(identity, r"^sha256:[0-9a-f]{64}$")
        self.assertEqual(self.identity(), identity)

    def test_the_files_are_named_relative_and_sorted_without_caches(self) -> None:
        (self.plugin / "__pycache__").mkdir()
        (self.plugin / "__pycache__" / "app.cpython-311.pyc").write_bytes(b"\x00")
        (self.plugin / "stray.pyc").write_bytes(b"\x00")
        (self.plugin / "adopt.wasm").write_bytes(EMPTY_COMPONENT)
        (self.sdk / "__pycache__").mkdir()
        (self.sdk / "__pycache__" / "__init__.cpython-311.pyc").write_bytes(b"\x00")
        names = [name for name, _ in bundled_files(self.plugin, self.sdk)]
        self.assertEqual(
            names,
            [
                "mesh_adopt/__init__.py",
                "mesh_adopt/wit/adopter.wit",
                "plugin/app.py",
                "plugin/helpers/__init__.py",
                "plugin/pyproject.toml",
            ],
        )

    def test_touching_the_files_keeps_it(self) -> None:
        before = self.identity()
        later = os.stat(self.plugin / "app.py").st_mtime + 3600
        for path in [*self.plugin.rglob("*"), *self.sdk.rglob("*")]:
            os.utime(path, (later, later))
        self.assertEqual(self.identity(), before)

    def test_caches_and_components_do_not_change_it(self) -> None:
        before = self.identity()
        (self.plugin / "__pycache__").mkdir()
        (self.plugin / "__pycache__" / "app.cpython-311.pyc").write_bytes(b"\x00")
        (self.plugin / "adopt.wasm").write_bytes(EMPTY_COMPONENT)
        for tool in [".mypy_cache", ".pytest_cache", ".ruff_cache"]:
            (self.plugin / tool).mkdir()
            (self.plugin / tool / "cache.json").write_text("{}")
        self.assertEqual(self.identity(), before)

    def test_another_checkout_of_the_same_files_has_the_same_one(self) -> None:
        before = self.identity()
        moved = self.root / "elsewhere"
        self.plugin.rename(moved)
        self.assertEqual(self.identity(plugin=moved), before)

    def test_editing_a_source_file_changes_it(self) -> None:
        before = self.identity()
        (self.plugin / "helpers" / "__init__.py").write_text("name = 'vault-2'\n")
        self.assertNotEqual(self.identity(), before)

    def test_adding_renaming_or_editing_the_sdk_changes_it(self) -> None:
        before = self.identity()
        (self.plugin / "extra.py").write_text("")
        added = self.identity()
        self.assertNotEqual(added, before)
        (self.plugin / "extra.py").rename(self.plugin / "other.py")
        self.assertNotEqual(self.identity(), added)
        (self.plugin / "other.py").unlink()
        self.assertEqual(self.identity(), before)
        (self.sdk / "__init__.py").write_text("__version__ = '0.1.0'  # edited\n")
        self.assertNotEqual(self.identity(), before)

    def test_the_versions_and_the_wit_count(self) -> None:
        before = self.identity()
        self.assertNotEqual(self.identity(componentize_py="0.25.1"), before)
        self.assertNotEqual(self.identity(sdk="0.1.1"), before)
        self.assertNotEqual(self.identity(python="3.12"), before)
        self.wit.write_text("package mesh:adopt@0.2.0;\n")
        self.assertNotEqual(self.identity(), before)


class Writing(unittest.TestCase):
    def test_the_component_is_written_whole_leaving_nothing_beside_it(self) -> None:
        with tempfile.TemporaryDirectory() as work:
            out = Path(work) / "adopt.wasm"
            _write_atomically(out, b"one")
            _write_atomically(out, b"two")
            self.assertEqual(out.read_bytes(), b"two")
            self.assertEqual(os.listdir(work), ["adopt.wasm"])


if __name__ == "__main__":
    unittest.main()
