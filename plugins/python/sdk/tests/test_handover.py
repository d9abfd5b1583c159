import unittest

from mesh_adopt import Refusal
from mesh_adopt.handover import Handover
from mesh_adopt.host import words
from mesh_adopt.provider import Provider

from .support import context, host as fake, manifest


def superuser(ctx):
    return Handover(ctx, "superuser", "store-superuser", "the store's superuser")


class HandoverTests(unittest.TestCase):
    def setUp(self) -> None:
        self.host = fake()

    def test_the_plan_and_the_step_name_one_accept(self) -> None:
        handover = superuser(context())
        self.assertEqual(
            words(handover.command()), "secret accept node-1 postgres superuser --from /accepting-superuser"
        )
        self.assertEqual(
            handover.summary(), "carry genesis credential `store-superuser` in as secret `superuser` before the push"
        )

    def test_a_secret_the_manifest_does_not_declare_is_refused_before_the_credential_is_asked_for(self) -> None:
        for secrets, declared in (([], "none"), (["a", "b"], "`a`, `b`")):
            with self.assertRaises(Refusal) as caught:
                superuser(context(manifest_=manifest(secrets=secrets))).check()
            self.assertEqual(caught.exception.code, "secret-not-declared")
            self.assertEqual(
                caught.exception.message,
                f"the `postgres` module's manifest declares no secret `superuser` (it declares {declared}), so "
                "the node would not accept the store's superuser as one of its secrets: add \"superuser\" to "
                "`secrets` in its manifest.json. Nothing has been registered",
            )
        self.assertEqual(self.host.calls, [])

    def test_a_credential_the_host_cannot_give_is_refused_with_its_reason(self) -> None:
        self.host.credential_fault = lambda name: ("unavailable", "no credential `store-superuser`")
        message = (
            "the store's superuser (genesis credential `store-superuser`) cannot be had "
            "(unavailable: no credential `store-superuser`), so the `postgres` module would have nothing "
            "to open its server with, and the mesh cannot make up the one the server already has"
        )
        for step in (superuser(context()).check, superuser(context()).deliver):
            with self.assertRaises(Refusal) as caught:
                step()
            self.assertEqual((caught.exception.code, caught.exception.message), ("credential-unavailable", message))

    def test_deliver_carries_the_secret_in_and_accepts_it(self) -> None:
        ctx = context()
        superuser(ctx).check()
        Provider(ctx).install(superuser(ctx).deliver)
        self.assertIn(("carry", "store-superuser", "store-superuser", "/accepting-superuser"), self.host.calls)
        self.assertEqual(
            self.host.tells()[-2:],
            ["secret accept node-1 postgres superuser --from /accepting-superuser", "push node-1"],
        )
        self.assertIn("accepted superuser: the store's superuser, as genesis made it", self.host.said)


if __name__ == "__main__":
    unittest.main()
