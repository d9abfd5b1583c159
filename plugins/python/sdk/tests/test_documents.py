"""The foundation bundle, the grants check and the words of a command."""

import unittest

from mesh_adopt import Refusal
from mesh_adopt.foundation import adopt_in_place, container, file_path, mounts
from mesh_adopt.grants import Reads
from mesh_adopt.host import words
from mesh_adopt.provider import Provider, accept_command

from .support import CATALOGUE, context, host, manifest, t
from .support import container as bundled

STORE = bundled("store", "mesh-store", "postgres:16")


class Foundation(unittest.TestCase):
    def ctx(self, image: str, name: str, foundation=None):
        declared = manifest(containers=[t.Container(id="server", name=name, image=image, volumes=[])])
        return context(manifest_=declared, foundation=[STORE] if foundation is None else foundation)

    def test_adopts_the_container_of_the_same_name_and_image(self) -> None:
        self.assertEqual(adopt_in_place(self.ctx("postgres:16", "mesh-store"), "store", "store", "x").name, "mesh-store")

    def test_names_both_sides_of_a_different_name_or_image(self) -> None:
        cases = [
            (
                self.ctx("postgres:16", "other"),
                "pin both",
                "container-not-declared",
                "the `postgres` module declares no container named `mesh-store`, so nothing in it adopts the "
                "foundation's store; its server container must carry the name genesis raised",
            ),
            (
                self.ctx("postgres:17", "mesh-store"),
                "pin both",
                "image-differs",
                "the `postgres` module's container `mesh-store` is pinned to image `postgres:17`, but the "
                "foundation's store runs `postgres:16`. Adopting in place needs the same image: pin both. "
                "Nothing has been registered",
            ),
        ]
        for ctx, different, code, message in cases:
            with self.assertRaises(Refusal) as caught:
                adopt_in_place(ctx, "store", "store", different)
            self.assertEqual((caught.exception.code, caught.exception.message), (code, message))

    def test_an_absent_or_other_resource_is_refused_listing_the_bundle(self) -> None:
        bundle = [
            t.BundleResource_Other(t.Other(id="control", kind="service")),
            t.BundleResource_Other(t.Other(id="store", kind="volume")),
            t.BundleResource_File(t.File(id="bus-accounts", path="/etc/b")),
        ]
        with self.assertRaises(Refusal) as caught:
            container(bundle, "store", "store", "postgres")
        self.assertEqual(caught.exception.code, "foundation-not-a-container")
        self.assertEqual(
            caught.exception.message,
            "the foundation bundle's `store` is a volume, not a container: the `postgres` module has no store to adopt",
        )
        with self.assertRaises(Refusal) as caught:
            container(bundle, "bus-accounts", "bus", "nats")
        self.assertIn("`bus-accounts` is a file, not a container", caught.exception.message)
        with self.assertRaises(Refusal) as caught:
            container(bundle, "db", "database", "postgres")
        self.assertEqual(caught.exception.code, "foundation-missing")
        self.assertEqual(
            caught.exception.message,
            "the foundation bundle has no `db`, so there is no database for the `postgres` module to adopt; "
            "the bundle declares: control, store, bus-accounts",
        )
        with self.assertRaises(Refusal) as caught:
            container([], "db", "database", "postgres")
        self.assertTrue(caught.exception.message.endswith("the bundle declares: nothing"))
        self.assertEqual(file_path(bundle, "bus-accounts"), "/etc/b")
        self.assertEqual(file_path(bundle, "store"), "")

    def test_mounts_map_each_inside_path_to_its_host_path(self) -> None:
        at = mounts(["/var/s:/data", "/etc/b:/etc/nats:ro", "no-colon"])
        self.assertEqual(at, {"/data": "/var/s", "/etc/nats": "/etc/b"})


class Grants(unittest.TestCase):
    def test_the_host_says_what_is_ungranted_and_check_refuses_listing_it(self) -> None:
        fake = host()
        fake.ungranted_answer = lambda inspect, fetch: [
            f'inspect container `{inspect[0]}`: add "{inspect[0]}" to `adopt.grants.inspect` in manifest.json'
        ]
        reads = Reads().inspect("mesh-bus").fetch("http://127.0.0.1:8222/healthz")
        with self.assertRaises(Refusal) as caught:
            reads.check(context(module="nats"))
        self.assertEqual(fake.calls, [("ungranted", ["mesh-bus"], ["http://127.0.0.1:8222/healthz"])])
        self.assertEqual(caught.exception.code, "not-granted")
        self.assertEqual(
            caught.exception.message,
            "the `nats` module's adopt step reads what its manifest does not grant, so the host would deny it "
            "mid-adoption:\n"
            ' - inspect container `mesh-bus`: add "mesh-bus" to `adopt.grants.inspect` in manifest.json\n'
            "Nothing has been registered",
        )
        fake.ungranted_answer = lambda inspect, fetch: []
        reads.check(context(module="nats"))


class Commands(unittest.TestCase):
    def test_every_command_reads_as_the_rust_sdk_words_it(self) -> None:
        ctx = context()
        commands = Provider(ctx).commands([accept_command(ctx, "superuser")])
        self.assertEqual(
            [words(c) for c in commands],
            [
                "module add /postgres-module.json",
                f"build {CATALOGUE} --path modules/postgres --ref main --wait 1200s",
                "module issue postgres --node node-1",
                "assign node-1 postgres",
                "prepare node-1 postgres",
                "secret accept node-1 postgres superuser --from /accepting-superuser",
                "push node-1",
            ],
        )
        self.assertEqual(
            [type(c).__name__ for c in commands],
            ["Command_ModuleAdd", "Command_Build", "Command_ModuleIssue", "Command_Assign", "Command_Prepare",
             "Command_SecretAccept", "Command_Push"],
        )


if __name__ == "__main__":
    unittest.main()
