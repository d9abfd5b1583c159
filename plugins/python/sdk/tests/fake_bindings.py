"""A stand-in for the modules componentize-py generates (``wit_world``,
``componentize_py_types``), so the SDK runs under plain ``python3 -m unittest``.

:class:`FakeHost` answers the imports the way a test scripts it and records every call; a
host error is given as ``("timed-out", "text")`` and raised as the bindings raise it,
``Err(HostError_TimedOut("text"))``.
"""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass
from typing import Any, Callable, Optional


@dataclass(frozen=True)
class Err(Exception):
    value: Any


def _case(variant: str, case: str) -> type:
    return dataclass(type(f"{variant}_{case}", (), {"__annotations__": {"value": Any}}))


_HOST_ERROR = {kind: _case("HostError", case) for kind, case in (
    ("denied", "Denied"),
    ("failed", "Failed"),
    ("timed-out", "TimedOut"),
    ("unavailable", "Unavailable"),
)}


@dataclass
class Plan:
    summary: list
    commands: list


@dataclass
class Report:
    summary: str


@dataclass
class Refusal:
    message: str


@dataclass
class ContainerState:
    image: str
    running: bool


@dataclass
class Response:
    status: int
    body: str


class Secret:
    """A credential handle: the fake, like the host, never shows its bytes."""

    def __init__(self, name: str) -> None:
        self._name = name
        self.released = False

    def name(self) -> str:
        return self._name

    def __enter__(self) -> "Secret":
        return self

    def __exit__(self, *_: object) -> None:
        self.released = True


Payload_Bytes = _case("Payload", "Bytes")
Payload_Secret = _case("Payload", "Secret")

Fault = Optional[tuple[str, str]]


class FakeHost:
    """The host a test scripts: ``tell_fault(args)`` (and the others) give a fault or None."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []
        self.said: list[str] = []
        self.clock = 0
        self.tell_fault: Callable[[list[str]], Fault] = lambda args: None
        self.carry_fault: Callable[[str], Fault] = lambda remote: None
        self.credential_fault: Callable[[str], Fault] = lambda name: None
        self.inspect_answer: Callable[[str], Any] = lambda container: None
        self.fetch_answer: Callable[[str], Any] = lambda url: Response(200, "ok")

    @staticmethod
    def _raise(fault: Fault) -> None:
        if fault is not None:
            kind, text = fault
            raise Err(_HOST_ERROR[kind](text))

    # control
    def tell(self, args: list[str], timeout_seconds: int) -> str:
        self.calls.append(("tell", " ".join(args), timeout_seconds))
        self._raise(self.tell_fault(args))
        return ""

    def carry(self, name: str, payload: Any, remote: str) -> None:
        what = payload.value.name() if isinstance(payload, Payload_Secret) else bytes(payload.value)
        self.calls.append(("carry", name, what, remote))
        self._raise(self.carry_fault(remote))

    def credential(self, name: str) -> Secret:
        self.calls.append(("credential", name))
        self._raise(self.credential_fault(name))
        return Secret(name)

    # machine
    def inspect(self, container: str) -> Any:
        self.calls.append(("inspect", container))
        answer = self.inspect_answer(container)
        if isinstance(answer, tuple):
            self._raise(answer)
        return answer

    def fetch(self, url: str) -> Any:
        self.calls.append(("fetch", url))
        answer = self.fetch_answer(url)
        if isinstance(answer, tuple):
            self._raise(answer)
        return answer

    # log
    def say(self, line: str) -> None:
        self.said.append(line)

    # clock
    def now(self) -> int:
        return self.clock

    def sleep(self, millis: int) -> None:
        self.calls.append(("sleep", millis))
        self.clock += millis

    def tells(self) -> list[str]:
        return [call[1] for call in self.calls if call[0] == "tell"]


_current = FakeHost()


def install() -> FakeHost:
    """Puts the fake modules in ``sys.modules`` (once) and a fresh host behind them."""
    global _current
    _current = FakeHost()
    if "wit_world" in sys.modules and getattr(sys.modules["wit_world"], "FAKE", False):
        return _current

    def mod(name: str, **attrs: Any) -> types.ModuleType:
        m = types.ModuleType(name)
        m.__dict__.update(attrs)
        sys.modules[name] = m
        return m

    def forward(method: str) -> Callable[..., Any]:
        return lambda *args: getattr(_current, method)(*args)

    mod("componentize_py_types", Err=Err)
    mod("wit_world", FAKE=True)
    mod("wit_world.imports")
    mod(
        "wit_world.imports.types",
        Plan=Plan,
        Report=Report,
        Refusal=Refusal,
        **{cls.__name__: cls for cls in _HOST_ERROR.values()},
    )
    mod(
        "wit_world.imports.control",
        Secret=Secret,
        Payload_Bytes=Payload_Bytes,
        Payload_Secret=Payload_Secret,
        tell=forward("tell"),
        carry=forward("carry"),
        credential=forward("credential"),
    )
    mod(
        "wit_world.imports.machine",
        ContainerState=ContainerState,
        Response=Response,
        inspect=forward("inspect"),
        fetch=forward("fetch"),
    )
    mod("wit_world.imports.log", say=forward("say"))
    mod("wit_world.imports.clock", now=forward("now"), sleep=forward("sleep"))
    return _current
