import unittest

from mesh_adopt import Refusal
from mesh_adopt.host import HostCallError, words
from mesh_adopt.provider import Provider, accept_command

from .support import CATALOGUE, context, host as fake, t

SEQUENCE = [
    "module add /postgres-module.json",
    f"build {CATALOGUE} --path modules/postgres --ref main --wait 1200s",
    "module issue postgres --node node-1",
    "assign node-1 postgres",
    "prepare node-1 postgres",
]


class Commands(unittest.TestCase):
    def test_the_plan_lists_the_sequence_with_the_own_step_before_the_push(self) -> None:
        ctx = context()
        accept = accept_command(ctx, "superuser")
        self.assertEqual(
            [words(c) for c in Provider(ctx).commands([accept])],
            SEQUENCE + ["secret accept node-1 postgres superuser --from /accepting-superuser", "push node-1"],
        )
        self.assertEqual([words(c) for c in Provider(ctx).commands()], SEQUENCE + ["push node-1"])

    def test_a_named_ref_is_built(self) -> None:
        ctx = context()
        ctx.options.catalog_source = t.CatalogSource(repository=CATALOGUE, ref="v2")
        self.assertEqual(Provider(ctx).commands()[1], t.Command_Build(t.Build(CATALOGUE, "postgres", "v2")))

    def test_no_catalogue_source_is_refused_in_the_plan_and_the_install(self) -> None:
        ctx = context(source=False)
        message = (
            "the `postgres` module must be built, and no catalogue source was given to build it from "
            "(--catalog-source REPO[@REF]): the catalogue checkout is only where its manifest is read; "
            "a builder clones the catalogue repository"
        )
        with self.assertRaises(Refusal) as caught:
            Provider(ctx).commands()
        self.assertEqual((caught.exception.code, caught.exception.message), ("no-catalogue-source", message))
        host = fake()
        with self.assertRaises(Refusal) as caught:
            Provider(ctx).install()
        self.assertEqual(caught.exception.message, message)
        self.assertEqual(host.calls, [])


class Install(unittest.TestCase):
    def setUp(self) -> None:
        self.host = fake()
        self.ctx = context()

    def test_the_calls_are_the_plans_commands_with_its_lines_and_timeouts(self) -> None:
        steps = []
        Provider(self.ctx, "(the provisioner)").install(lambda: steps.append("own"))
        self.assertEqual(self.host.calls[0], ("carry", "postgres-module.json", self.ctx.manifest_bytes, "/postgres-module.json"))
        tells = [c for c in self.host.calls if c[0] == "tell"]
        self.assertEqual([c[1] for c in tells], SEQUENCE + ["push node-1"])
        self.assertEqual([c[2] for c in tells], [60, 1500, 60, 60, 60, 60])
        self.assertEqual(steps, ["own"])
        self.assertEqual(
            self.host.said,
            [
                "registered postgres",
                "building postgres (the provisioner)",
                "account issued for postgres",
                "prepared postgres on node-1",
                "pushed node-1",
            ],
        )

    def test_an_empty_build_note_leaves_no_trailing_space(self) -> None:
        Provider(self.ctx, "").install()
        self.assertIn("building postgres", self.host.said)

    def test_no_account_is_no_reason_to_stop(self) -> None:
        self.host.tell_fault = lambda args: ("failed", "account service unavailable") if args[:2] == ["module", "issue"] else None
        Provider(self.ctx).install()
        self.assertIn("no account for postgres: it declares nothing to say on the bus", self.host.said)
        self.assertEqual(self.host.tells()[-1], "push node-1")

    def test_a_build_that_times_out_is_refused_naming_it(self) -> None:
        self.host.tell_fault = lambda args: ("timed-out", "no answer within 1500s") if args[0] == "build" else None
        with self.assertRaises(HostCallError) as caught:
            Provider(self.ctx).install()
        self.assertEqual(
            caught.exception.message,
            f"failed to tell `build {CATALOGUE} --path modules/postgres --ref main --wait 1200s`: "
            "timed out: no answer within 1500s",
        )
        self.assertEqual(caught.exception.code, "call-timed-out")
        self.assertEqual(self.host.tells(), SEQUENCE[:2])


if __name__ == "__main__":
    unittest.main()
