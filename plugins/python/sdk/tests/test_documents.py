"""The manifest, the foundation bundle, the grants lint and the command vocabulary."""

import unittest

from mesh_adopt import Refusal
from mesh_adopt import command as cmd
from mesh_adopt.foundation import adopt_in_place, container, file_path
from mesh_adopt.grants import Reads
from mesh_adopt.manifest import PLUGIN_FILE, ParseError, mounts, parse, read

from .support import Container, File, Other, context


class Manifests(unittest.TestCase):
    def test_resolves_accesses_and_reads_mounts(self) -> None:
        m = parse(
            b'{"resources":[{"type":"container","name":"bus","volumes":["${access:s}:/data","/etc/b:/etc/nats:ro"]},'
            b'{"type":"service","name":"x"}],"accesses":[{"id":"s","path":"/var/s"}]}'
        )
        [server] = m.resolved_containers()
        at = mounts(server.volumes)
        self.assertEqual(at["/data"], "/var/s")
        self.assertEqual(at["/etc/nats"], "/etc/b")
        self.assertEqual(m.adopt.plugin, PLUGIN_FILE)

    def test_says_how_bytes_fail_to_be_a_manifest(self) -> None:
        for data, start in (
            (b"{", "not JSON"),
            (b"[1]", "not a JSON object"),
            (b'["postgres"]', "not a JSON object"),
            (b'{"name":"a"} x', "not JSON"),
            (b'{"resources": 5}', "not a module manifest: invalid type: integer `5`, expected a sequence"),
            (b'{"name":"first","name":"second"}', "not a module manifest: duplicate field `name`"),
            (
                b'{"adopt":{"grants":{"tell":["x"]}}}',
                "not a module manifest: unknown field `tell`, expected one of `credentials`, `inspect`, `fetch`",
            ),
        ):
            with self.assertRaises(ParseError) as caught:
                parse(data)
            self.assertTrue(str(caught.exception).startswith(start), str(caught.exception))

    def test_a_refusal_names_the_module_and_the_same_bytes_are_read_once(self) -> None:
        with self.assertRaises(Refusal) as caught:
            read("nats", b"[1]")
        self.assertEqual(caught.exception.message, "cannot read the `nats` module's manifest: not a JSON object")
        first = read("nats", b'{"name":"nats"}')
        self.assertIs(first, read("nats", b'{"name":"nats"}'))
        self.assertEqual(read("nats", b'{"name":"other"}').name, "other")

    def test_grants_allow_by_name_and_fetch_by_url(self) -> None:
        g = parse(
            b'{"adopt":{"grants":{"credentials":["c"],"inspect":["bus"],'
            b'"fetch":["http://127.0.0.1:8222/healthz","http://127.0.0.1:9000/api/*"]}}}'
        ).adopt.grants
        self.assertTrue(g.allows_credential("c") and not g.allows_credential("d"))
        self.assertTrue(g.allows_inspect("bus") and not g.allows_inspect("bus-2"))
        self.assertTrue(g.allows_fetch("http://127.0.0.1:8222/healthz"))
        self.assertFalse(g.allows_fetch("http://127.0.0.1:8222/healthz?x"))
        self.assertTrue(g.allows_fetch("http://127.0.0.1:9000/api/streams"))
        for url in (
            "http://127.0.0.1:9000/api/../admin",
            "http://127.0.0.1:9000/api/%2e%2e/admin",
            "http://127.0.0.1:9000/api//admin",
            "http://127.0.0.1:9000/api/x#/../../admin",
        ):
            self.assertFalse(g.allows_fetch(url), url)
        host = parse(b'{"adopt":{"grants":{"fetch":["http://127.0.0.1:8222*"]}}}').adopt.grants
        self.assertTrue(host.allows_fetch("http://127.0.0.1:8222/healthz"))
        self.assertFalse(host.allows_fetch("http://127.0.0.1:82229/healthz"))
        self.assertFalse(host.allows_fetch("http://127.0.0.1:8222@evil.test/"))


STORE = Container("store", "mesh-store", "postgres:16", [])


class Foundation(unittest.TestCase):
    def ctx(self, image: str, name: str, foundation=None):
        return context(
            manifest={"resources": [{"type": "container", "name": name, "image": image}]},
            foundation=[STORE] if foundation is None else foundation,
        )

    def test_adopts_the_container_of_the_same_name_and_image(self) -> None:
        self.assertEqual(adopt_in_place(self.ctx("postgres:16", "mesh-store"), "store", "store", "x").name, "mesh-store")

    def test_names_both_sides_of_a_different_name_or_image(self) -> None:
        cases = [
            (
                self.ctx("postgres:16", "other"),
                "store",
                "store",
                "the `postgres` module declares no container named `mesh-store`, so nothing in it adopts the "
                "foundation's store; its server container must carry the name genesis raised",
            ),
            (
                self.ctx("postgres:17", "mesh-store"),
                "store",
                "pin both",
                "the `postgres` module's container `mesh-store` is pinned to image `postgres:17`, but the "
                "foundation's store runs `postgres:16`. Adopting in place needs the same image: pin both. "
                "Nothing has been registered",
            ),
        ]
        for ctx, what, different, message in cases:
            with self.assertRaises(Refusal) as caught:
                adopt_in_place(ctx, "store", what, different)
            self.assertEqual(caught.exception.message, message)

    def test_an_absent_or_other_resource_is_refused_listing_the_bundle(self) -> None:
        bundle = [Other("control", "service"), Other("store", "volume"), File("bus-accounts", "/etc/b")]
        with self.assertRaises(Refusal) as caught:
            container(bundle, "store", "store", "postgres")
        self.assertEqual(
            caught.exception.message,
            "the foundation bundle's `store` is a volume, not a container: the `postgres` module has no store to adopt",
        )
        with self.assertRaises(Refusal) as caught:
            container(bundle, "db", "database", "postgres")
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


class Grants(unittest.TestCase):
    def test_names_each_ungranted_read_and_its_grant(self) -> None:
        reads = Reads().inspect("mesh-bus").fetch("http://127.0.0.1:8222/healthz")
        with self.assertRaises(Refusal) as caught:
            reads.check(context(module="nats", manifest={}))
        self.assertEqual(
            caught.exception.message,
            "the `nats` module's adopt step reads what its manifest does not grant, so the host would deny it "
            "mid-adoption:\n"
            ' - inspect container `mesh-bus`: add "mesh-bus" to `adopt.grants.inspect` in manifest.json\n'
            ' - fetch `http://127.0.0.1:8222/healthz`: add "http://127.0.0.1:8222/healthz" to '
            "`adopt.grants.fetch` in manifest.json\n"
            "Nothing has been registered",
        )
        granted = {"adopt": {"grants": {"inspect": ["mesh-bus"], "fetch": ["http://127.0.0.1:8222/*"]}}}
        reads.check(context(module="nats", manifest=granted))


class Commands(unittest.TestCase):
    def test_every_command_reads_back_as_its_words(self) -> None:
        for text in (
            "module add /postgres-module.json",
            "build https://git/cat.git --path modules/postgres --ref main --wait 1200s",
            "module issue postgres --node node-1",
            "assign node-1 postgres",
            "prepare node-1 postgres",
            "secret accept node-1 postgres superuser --from /accepting-superuser",
            "push node-1",
        ):
            self.assertEqual(str(cmd.parse(text.split(" "))), text)

    def test_names_are_checked_words_and_the_build_is_fixed(self) -> None:
        for words, message in (
            (["push", "--all"], "its node `--all` starts with `-`, so it could be read as an option"),
            (["assign", "node-1", "../x"], "its module `../x` contains `..`"),
            (["assign", "node-1", "a\tb"], "its module `a\\tb` contains whitespace or a control character"),
            (["assign", "node-1", ""], "its module `` is empty"),
            ("build r --path elsewhere --ref main --wait 1200s".split(), "its build path is `elsewhere`; it must be `modules/<module>`"),
            ("build r --path modules/m --ref main --wait 1s".split(), "its build wait is `1s`; it must be `1200s`"),
            (["module", "remove", "x"], "it is none of: module add, build, module issue, assign, prepare, secret accept, push"),
        ):
            with self.assertRaises(cmd.CommandError) as caught:
                cmd.parse(words)
            self.assertEqual(str(caught.exception), message)


if __name__ == "__main__":
    unittest.main()
