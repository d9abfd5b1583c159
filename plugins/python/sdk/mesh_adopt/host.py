"""The host's capabilities, wrapped so that every failed call is one :class:`HostCallError`
naming the call.

Plugins call these rather than the raw bindings. A failed call raises
:class:`HostCallError`, which keeps the host's kind (denied, failed, timed out, unavailable)
for a caller that decides on it and, being a :class:`~mesh_adopt.Refusal` (code
``call-denied``, ``call-failed``, ``call-timed-out`` or ``call-unavailable``), ends ``check`` or
``adopt`` with a message quoting the call the way an operator would type it
(``failed to tell `push node-1`: timed out: …``) when nobody catches it.
"""

from __future__ import annotations

import enum
from typing import Any, Callable, Optional, TypeVar

from . import Refusal, case, generated

__all__ = [
    "SHOWN", "TELL_TIMEOUT_SECONDS", "ErrorKind", "HostCallError", "carry_bytes",
    "carry_secret", "credential", "describe", "fetch", "inspect", "now_millis", "say",
    "sleep_millis", "tell", "tell_within", "ungranted", "words"
]

#: How long an ordinary control-plane command may take before the host gives up on it.
TELL_TIMEOUT_SECONDS = 60

#: How many characters of a command a refusal quotes before cutting it (the Rust SDK's
#: ``quoted`` cuts at as many).
SHOWN = 200

T = TypeVar("T")


class ErrorKind(enum.Enum):
    """What kind of "no" the host gave (the contract's ``host-error`` case), for a caller that
    treats some as an answer (a health probe that cannot connect) and others as a reason to
    stop (a call not granted)."""

    #: The host's grants do not allow the call.
    DENIED = "denied"
    #: The mesh was asked and said no.
    FAILED = "failed"
    #: No answer came within the call's timeout.
    TIMED_OUT = "timed-out"
    #: What was asked for is not there to be asked.
    UNAVAILABLE = "unavailable"


_KINDS = {"Denied": ErrorKind.DENIED, "Failed": ErrorKind.FAILED, "TimedOut": ErrorKind.TIMED_OUT,
          "Unavailable": ErrorKind.UNAVAILABLE}
_WORDS = {ErrorKind.DENIED: "denied", ErrorKind.FAILED: "the mesh said no", ErrorKind.TIMED_OUT: "timed out",
          ErrorKind.UNAVAILABLE: "unavailable"}


def describe(error: Any) -> str:
    """A host error (the generated ``HostError_*`` value) in words, its kind first
    (``denied: …``, ``the mesh said no: …``, ``timed out: …``, ``unavailable: …``)."""
    return f"{_WORDS[_KINDS[case(error)]]}: {error.value}"


class HostCallError(Refusal):
    """A host call that did not do what the plugin asked: which call it was and what the host
    answered. As a refusal it reads ``failed to <call>: <kind>: <the host's text>``, with the
    code ``call-<kind>``."""

    def __init__(self, call: str, host_error: Any) -> None:
        #: The call as a refusal names it, e.g. ``tell `push node-1```.
        self.call = call
        #: The error exactly as the host gave it (a generated ``HostError_*`` value).
        self.host_error = host_error
        #: The host's kind of "no".
        self.kind = _KINDS[case(host_error)]
        super().__init__(f"call-{self.kind.value}", f"failed to {call}: {describe(host_error)}")

    def reason(self) -> str:
        """The host's answer in words, its kind first (``denied: …``), without the call: for a
        message that names the call its own way."""
        return describe(self.host_error)


def _calling(call: Callable[[], str], do: Callable[[], T]) -> T:
    """Runs one import, turning the ``Err(host-error)`` it may raise into a
    :class:`HostCallError` named by ``call()`` (built only when needed)."""
    try:
        return do()
    except generated("componentize_py_types").Err as e:
        raise HostCallError(call(), e.value) from None


def words(command: Any) -> str:
    """A command (a generated ``Command_*`` value) as the control plane reads it, e.g.
    ``push node-1``, for messages: the host says, so no SDK spells the vocabulary."""
    return generated("control").words(command)


def _quoted(command: Any) -> str:
    """A command as a refusal quotes it: in full when short, cut when a plugin built it huge."""
    said = words(command)
    if len(said) > SHOWN:
        return f"{said[:SHOWN]} … ({len(said.encode('utf-8'))} bytes)"
    return said


def say(line: str) -> None:
    """Shows a line to the operator, prefixed by the host with the module's name."""
    generated("log").say(line)


def now_millis() -> int:
    """Milliseconds since the run began, on the host's clock (virtual in the simulator)."""
    return generated("clock").now()


def sleep_millis(millis: int) -> None:
    """Waits on the host's clock, which a simulated run advances without waiting."""
    generated("clock").sleep(millis)


def tell(command: Any) -> str:
    """Tells the control plane one command (``Command_Push("node-1")``) with the ordinary
    timeout and returns its output."""
    return tell_within(command, TELL_TIMEOUT_SECONDS)


def tell_within(command: Any, timeout_seconds: int) -> str:
    """Tells the control plane one command, allowing it ``timeout_seconds`` (the host may
    lower it, never raise it)."""
    return _calling(lambda: f"tell `{_quoted(command)}`", lambda: generated("control").tell(command, timeout_seconds))


def carry_bytes(name: str, data: bytes, remote: str) -> None:
    """Carries bytes the plugin has into the control plane at ``remote``, so a later
    :func:`tell` can name it; ``name`` labels it in records."""
    control = generated("control")
    _calling(lambda: f"carry `{name}` to `{remote}`", lambda: control.carry(name, control.Payload_Bytes(bytes(data)), remote))


def carry_secret(secret: Any, remote: str) -> None:
    """Carries a secret into the control plane at ``remote``; the plugin never sees its bytes."""
    control = generated("control")
    name = secret.name()
    _calling(
        lambda: f"carry secret `{name}` to `{remote}`",
        lambda: control.carry(name, control.Payload_Secret(secret), remote),
    )


def credential(name: str) -> Any:
    """Asks the host for a genesis credential by name (a ``Secret`` handle, a context manager
    that releases it). It works in ``check`` as in ``adopt``; a caller that can say what the
    missing credential means words the refusal from :meth:`HostCallError.reason`."""
    return _calling(lambda: f"get credential `{name}`", lambda: generated("control").credential(name))


def inspect(container: str) -> Optional[Any]:
    """Asks the node what a container runs (``image``, ``running``): ``None`` when there is no
    such container. A node that cannot be asked right now (``FAILED``, ``TIMED_OUT``) is often
    worth asking again. Only containers the manifest grants can be asked about;
    :class:`mesh_adopt.grants.Reads` checks that in ``check``."""
    return _calling(lambda: f"inspect container `{container}`", lambda: generated("machine").inspect(container))


def fetch(url: str) -> Any:
    """An HTTP GET (``status``, ``body``). A health probe that cannot connect has an answer,
    not a reason to stop: catch :class:`HostCallError` and look at its ``kind``. Only URLs the
    manifest grants can be fetched; :class:`mesh_adopt.grants.Reads` checks that in ``check``."""
    return _calling(lambda: f"fetch `{url}`", lambda: generated("machine").fetch(url))


def ungranted(inspect: list[str], fetch: list[str]) -> list[str]:
    """Which of these reads the manifest's grants would deny, one line each naming the read and
    the grant to add, by the host's own rules; empty when all are granted."""
    return list(generated("machine").ungranted(list(inspect), list(fetch)))
