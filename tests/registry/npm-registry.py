"""A registry for npm packages packed with `npm pack`, served from a directory: what the
tests take `@mesh-adopt/sdk` from by version, as a catalogue would from the npm registry.

    python3 npm-registry.py DIR

serves each `DIR/<scope>-<name>-<version>.tgz` on 127.0.0.1 at a port of the system's choice,
printing `http://127.0.0.1:PORT/` on its first line once it listens. Point a scope at it with
`@scope:registry=http://127.0.0.1:PORT/` in an `.npmrc`.
"""

import base64
import hashlib
import http.server
import json
import pathlib
import sys
import tarfile
import urllib.parse


def packuments(directory: pathlib.Path, base: str) -> dict:
    """Every package in `directory`, by name, as the registry's metadata documents."""
    found: dict = {}
    for tgz in sorted(directory.glob("*.tgz")):
        with tarfile.open(tgz) as archive:
            manifest = json.load(archive.extractfile("package/package.json"))
        data = tgz.read_bytes()
        version = dict(manifest)
        version["dist"] = {
            "tarball": base + tgz.name,
            "shasum": hashlib.sha1(data).hexdigest(),
            "integrity": "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode(),
        }
        document = found.setdefault(manifest["name"], {"name": manifest["name"], "versions": {}, "dist-tags": {}})
        document["versions"][manifest["version"]] = version
        document["dist-tags"]["latest"] = manifest["version"]
    return found


def main() -> None:
    directory = pathlib.Path(sys.argv[1])

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the name http.server calls)
            path = urllib.parse.unquote(self.path.lstrip("/"))
            document = packuments(directory, base).get(path)
            if document is not None:
                body = json.dumps(document).encode()
            elif "/" not in path and (directory / path).is_file():
                body = (directory / path).read_bytes()
            else:
                self.send_error(404, "no such package here")
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    print(base, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
