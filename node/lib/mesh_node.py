"""What node/control and node/genesis share: the state root and its paths, the node's lock,
atomic JSON state, what a manifest or a foundation bundle must be to be read at all, the push
rule's spec digest (docs/push-rule.md, written here on its own, from the document, not from the
host's code; its canonical form is node/lib/jcs.py's), and raising a container on the engine
through node/podman.

Standard library only: the node runs with Debian's python3 and nothing else.
"""

import base64
import fcntl
import hashlib
import json
import os
import shlex
import subprocess
import sys
import time

import jcs

NODE_DIR = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
# The engine every podman call runs: node/podman, or the command MESH_NODE_ENGINE names (a
# stand-in, where the control plane's protocol is exercised on a machine with no engine set up).
PODMAN = os.environ.get("MESH_NODE_ENGINE") or os.path.join(NODE_DIR, "podman")
ROOT = os.environ.get("MESH_NODE_ROOT", "/var/lib/mesh-adopt-node")
CONTROL = os.path.join(ROOT, "control")
STATE = os.path.join(ROOT, "state")
SECRETS = os.path.join(STATE, "secrets")
GENESIS_CREDENTIALS = os.path.join(STATE, "genesis", "credentials")
LOCK = os.path.join(CONTROL, "lock")
# The mesh's lock a run of the host holds (node/control lock): the holder's line.
MESH_LOCK = os.path.join(CONTROL, "mesh-lock.json")
NODE_LOG = os.path.join(CONTROL, "node.log")
SEALS_LOG = os.path.join(CONTROL, "seals.log")

# The node this control plane runs; the only one it knows.
NODE_NAME = os.environ.get("MESH_NODE_NAME", "node-1")

SPEC_LABEL = "org.mesh-adopt.spec"
OWNER_LABEL = "org.mesh-adopt.owner"
GENESIS_OWNER = "genesis"
# A resource's fields that are its identity or the node's bookkeeping, not its spec.
NOT_SPEC = ("id", "type", "kind", "credentials")
# The kinds of resource the contract knows (plugins/manifest/src/resource_kind.rs): what a
# manifest's `type` and a bundle's `kind` may say. A push raises containers only.
RESOURCE_KINDS = ("container", "file", "network", "service", "volume")
# Spec fields the node applies when it creates a container; any other still counts in the
# digest but has no effect here (ports, networks, healthcheck: every container is on the
# host's network and nothing checks health).
APPLIED = ("name", "image", "volumes", "environment", "labels", "entrypoint", "command", "user", "restart")

# How long a command waits for the node's lock before it gives up, in seconds.
LOCK_WAIT = float(os.environ.get("MESH_CONTROL_LOCK_WAIT", "600"))
# How long one podman call may take; a stop waits STOP_SECONDS for the process first.
PODMAN_TIMEOUT = 120
STOP_SECONDS = 30


class NodeError(Exception):
    """A failure to report as `error: ...` with a non-zero status."""


def fail(message):
    raise NodeError(message)


def now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


# ---------------------------------------------------------------------------------------------
# Files


def write_atomically(path, data, mode=0o644):
    """Writes `data` (bytes or str) to `path` through a temporary file and a rename, so a reader
    sees the old content or the new, never part of either."""
    if isinstance(data, str):
        data = data.encode()
    directory = os.path.dirname(path)
    os.makedirs(directory, exist_ok=True)
    temporary = os.path.join(directory, ".%s.%d.tmp" % (os.path.basename(path), os.getpid()))
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, mode)
        os.rename(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        raise


def load_state(name, default):
    """A JSON state file under control/, or `default` when there is none yet."""
    path = os.path.join(CONTROL, name)
    try:
        with open(path, "rb") as f:
            return json.loads(f.read())
    except FileNotFoundError:
        return default
    except ValueError as e:
        fail("the control plane's state `%s` is not JSON (%s): mend it, or put back a copy; the node's containers, "
             "volumes and secrets do not depend on it and are untouched" % (path, e))


def save_state(name, value):
    write_atomically(os.path.join(CONTROL, name), json.dumps(value, indent=1, sort_keys=True) + "\n")


def append_line(path, line):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "a") as f:
        f.write(line + "\n")
        f.flush()


def node_log(line):
    append_line(NODE_LOG, line)


def strict_json(data, what):
    """Parses JSON, refusing an object that gives a key twice (which of the two counts would be
    up to the reader)."""

    def pairs(items):
        seen = {}
        for key, value in items:
            if key in seen:
                fail("%s gives the key `%s` twice" % (what, key))
            seen[key] = value
        return seen

    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
    except UnicodeDecodeError as e:
        fail("%s is not UTF-8 (the byte at offset %d is not)" % (what, e.start))
    try:
        return json.loads(text, object_pairs_hook=pairs)
    except ValueError as e:
        fail("%s is not JSON: %s" % (what, e))


def check_numbers(data, what):
    """Refuses a document (a manifest, a foundation bundle) that writes a number beyond ±2^53
    anywhere, naming it by its JSON Pointer: readers of JSON do not agree on such a number's
    value, so the host and this node could digest one spec apart. Decided on the number's text
    (jcs.first_beyond_safe_range); -0 is 0, and within."""
    try:
        found = jcs.first_beyond_safe_range(data.decode("utf-8") if isinstance(data, bytes) else data)
    except (UnicodeDecodeError, jcs.NotCanonical) as e:
        fail("%s is not JSON: %s" % (what, e))
    if found:
        fail("%s is ambiguous: %s" % (what, jcs.beyond_message(*found)))


def word_fault(word):
    """Why `word`, a resource's id, name or kind, cannot be one, if it cannot: a control
    character (a terminal acts on it where it is shown, and commands carry it) or a path
    separator (whatever keys files on it would reach elsewhere)."""
    if any(ord(c) < 32 or 127 <= ord(c) < 160 for c in word):
        return "holds a control character; an id, name or kind is shown and carried in commands as it is written"
    if "/" in word or "\\" in word:
        return "holds a path separator (`/` or `\\`); an id, name or kind is one word, never a path"
    return None


def check_words(resource, index, fields, what):
    """Refuses a resource (the `index`th of a document's `resources`) whose id, kind or name,
    each of `fields` it has, is no string or no plain word (word_fault), naming its JSON Pointer."""
    for field in fields:
        word = resource.get(field)
        if word is None:
            continue
        if not isinstance(word, str):
            fail("%s is malformed: `/resources/%d/%s` is not a string" % (what, index, field))
        fault = word_fault(word)
        if fault:
            fail("%s is malformed: `/resources/%d/%s` (`%s`) %s"
                 % (what, index, field, word.encode("unicode_escape").decode(), fault))


def check_kind(resource, index, field, what):
    """Refuses a resource whose kind (a manifest's `type`, a bundle's `kind`) the contract does not
    know: one in another case (`Container`) is a mistake said as such."""
    kind = resource.get(field)
    if kind in RESOURCE_KINDS:
        return
    known = ", ".join("`%s`" % k for k in RESOURCE_KINDS)
    if kind is None:
        fail("%s is malformed: its resource `%s` (`/resources/%d`) has no `%s`; a resource's %s is one of %s"
             % (what, resource.get("id"), index, field, field, known))
    if isinstance(kind, str) and kind.strip().lower() in RESOURCE_KINDS:
        fail("%s is ambiguous: its resource `%s` is of %s `%s`; kinds are lower case, with no spaces (`%s`)"
             % (what, resource.get("id"), field, kind, kind.strip().lower()))
    fail("%s is malformed: its resource `%s` is of %s `%s` (`/resources/%d/%s`), which the contract does not know; "
         "a resource's %s is one of %s" % (what, resource.get("id"), field, kind, index, field, field, known))


def check_word(what, value):
    """A name a command carries: not empty, no leading `-`, no `..`, no whitespace or control
    characters (the vocabulary's rule)."""
    if not isinstance(value, str) or value == "":
        fail("its %s is empty" % what)
    if value.startswith("-"):
        fail("its %s `%s` starts with `-`, so it could be read as an option" % (what, value))
    if ".." in value:
        fail("its %s `%s` contains `..`" % (what, value))
    if any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in value):
        fail("its %s `%s` contains whitespace or a control character" % (what, value.encode("unicode_escape").decode()))


# ---------------------------------------------------------------------------------------------
# The node's lock


class Lock:
    """The node's lock: an exclusive flock on control/lock, held by every command so none
    interleave. The file says who holds it, for whoever has to wait."""

    def __init__(self, doing):
        os.makedirs(CONTROL, mode=0o700, exist_ok=True)
        self.fd = os.open(LOCK, os.O_RDWR | os.O_CREAT, 0o600)
        deadline = time.monotonic() + LOCK_WAIT
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = self.holder()
                    os.close(self.fd)
                    fail(
                        "the node's lock `%s` is held by %s and was not released within %ds; nothing was done"
                        % (LOCK, holder or "another command", LOCK_WAIT)
                    )
                time.sleep(0.1)
        self.say(doing)

    @staticmethod
    def inherited(fd, doing):
        """The lock a parent took, on the descriptor it passed down (the push worker's)."""
        lock = Lock.__new__(Lock)
        lock.fd = fd
        try:
            # The same open file already holds it: this only confirms that it does.
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            fail("the push worker was not handed the node's lock (descriptor %d: %s)" % (fd, e))
        lock.say(doing)
        return lock

    def __enter__(self):
        return self

    def __exit__(self, *_):
        self.release()

    def release(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def say(self, doing):
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, ("pid %d (`%s`, since %s)\n" % (os.getpid(), doing, now())).encode(), 0)

    def holder(self):
        try:
            with open(LOCK) as f:
                return f.read().strip()
        except OSError:
            return ""


# ---------------------------------------------------------------------------------------------
# The push rule's spec and digest (docs/push-rule.md)


def resolve_volumes(volumes, accesses):
    resolved = []
    for volume in volumes:
        for access_id, path in accesses.items():
            volume = volume.replace("${access:%s}" % access_id, path)
        resolved.append(volume)
    return resolved


def is_empty(value):
    return value is None or value == "" or value == [] or value == {}


def spec_of(resource, accesses=None):
    """The container's spec: the resource less `id`, `type`, `kind` and `credentials`, its
    volumes' accesses resolved and sorted, empty fields removed."""
    spec = {k: v for k, v in resource.items() if k not in NOT_SPEC}
    if isinstance(spec.get("volumes"), list):
        spec["volumes"] = sorted(resolve_volumes(spec["volumes"], accesses or {}))
    return {k: v for k, v in spec.items() if not is_empty(v)}


def canonical(spec):
    """The spec's canonical form (RFC 8785): what its digest is taken of."""
    return jcs.canonical(spec)


def digest_of(spec):
    return hashlib.sha256(canonical(spec).encode("utf-8")).hexdigest()


def label_of(digest):
    return "sha256:" + digest


# ---------------------------------------------------------------------------------------------
# The engine


def podman(*args, timeout=PODMAN_TIMEOUT, check=True):
    """Runs node/podman; on failure (with `check`) raises naming the command and podman's
    first lines of error."""
    argv = [PODMAN] + [str(a) for a in args]
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        fail("`node/podman %s` gave no answer within %ds" % (" ".join(args[:3]), timeout))
    if check and done.returncode != 0:
        fail("`node/podman %s` exited with status %d: %s" % (shown(args), done.returncode, first_lines(done.stderr)))
    return done


def shown(args, most=6):
    words = [shlex.quote(str(a)) for a in args]
    return " ".join(words[:most]) + (" …" if len(words) > most else "")


def first_lines(text, most=3):
    lines = [l.strip() for l in (text or "").splitlines() if l.strip()]
    return " | ".join(lines[:most]) if lines else "(no error output)"


def inspect(name):
    """The engine's JSON for the container `name`, or None when there is none."""
    done = podman("container", "inspect", name, check=False)
    if done.returncode != 0:
        if "no such container" in done.stderr.lower():
            return None
        fail("`node/podman container inspect %s` exited with status %d: %s" % (name, done.returncode, first_lines(done.stderr)))
    try:
        [found] = json.loads(done.stdout)
    except ValueError:
        fail("`node/podman container inspect %s` answered something other than one container's JSON" % name)
    return found


def mesh_containers():
    """Every container on the engine named mesh-*, running or not."""
    done = podman("ps", "--all", "--format", "{{.Names}}")
    return [n for n in done.stdout.split() if n.startswith("mesh-")]


def host_path_of(volume):
    """The host side of `host:inside[:opts]`, when it is a path (not a named volume)."""
    host = volume.split(":", 1)[0]
    return host if host.startswith("/") else None


def within(path, directory):
    path, directory = os.path.realpath(path), os.path.realpath(directory)
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def make_host_paths(volumes):
    """Creates each missing host directory a container mounts, when it is under the state
    root; one elsewhere is left for the engine to refuse, naming it."""
    for volume in volumes:
        host = host_path_of(volume)
        if host and not os.path.exists(host) and within(host, STATE):
            os.makedirs(host, exist_ok=True)


def as_words(value, what, name):
    if isinstance(value, str):
        return shlex.split(value)
    if isinstance(value, list) and all(isinstance(w, str) for w in value):
        return value
    fail("the container `%s`'s %s is neither a string nor a list of strings" % (name, what))


def pairs_of(value, what, name):
    """`environment` or `labels`: an object of KEY: VALUE, or a list of `KEY=VALUE`."""
    if isinstance(value, dict):
        out = []
        for key, v in value.items():
            if isinstance(v, bool):
                v = "true" if v else "false"
            elif v is None:
                v = ""
            elif not isinstance(v, (str, int, float)):
                fail("the container `%s`'s %s `%s` is not a string or a number" % (name, what, key))
            out.append("%s=%s" % (key, v))
        return out
    if isinstance(value, list) and all(isinstance(w, str) for w in value):
        return value
    fail("the container `%s`'s %s is neither an object nor a list of KEY=VALUE" % (name, what))


def run_arguments(spec, owner, digest, mounts=()):
    """`podman run` arguments for a container of this spec, labelled with its digest and owner;
    `mounts` are further `(host file, inside)` pairs mounted read-only (secrets)."""
    name, image = spec.get("name"), spec.get("image")
    if not isinstance(name, str) or not name or not isinstance(image, str) or not image:
        fail("a container to raise needs a name and an image; this one has %s" % canonical(spec))
    args = ["run", "-d", "--name", name, "--network=host",
            "--label", "%s=%s" % (SPEC_LABEL, label_of(digest)), "--label", "%s=%s" % (OWNER_LABEL, owner)]
    for pair in pairs_of(spec.get("environment", {}), "environment", name):
        args += ["-e", pair]
    for pair in pairs_of(spec.get("labels", {}), "labels", name):
        if pair.split("=", 1)[0] in (SPEC_LABEL, OWNER_LABEL):
            fail("the container `%s` sets the label `%s`, which the node records itself" % (name, pair.split("=", 1)[0]))
        args += ["--label", pair]
    entrypoint = spec.get("entrypoint")
    if entrypoint is not None:
        args += ["--entrypoint", json.dumps(as_words(entrypoint, "entrypoint", name))]
    if "user" in spec:
        args += ["--user", str(spec["user"])]
    if "restart" in spec:
        args += ["--restart", str(spec["restart"])]
    volumes = spec.get("volumes", [])
    make_host_paths(volumes)
    for volume in volumes:
        args += ["-v", volume]
    for host, inside in mounts:
        args += ["-v", "%s:%s:ro" % (host, inside)]
    args.append(image)
    if "command" in spec:
        args += as_words(spec["command"], "command", name)
    return args


def create(spec, owner, digest, mounts=()):
    """Creates and starts the container; its id."""
    done = podman(*run_arguments(spec, owner, digest, mounts))
    return done.stdout.strip().splitlines()[-1] if done.stdout.strip() else inspect(spec["name"])["Id"]


def remove(name):
    podman("stop", "--time", str(STOP_SECONDS), name, timeout=STOP_SECONDS + PODMAN_TIMEOUT)
    podman("rm", name)


def short(container_id):
    return container_id[:12]


def fresh_secret():
    """Fresh random bytes, as a sealed secret holds them: 32 bytes, base64."""
    return base64.b64encode(os.urandom(32)) + b"\n"


def report(error):
    print("error: %s" % error, file=sys.stderr)
