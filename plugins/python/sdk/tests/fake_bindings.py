"""componentize-py's generated bindings for the SDK's WIT, made once per test run with the
componentize-py of this environment (``componentize-py bindings``), with a scripted host
behind their imports, so the SDK runs under plain ``python -m unittest`` on the very types a
component hands it.

:class:`FakeHost` answers the imports the way a test scripts it and records every call; a
host error is given as ``("timed-out", "text")`` and raised as the bindings raise it,
``Err(HostError_TimedOut("text"))``.
"""

from __future__ import annotations

import atexit
import importlib
import shutil
import subprocess
import sys
import tempfile
from typing import Any, Callable, Optional

import mesh_adopt
import mesh_adopt.host


def _generate() -> None:
    """Generates the bindings into a temporary directory on ``sys.path``, once."""
    if "wit_world" in sys.modules:
        return
    out = tempfile.mkdtemp(prefix="mesh-adopt-bindings-")
    atexit.register(shutil.rmtree, out, True)
    runner = "import sys; from componentize_py import script; sys.argv[0] = 'componentize-py'; sys.exit(script())"
    command = [sys.executable, "-c", runner, "-d", mesh_adopt.wit_path(), "-w", "adopter", "bindings", out]
    made = subprocess.run(command, capture_output=True, text=True)
    if made.returncode != 0:
        raise RuntimeError(f"componentize-py could not generate the bindings: {made.stderr}")
    sys.path.insert(0, out)


_generate()
types = importlib.import_module("wit_world.imports.types")
control = importlib.import_module("wit_world.imports.control")
machine = importlib.import_module("wit_world.imports.machine")
Err = importlib.import_module("componentize_py_types").Err

_HOST_ERROR = {
    "denied": types.HostError_Denied,
    "failed": types.HostError_Failed,
    "timed-out": types.HostError_TimedOut,
    "unavailable": types.HostError_Unavailable,
}


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


Fault = Optional[tuple[str, str]]


class FakeHost:
    """The host a test scripts: ``tell_fault(words)`` (and the others) give a fault or None."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []
        self.said: list[str] = []
        self.clock = 0
        self.tell_fault: Callable[[list[str]], Fault] = lambda words: None
        self.carry_fault: Callable[[str], Fault] = lambda remote: None
        self.credential_fault: Callable[[str], Fault] = lambda name: None
        self.inspect_answer: Callable[[str], Any] = lambda container: None
        self.fetch_answer: Callable[[str], Any] = lambda url: machine.Response(200, "ok")
        self.ungranted_answer: Callable[[list[str], list[str]], list[str]] = lambda inspect, fetch: []

    @staticmethod
    def _raise(fault: Fault) -> None:
        if fault is not None:
            kind, text = fault
            raise Err(_HOST_ERROR[kind](text))

    # control
    def words(self, command: Any) -> str:
        """How the host reads a command, as the fake host answers (the real one is the host's)."""
        v = command.value
        return {
            "ModuleAdd": lambda: f"module add {v}",
            "Build": lambda: f"build {v.repository} --path modules/{v.module} --ref {v.ref} --wait 1200s",
            "ModuleIssue": lambda: f"module issue {v.module} --node {v.node}",
            "Assign": lambda: f"assign {v.node} {v.module}",
            "Prepare": lambda: f"prepare {v.node} {v.module}",
            "SecretAccept": lambda: f"secret accept {v.node} {v.module} {v.secret} --from {v.source}",
            "Push": lambda: f"push {v}",
        }[mesh_adopt.case(command)]()

    def tell(self, command: Any, timeout_seconds: int) -> str:
        words = mesh_adopt.host.words(command)
        self.calls.append(("tell", words, timeout_seconds))
        self._raise(self.tell_fault(words.split(" ")))
        return ""

    def carry(self, name: str, payload: Any, remote: str) -> None:
        what = payload.value.name() if isinstance(payload, control.Payload_Secret) else bytes(payload.value)
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

    def ungranted(self, inspect: list[str], fetch: list[str]) -> list[str]:
        self.calls.append(("ungranted", inspect, fetch))
        return self.ungranted_answer(inspect, fetch)

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


def _forward(method: str) -> Callable[..., Any]:
    return lambda *args: getattr(_current, method)(*args)


for _module, _names in (
    ("control", ("tell", "carry", "credential", "words")),
    ("machine", ("inspect", "fetch", "ungranted")),
    ("log", ("say",)),
    ("clock", ("now", "sleep")),
):
    for _name in _names:
        setattr(importlib.import_module(f"wit_world.imports.{_module}"), _name, _forward(_name))


def install() -> FakeHost:
    """A fresh host behind the generated imports."""
    global _current
    _current = FakeHost()
    return _current
