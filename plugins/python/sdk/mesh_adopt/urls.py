"""Whether a URL is inside a fetch grant: the rule the host decides a fetch by, here so a
plugin can check its own URLs against its manifest before it asks
(:meth:`mesh_adopt.manifest.Grants.allows_fetch`).

An exact grant matches its URL character for character. A prefix grant (``http://host/api/*``)
matches a URL that starts with the prefix and whose path is plain: only ASCII letters, digits
and ``-._~/``, no ``.`` or ``..`` segment, no empty segment, no percent-encoding at all, no user
information before the host. A server, a proxy or a client library may resolve anything else
(an encoded or full-width dot, ``..;``, a NUL, ``//``) to another path, and the URL it really
reaches would then lie outside the prefix the grant was reviewed as. The query after ``?`` may
hold the characters a query usually does.
"""

from __future__ import annotations

import string
import unicodedata
from typing import Optional

__all__ = ["within_grant"]

_ALNUM = frozenset(string.ascii_letters + string.digits)
_PATH = _ALNUM | frozenset("-._~/")
_QUERY = _ALNUM | frozenset("-._~=&/,:")


def within_grant(grant: str, url: str) -> bool:
    """Whether ``url`` is inside ``grant`` (an exact URL, or a prefix ending in ``*``)."""
    if grant.endswith("*"):
        prefix = grant[:-1]
        return url.startswith(prefix) and _is_normal(url) and _same_authority(prefix, url)
    return grant == url


def _split(url: str) -> Optional[tuple[str, str, str]]:
    """``scheme``, ``authority`` and the rest, for an http(s) URL."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return None
    ends = [i for i in (rest.find(c) for c in "/?#") if i >= 0]
    end = min(ends) if ends else len(rest)
    return scheme, rest[:end], rest[end:]


def _is_normal(url: str) -> bool:
    """A URL whose path no one could resolve to another: see the module's note."""
    split = _split(url)
    if split is None:
        return False
    _, authority, rest = split
    if "@" in authority or "\\" in url or any(unicodedata.category(c) == "Cc" or c == " " for c in url):
        return False
    if "#" in url:
        return False
    path, _, query = rest.partition("?")
    segments = path.split("/")[1:]
    last = max(len(segments) - 1, 0)
    return (
        all(c in _PATH for c in path)
        and all(c in _QUERY for c in query)
        and not any(s in (".", "..") or (s == "" and i != last) for i, s in enumerate(segments))
    )


def _same_authority(prefix: str, url: str) -> bool:
    """When a prefix stops inside the host (``http://host:80*``), the URL's host must be the
    prefix's whole: ``http://host:8080/`` or ``http://host:80.evil/`` is not under it."""
    p, u = _split(prefix), _split(url)
    if p is None or u is None:
        return False
    return p[2] != "" or p[1] == u[1]
