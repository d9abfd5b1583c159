"""Bounded waits on the host's clock, for what a push sets going on the node.

The clock is the host's (virtual in the simulator, so a two-minute wait costs a test
nothing), the condition is always asked at least once, and the wait never outlives its bound
by more than one poll: a plugin that waits on its own loop easily gets one of those wrong.

Durations are :class:`datetime.timedelta`, or a number of seconds.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any, Optional, TypeVar, Union

from . import Refusal, host
from .host import ErrorKind, HostCallError

__all__ = ["Duration", "WaitTimedOut", "container_state", "wait_for_image", "wait_until"]

T = TypeVar("T")

#: A wait's bound or poll: a timedelta, or seconds.
Duration = Union[timedelta, int, float]


def _duration(value: Duration) -> timedelta:
    return value if isinstance(value, timedelta) else timedelta(seconds=value)


def _millis(duration: timedelta) -> int:
    return duration // timedelta(milliseconds=1)


def _seconds(duration: timedelta) -> str:
    """A duration as a refusal says it: whole seconds as ``120s``, anything else in
    milliseconds."""
    if duration.microseconds == 0:
        return f"{duration // timedelta(seconds=1)}s"
    return f"{_millis(duration)}ms"


class WaitTimedOut(Refusal):
    """A wait whose bound passed before its condition held. Being a refusal
    (``wait-timed-out``), it ends ``adopt`` with ``gave up waiting for <what> after <bound>[: <seen>]`` unless the caller
    catches it to word its own timeout."""

    def __init__(self, what: str, timeout: Duration, seen: str = "") -> None:
        #: What was waited for, as :func:`wait_until` was given it.
        self.what = what
        #: The bound.
        self.timeout = _duration(timeout)
        #: What was seen last, in words, when the waiting helper knows; else empty.
        self.seen = seen
        message = f"gave up waiting for {what} after {_seconds(self.timeout)}"
        super().__init__("wait-timed-out", f"{message}: {seen}" if seen else message)


def wait_until(what: str, timeout: Duration, poll: Duration, condition: Callable[[], Optional[T]]) -> T:
    """Asks ``condition`` until it gives something other than ``None``, sleeping ``poll`` on
    the host's clock between asks, for at most ``timeout`` (``--wait``, usually): once at once,
    then again after each poll until the bound has passed.

    ``what`` names what is waited for ("container `mesh-bus` to run …") in the
    :class:`WaitTimedOut` it raises otherwise. A refusal the condition raises stops the wait
    and propagates as it is. A caller that words its own timeout from what it saw keeps that in
    its own variables, which the condition updates, and catches :class:`WaitTimedOut`.
    """
    bound = _duration(timeout)
    pause = _millis(_duration(poll))
    deadline = host.now_millis() + _millis(bound)
    while True:
        done = condition()
        if done is not None:
            return done
        if host.now_millis() >= deadline:
            raise WaitTimedOut(what, bound)
        host.sleep_millis(pause)


def container_state(container: str) -> Optional[Any]:
    """What a container is, as a wait asks: ``None`` when it is not there or the node cannot
    say right now (asking again may tell). Only a denied inspect raises: waiting on would end
    in a misleading "gone"."""
    try:
        return host.inspect(container)
    except HostCallError as error:
        if error.kind == ErrorKind.DENIED:
            raise
        return None


def wait_for_image(container: str, image: str, timeout: Duration, poll: Duration) -> Any:
    """Waits, as :func:`wait_until` does, until ``container`` is up on ``image``, asking with
    :func:`container_state`; the :class:`WaitTimedOut` says what it ran last. The container
    must be granted in ``adopt.grants.inspect`` (:meth:`mesh_adopt.grants.Reads.inspect`
    checks that in ``check``)."""
    seen = ""

    def up() -> Optional[Any]:
        nonlocal seen
        state = container_state(container)
        if state is None:
            seen = "it is not there, or the node cannot say"
        elif state.running:
            seen = f"it runs `{state.image}`"
        else:
            seen = f"it is stopped, on `{state.image}`"
        return state if state is not None and state.running and state.image == image else None

    try:
        return wait_until(f"container `{container}` to run `{image}`", timeout, poll, up)
    except WaitTimedOut as timed_out:
        raise WaitTimedOut(timed_out.what, timed_out.timeout, seen) from None
