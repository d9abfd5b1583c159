import unittest

from mesh_adopt import host
from mesh_adopt.host import ErrorKind, HostCallError

from .support import host as fake, t


class HostErrorWording(unittest.TestCase):
    def setUp(self) -> None:
        self.host = fake()

    def test_each_kind_reads_as_the_rust_sdk_words_it(self) -> None:
        for kind, words, error_kind in (
            ("denied", "denied: not granted", ErrorKind.DENIED),
            ("failed", "the mesh said no: not granted", ErrorKind.FAILED),
            ("timed-out", "timed out: not granted", ErrorKind.TIMED_OUT),
            ("unavailable", "unavailable: not granted", ErrorKind.UNAVAILABLE),
        ):
            self.host.tell_fault = lambda args, kind=kind: (kind, "not granted")
            with self.assertRaises(HostCallError) as caught:
                host.tell(t.Command_Push("node-1"))
            self.assertEqual(caught.exception.code, f"call-{kind}")
            self.assertEqual(caught.exception.message, f"failed to tell `push node-1`: {words}")
            self.assertEqual(caught.exception.kind, error_kind)
            self.assertEqual(caught.exception.reason(), words)
            self.assertEqual(caught.exception.call, "tell `push node-1`")

    def test_a_tell_asks_for_the_ordinary_timeout(self) -> None:
        host.tell(t.Command_Push("node-1"))
        host.tell_within(t.Command_ModuleAdd("/x"), 1500)
        self.assertEqual(self.host.calls, [("tell", "push node-1", 60), ("tell", "module add /x", 1500)])

    def test_a_long_command_is_cut_at_200_characters_with_its_byte_length(self) -> None:
        self.host.tell_fault = lambda args: ("timed-out", "after 60s")
        with self.assertRaises(HostCallError) as caught:
            host.tell(t.Command_ModuleAdd("é" * 300))
        command = "module add " + "é" * 300
        self.assertEqual(
            caught.exception.message,
            f"failed to tell `{command[:200]} … ({len(command.encode())} bytes)`: timed out: after 60s",
        )
        with self.assertRaises(HostCallError) as caught:
            host.tell(t.Command_Push("x" * 195))
        self.assertEqual(caught.exception.call, f"tell `push {'x' * 195}`")

    def test_every_call_is_named_its_own_way(self) -> None:
        self.host.carry_fault = lambda remote: ("failed", "full")
        self.host.credential_fault = lambda name: ("unavailable", "no such credential")
        self.host.inspect_answer = lambda container: ("denied", "grant it")
        self.host.fetch_answer = lambda url: ("failed", "refused")
        cases = [
            (lambda: host.carry_bytes("m.json", b"{}", "/m.json"), "failed to carry `m.json` to `/m.json`: the mesh said no: full"),
            (lambda: host.credential("c"), "failed to get credential `c`: unavailable: no such credential"),
            (lambda: host.inspect("mesh-bus"), "failed to inspect container `mesh-bus`: denied: grant it"),
            (lambda: host.fetch("http://x/"), "failed to fetch `http://x/`: the mesh said no: refused"),
        ]
        for call, message in cases:
            with self.assertRaises(HostCallError) as caught:
                call()
            self.assertEqual(caught.exception.message, message)

    def test_a_secret_is_carried_by_name(self) -> None:
        self.host.credential_fault = lambda name: None
        secret = host.credential("store-superuser")
        self.host.carry_fault = lambda remote: ("timed-out", "slow")
        with self.assertRaises(HostCallError) as caught:
            host.carry_secret(secret, "/accepting-superuser")
        self.assertEqual(
            caught.exception.message,
            "failed to carry secret `store-superuser` to `/accepting-superuser`: timed out: slow",
        )


if __name__ == "__main__":
    unittest.main()
