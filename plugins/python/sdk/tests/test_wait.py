import unittest
from datetime import timedelta

from mesh_adopt import Refusal
from mesh_adopt.host import HostCallError
from mesh_adopt.wait import WaitTimedOut, container_state, wait_for_image, wait_until

from .support import host as fake
from .fake_bindings import machine

ContainerState = machine.ContainerState


class Waits(unittest.TestCase):
    def setUp(self) -> None:
        self.host = fake()

    def test_a_timeout_says_what_was_awaited_for_how_long_and_what_was_seen(self) -> None:
        self.assertEqual(WaitTimedOut("the bus", timedelta(seconds=120)).message, "gave up waiting for the bus after 120s")
        self.assertEqual(
            WaitTimedOut("the bus", timedelta(milliseconds=1500), "it runs `nats:2`").message,
            "gave up waiting for the bus after 1500ms: it runs `nats:2`",
        )
        self.assertEqual(WaitTimedOut("x", 2.5).message, "gave up waiting for x after 2500ms")

    def test_the_condition_is_asked_at_once_and_after_each_poll_until_the_bound(self) -> None:
        asked = []
        with self.assertRaises(WaitTimedOut) as caught:
            wait_until("the bus", 10, 4, lambda: asked.append(self.host.clock))
        self.assertEqual(asked, [0, 4000, 8000, 12000])
        self.assertEqual(caught.exception.message, "gave up waiting for the bus after 10s")
        self.assertEqual(caught.exception.code, "wait-timed-out")
        self.assertEqual(wait_until("one", 10, 4, lambda: "done"), "done")

    def test_a_refusal_from_the_condition_stays_itself(self) -> None:
        def refuse():
            raise Refusal("call-denied", "denied")

        with self.assertRaises(Refusal) as caught:
            wait_until("x", 10, 1, refuse)
        self.assertEqual(caught.exception.message, "denied")
        self.assertNotIsInstance(caught.exception, WaitTimedOut)

    def test_wait_for_image_says_what_the_container_ran_last(self) -> None:
        self.host.inspect_answer = lambda c: ContainerState("nats:2.10.22-alpine", True)
        with self.assertRaises(WaitTimedOut) as caught:
            wait_for_image("mesh-bus", "nats:3", timedelta(seconds=120), timedelta(seconds=2))
        self.assertEqual(
            caught.exception.message,
            "gave up waiting for container `mesh-bus` to run `nats:3` after 120s: it runs `nats:2.10.22-alpine`",
        )
        for answer, seen in (
            (None, "it is not there, or the node cannot say"),
            (("failed", "engine busy"), "it is not there, or the node cannot say"),
            (ContainerState("nats:3", False), "it is stopped, on `nats:3`"),
        ):
            self.host.inspect_answer = lambda c, answer=answer: answer
            with self.assertRaises(WaitTimedOut) as caught:
                wait_for_image("mesh-bus", "nats:3", 1, 1)
            self.assertEqual(caught.exception.seen, seen)
        self.host.inspect_answer = lambda c: ContainerState("nats:3", True)
        self.assertEqual(wait_for_image("mesh-bus", "nats:3", 1, 1), ContainerState("nats:3", True))

    def test_only_a_denied_inspect_stops_a_wait(self) -> None:
        self.host.inspect_answer = lambda c: ("timed-out", "slow")
        self.assertIsNone(container_state("mesh-bus"))
        self.host.inspect_answer = lambda c: ("denied", "add it to `adopt.grants.inspect`")
        with self.assertRaises(HostCallError) as caught:
            wait_for_image("mesh-bus", "nats:3", 1, 1)
        self.assertEqual(
            caught.exception.message, "failed to inspect container `mesh-bus`: denied: add it to `adopt.grants.inspect`"
        )


if __name__ == "__main__":
    unittest.main()
