"""The host's capabilities, wrapped so that every failed call is one :class:`HostCallError`
naming the call.

Plugins call these rather than the raw bindings. A failed call raises
:class:`HostCallError`, which keeps the host's kind (denied, failed, timed out, unavailable)
for a caller that decides on it and, being a :class:`~mesh_adopt.types.Refusal`, ends
``check`` or ``adopt`` with a message quoting the call the way an operator would type it
(``failed to tell `push node-1`: timed out: …``) when nobody catches it.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Callable, Optional, TypeVar

from . import _bindings
from .types import Refusal

__all__ = [
    "TELL_TIMEOUT_SECONDS",
    "ContainerState",
    "ErrorKind",
    "HostCallError",
    "HostError",
    "Response",
    "Secret",
    "carry_bytes",
    "carry_secret",
    "credential",
    "describe",
    "fetch",
    "inspect",
    "now_millis",
    "say",
    "sleep_millis",
    "tell",
    "tell_within",
]

#: How long an ordinary control-plane command may take before the host gives up on it.
TELL_TIMEOUT_SECONDS = 60

#: How many characters of a command a refusal quotes before cutting it.
_SHOWN = 200

#: A credential genesis made, held by the host (the bindings' ``control.Secret`` resource):
#: the plugin can carry it into the control plane but never read it.
Secret = Any

T = TypeVar("T")


class ErrorKind(enum.Enum):
    """What kind of "no" the host gave, for a caller that treats some as an answer (a health
    probe that cannot connect) and others as a reason to stop (a call not granted)."""

    #: The host's grants do not allow the call.
    DENIED = "denied"
    #: The mesh was asked and said no.
    FAILED = "failed"
    #: No answer came within the call's timeout.
    TIMED_OUT = "timed-out"
    #: What was asked for is not there to be asked.
    UNAVAILABLE = "unavailable"


_KINDS = {
    "Denied": ErrorKind.DENIED,
    "Failed": ErrorKind.FAILED,
    "TimedOut": ErrorKind.TIMED_OUT,
    "Unavailable": ErrorKind.UNAVAILABLE,
}

_WORDS = {
    ErrorKind.DENIED: "denied",
    ErrorKind.FAILED: "the mesh said no",
    ErrorKind.TIMED_OUT: "timed out",
    ErrorKind.UNAVAILABLE: "unavailable",
}


@dataclass(frozen=True)
class HostError:
    """Why a host call did not do what the plugin asked, as the host said it: the contract's
    ``host-error`` variant, so a plugin can decide whether it is fatal."""

    #: Which of the four cases it is.
    kind: ErrorKind
    #: The host's text.
    message: str

    def __str__(self) -> str:
        return describe(self)


def describe(error: HostError) -> str:
    """A host error in words, its kind first (``denied: …``, ``the mesh said no: …``,
    ``timed out: …``, ``unavailable: …``): what :meth:`HostCallError.reason` says."""
    return f"{_WORDS[error.kind]}: {error.message}"


class HostCallError(Refusal):
    """A host call that did not do what the plugin asked: which call it was and what the host
    answered. As a refusal it reads ``failed to <call>: <kind>: <the host's text>``."""

    def __init__(self, call: str, host: HostError) -> None:
        self._call = call
        self._host = host
        super().__init__(f"failed to {call}: {describe(host)}")

    @property
    def kind(self) -> ErrorKind:
        """The host's kind of "no"."""
        return self._host.kind

    @property
    def host_error(self) -> HostError:
        """The error exactly as the host gave it."""
        return self._host

    @property
    def call(self) -> str:
        """The call as a refusal names it, e.g. ``tell `push node-1```."""
        return self._call

    def reason(self) -> str:
        """The host's answer in words, its kind first (``denied: …``), without the call: for a
        message that names the call its own way."""
        return describe(self._host)


@dataclass(frozen=True)
class ContainerState:
    """What a container is running, as the node answers an inspect."""

    #: The image it was created from.
    image: str
    #: Whether it is up.
    running: bool


@dataclass(frozen=True)
class Response:
    """The answer to a :func:`fetch`."""

    #: The HTTP status code.
    status: int
    #: The body, cut to the host's size limit.
    body: str


def _host_error(raw: Any) -> HostError:
    return HostError(kind=_KINDS[_bindings.variant_case(raw)], message=raw.value)


def _calling(call: Callable[[], str], do: Callable[[], T]) -> T:
    """Runs one import, turning the ``Err(host-error)`` it may raise into a
    :class:`HostCallError` named by ``call()`` (built only when needed)."""
    err = _bindings.err_class()
    try:
        return do()
    except err as e:
        raise HostCallError(call(), _host_error(e.value)) from None


def say(line: str) -> None:
    """Shows a line to the operator, prefixed by the host with the module's name."""
    _bindings.log().say(line)


def now_millis() -> int:
    """Milliseconds since the run began, on the host's clock (virtual in the simulator)."""
    return _bindings.clock().now()


def sleep_millis(millis: int) -> None:
    """Waits on the host's clock, which a simulated run advances without waiting."""
    _bindings.clock().sleep(millis)


def tell(args: Sequence[str]) -> str:
    """Tells the control plane one command with the ordinary timeout and returns its output."""
    return tell_within(args, TELL_TIMEOUT_SECONDS)


def tell_within(args: Sequence[str], timeout_seconds: int) -> str:
    """Tells the control plane one command, allowing it ``timeout_seconds`` (the host may
    lower it, never raise it)."""
    words = list(args)
    return _calling(lambda: f"tell `{_quoted(words)}`", lambda: _bindings.control().tell(words, timeout_seconds))


def _quoted(args: Sequence[str]) -> str:
    """A command as a refusal quotes it: in full when short, cut when a plugin built it huge."""
    command = " ".join(args)
    if len(command) > _SHOWN:
        return f"{command[:_SHOWN]} … ({len(command.encode('utf-8'))} bytes)"
    return command


def carry_bytes(name: str, data: bytes, remote: str) -> None:
    """Carries bytes the plugin has into the control plane at ``remote``, so a later
    :func:`tell` can name it; ``name`` labels it in records."""
    control = _bindings.control()
    _calling(
        lambda: f"carry `{name}` to `{remote}`",
        lambda: control.carry(name, control.Payload_Bytes(bytes(data)), remote),
    )


def carry_secret(secret: Secret, remote: str) -> None:
    """Carries a secret into the control plane at ``remote``; the plugin never sees its bytes."""
    control = _bindings.control()
    name = secret.name()
    _calling(
        lambda: f"carry secret `{name}` to `{remote}`",
        lambda: control.carry(name, control.Payload_Secret(secret), remote),
    )


def credential(name: str) -> Secret:
    """Asks the host for a genesis credential by name. It works in ``check`` as in ``adopt``;
    a caller that can say what the missing credential means for its module words the refusal
    from :meth:`HostCallError.reason`. The handle is a context manager that releases it."""
    return _calling(lambda: f"get credential `{name}`", lambda: _bindings.control().credential(name))


def inspect(container: str) -> Optional[ContainerState]:
    """Asks the node what a container runs: ``None`` when there is no such container.

    A node that cannot be asked right now (:attr:`ErrorKind.FAILED`,
    :attr:`ErrorKind.TIMED_OUT`) is often worth asking again. Only containers the manifest
    grants in ``adopt.grants.inspect`` can be asked about; :class:`mesh_adopt.grants.Reads`
    checks that in ``check``.
    """
    state = _calling(lambda: f"inspect container `{container}`", lambda: _bindings.machine().inspect(container))
    return None if state is None else ContainerState(image=state.image, running=bool(state.running))


def fetch(url: str) -> Response:
    """An HTTP GET. A health probe that cannot connect has an answer, not a reason to stop:
    catch :class:`HostCallError` and look at its :attr:`~HostCallError.kind`. Only URLs the
    manifest grants in ``adopt.grants.fetch`` can be fetched; :class:`mesh_adopt.grants.Reads`
    checks that in ``check``."""
    response = _calling(lambda: f"fetch `{url}`", lambda: _bindings.machine().fetch(url))
    return Response(status=response.status, body=response.body)
