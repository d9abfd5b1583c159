"""The package as a whole: its contract, its version and its export."""

import contextlib
import io
import tomllib
import unittest
from pathlib import Path

import mesh_adopt
from mesh_adopt import Plan, Plugin, Report, export, refuse

from . import fake_bindings
from .support import container, context, host as fake, t


class Contract(unittest.TestCase):
    def test_the_package_version_is_the_contract_version(self) -> None:
        package = next(
            line.strip().removeprefix("package mesh:adopt@").removesuffix(";")
            for line in mesh_adopt.WIT.splitlines()
            if line.strip().startswith("package mesh:adopt@")
        )
        self.assertEqual(package, "0.2.0")
        self.assertEqual(package, mesh_adopt.__version__)
        self.assertEqual(mesh_adopt.WORLD, f"mesh:adopt/adopter@{package}")
        pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
        if pyproject.is_file():
            self.assertEqual(tomllib.loads(pyproject.read_text())["project"]["version"], package)

    def test_the_wit_is_a_real_file_in_the_package(self) -> None:
        self.assertTrue(Path(mesh_adopt.wit_path()).is_file())
        self.assertIn("world adopter", mesh_adopt.WIT)

    def test_the_contracts_types_are_the_generated_ones(self) -> None:
        self.assertIs(mesh_adopt.Plan, t.Plan)
        self.assertIs(mesh_adopt.Command_Push, t.Command_Push)
        with self.assertRaises(AttributeError):
            mesh_adopt.Nothing  # noqa: B018


class Echo(Plugin):
    def check(self, ctx):
        if ctx.module == "no":
            raise refuse("not-this-one", "not this one")
        return Plan(summary=[ctx.module, ctx.foundation[0].value.name], commands=[t.Command_Push(ctx.options.node)])

    def adopt(self, ctx):
        return Report(summary=f"{ctx.module} on {ctx.options.catalog_source.repository}")


def given(module: str):
    return context(module=module, foundation=[container("store", "mesh-store", "p")])


class Export(unittest.TestCase):
    def setUp(self) -> None:
        fake()
        self.world = export(Echo)()

    def test_the_context_given_once_reaches_check_and_adopt(self) -> None:
        self.world.init(given("postgres"))
        self.world.init(given("other"))
        self.assertEqual(
            self.world.check(), t.Plan(summary=["postgres", "mesh-store"], commands=[t.Command_Push("node-1")])
        )
        self.assertEqual(self.world.adopt(), t.Report(summary="postgres on https://git.mesh.test/catalogue.git"))

    def test_a_refusal_crosses_as_err_refusal_with_its_code(self) -> None:
        self.world.init(given("no"))
        with self.assertRaises(fake_bindings.Err) as caught:
            self.world.check()
        self.assertEqual(caught.exception.value, t.Refusal(code="not-this-one", message="not this one"))

    def test_an_export_before_init_is_refused_no_context(self) -> None:
        for call in (self.world.check, self.world.adopt):
            with self.assertRaises(fake_bindings.Err) as caught:
                call()
            self.assertEqual(caught.exception.value.code, "no-context")


class Misshapen(Plugin):
    """Results of the wrong shape, as a plugin's bug would make them."""

    def __init__(self, planned=None, done=None):
        self.planned, self.done = planned, done

    def check(self, ctx):
        return self.planned

    def adopt(self, ctx):
        return self.done


class Bugs(unittest.TestCase):
    def setUp(self) -> None:
        fake()

    def world(self, plugin):
        world = export(plugin)()
        world.init(given("postgres"))
        return world

    def test_a_result_of_the_wrong_shape_is_a_type_error_naming_the_shape(self) -> None:
        for planned, said in [
            (Plan(summary="one line", commands=[]), "a Plan's `summary` is a list of lines (list[str]), not 'one line'"),
            (Plan(summary=[], commands=[["push", "node-1"]]), "a Plan's `commands` is a list of commands"),
            ("a plan", "`check` returned str, not a mesh_adopt.Plan"),
        ]:
            with self.assertRaises(TypeError) as caught:
                self.world(Misshapen(planned=planned)).check()
            self.assertIn(said, str(caught.exception))
        for done, said in [
            ("done", "`adopt` returned str, not a mesh_adopt.Report"),
            (Report(summary=["done"]), "a Report's `summary` is one line (str), not ['done']"),
        ]:
            with self.assertRaises(TypeError) as caught:
                self.world(Misshapen(done=done)).adopt()
            self.assertIn(said, str(caught.exception))

    def test_a_traceback_is_printed_without_reading_source_files(self) -> None:
        import linecache
        import traceback

        saved = linecache.checkcache, linecache.updatecache
        try:
            export(Echo)
            try:
                {}["missing-key"]
            except KeyError as e:
                printed = "".join(traceback.format_exception(e))
            self.assertIn("KeyError: 'missing-key'", printed)
            self.assertIn(__file__, printed)
            self.assertNotIn('{}["missing-key"]', printed, "the source line was read")
        finally:
            linecache.checkcache, linecache.updatecache = saved
            linecache.clearcache()


class ReadsAFile(Plugin):
    """A plugin that asks the filesystem at run time, as the sandbox stops."""

    def check(self, ctx):
        try:
            open(Path(__file__).with_name("no-such-file"))
        except OSError:
            pass
        try:
            import mesh_adopt_no_such_module  # noqa: F401
        except ImportError:
            pass
        return Plan(summary=[], commands=[])

    def adopt(self, ctx):
        return Report(summary="")


class Sandbox(unittest.TestCase):
    def test_a_filesystem_call_in_an_export_prints_its_python_file_and_line_first(self) -> None:
        fake()
        world = export(ReadsAFile)()
        world.init(given("postgres"))
        printed = io.StringIO()
        with contextlib.redirect_stderr(printed):
            world.check()
            open(__file__).close()  # outside an export: not watched
        said = printed.getvalue()
        self.assertIn("mesh_adopt: the plugin called open(", said)
        self.assertIn("no-such-file", said)
        self.assertIn(f'File "{__file__}", line ', said)
        self.assertIn(", in check", said)
        self.assertIn("mesh_adopt: the plugin imported 'mesh_adopt_no_such_module' at run time", said)
        self.assertEqual(said.count("mesh_adopt: the plugin"), 2, said)


if __name__ == "__main__":
    unittest.main()
