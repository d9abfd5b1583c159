"""The JSON Canonicalization Scheme (RFC 8785, JCS), and the number rule of the documents it is
taken of: the push rule's spec digest (docs/push-rule.md) is the SHA-256 of a spec's canonical
form, and the reference node (node/) and the live stand-ins (tests/live/) write it with this one
module, the host with its own (host/runtime/src/model/canonical.rs); all are held to the shared
vectors of tests/jcs/vectors.json.

Canonical form: objects with their keys sorted by UTF-16 code units, no whitespace; strings with
only `"`, `\\` and the control characters escaped (`\\b`, `\\t`, `\\n`, `\\f`, `\\r`, others
`\\u00xx` in lower-case hex), otherwise UTF-8 as they are; numbers as ECMAScript's
Number.prototype.toString writes the 64-bit float they are (`1e+21`, `1e-7`, `4.5`, `-0` as `0`).

The number rule: a manifest or a foundation bundle writes no number beyond ±2^53, where readers
of JSON stop agreeing on a number's value (Python keeps 2^64 exact, a 64-bit float rounds it).
It is decided on the number's text, read exactly as a Decimal, never on a float that has already
rounded it: 9007199254740993.0 is beyond.

Standard library only: the node runs with Debian's python3 and nothing else.

  python3 node/lib/jcs.py canonical < DOCUMENT   its canonical form on stdout; exit 2 when it has none
  python3 node/lib/jcs.py numbers < DOCUMENT     exit 2 naming the first number beyond ±2^53 by its
                                                 JSON Pointer, else 0
"""

import decimal
import json
import sys

# 2^53: the largest magnitude at which every integer has one value to every reader of JSON.
SAFE_LIMIT = 2**53


class NotCanonical(ValueError):
    """A document or value with no canonical form, or not JSON at all."""


# ---------------------------------------------------------------------------------------------
# Reading


def _refuse_constant(name):
    raise NotCanonical("`%s` is not a JSON number" % name)


def _pairs_once(pairs):
    seen = {}
    for key, value in pairs:
        if key in seen:
            raise NotCanonical("the key `%s` is given twice" % key)
        seen[key] = value
    return seen


def loads(text):
    """A JSON text read strictly and exactly: every number a Decimal of its exact value, a key
    given twice or `NaN`/`Infinity` refused."""
    try:
        return json.loads(text, parse_float=decimal.Decimal, parse_int=decimal.Decimal,
                          parse_constant=_refuse_constant, object_pairs_hook=_pairs_once)
    except NotCanonical:
        raise
    except ValueError as e:
        raise NotCanonical("not JSON: %s" % e) from None


# ---------------------------------------------------------------------------------------------
# Writing


def canonical(value):
    """The canonical form (RFC 8785) of a JSON value as Python's json reads one (dict, list, str,
    int, float, bool, None), or as `loads` reads one (Decimal numbers)."""
    out = []
    _write(value, out)
    return "".join(out)


def canonical_text(text):
    """The canonical form of the JSON text `text`."""
    return canonical(loads(text))


def _write(value, out):
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        out.append(_string(value))
    elif isinstance(value, (int, float, decimal.Decimal)):
        out.append(number_text(value))
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _write(item, out)
        out.append("]")
    elif isinstance(value, dict):
        for key in value:
            if not isinstance(key, str):
                raise NotCanonical("the key %r is not a string" % (key,))
            _string(key)  # a lone surrogate is refused before it is sorted
        out.append("{")
        for i, key in enumerate(sorted(value, key=lambda k: k.encode("utf-16-be"))):
            if i:
                out.append(",")
            out.append(_string(key))
            out.append(":")
            _write(value[key], out)
        out.append("}")
    else:
        raise NotCanonical("%r is no JSON value" % (value,))


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def _string(text):
    out = ['"']
    for c in text:
        if c in _ESCAPES:
            out.append(_ESCAPES[c])
        elif c < " ":
            out.append("\\u%04x" % ord(c))
        elif "\ud800" <= c <= "\udfff":
            raise NotCanonical("the string %r holds a lone surrogate, which no UTF-8 can write" % text)
        else:
            out.append(c)
    out.append('"')
    return "".join(out)


def number_text(number):
    """A number as ECMAScript's Number.prototype.toString writes the 64-bit float it is: the
    shortest digits that read back as that float (the even one of two as near), fixed notation
    from 1e-7 up to 1e21, exponent notation (`1e+21`, `1.5e-7`) beyond."""
    try:
        x = float(number)  # correctly rounded, from an int or a Decimal alike
    except OverflowError:
        x = float("inf")
    if x != x or x in (float("inf"), float("-inf")):
        raise NotCanonical("the number %s is no 64-bit float" % number)
    if x == 0:
        return "0"  # -0 too
    sign = "-" if x < 0 else ""
    digits, n = _shortest_digits(abs(x))
    # The value is 0.DIGITS × 10^n.
    k = len(digits)
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * -n + digits
    else:
        exponent = n - 1
        mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
        body = "%se%s%d" % (mantissa, "+" if exponent >= 0 else "-", abs(exponent))
    return sign + body


def _shortest_digits(x):
    """The shortest decimal digits that read back as `x` (positive, finite), without leading or
    trailing zeros, and n such that x is 0.DIGITS × 10^n: what repr writes (Python's repr is
    the shortest that reads back, the even one of two as near)."""
    mantissa, _, exponent = repr(x).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = whole + fraction
    n = len(whole) + int(exponent or 0)
    stripped = digits.lstrip("0")
    n -= len(digits) - len(stripped)
    return stripped.rstrip("0"), n


# ---------------------------------------------------------------------------------------------
# The number rule


def beyond_safe_range(number):
    """Whether a number, exact (an int or a Decimal, as `loads` reads them), lies beyond ±2^53."""
    return abs(number) > SAFE_LIMIT


class _Written(str):
    """A number as the text writes it."""


class _Pairs(list):
    """An object as its (key, value) pairs, in the order the text writes them."""


def first_beyond_safe_range(text):
    """The first number of the JSON text `text`, in the order it is written, that lies beyond
    ±2^53, as (its JSON Pointer, the number as written), or None. Every number counts, that of
    a key given twice too: a reader may take either."""
    try:
        document = json.loads(text, parse_float=_Written, parse_int=_Written, parse_constant=_refuse_constant,
                              object_pairs_hook=_Pairs)
    except NotCanonical:
        raise
    except ValueError as e:
        raise NotCanonical("not JSON: %s" % e) from None
    return _first_beyond(document, "")


def _first_beyond(value, pointer):
    if isinstance(value, _Written):
        return (pointer, str(value)) if beyond_safe_range(decimal.Decimal(value)) else None
    if isinstance(value, _Pairs):
        steps = [(key.replace("~", "~0").replace("/", "~1"), item) for key, item in value]
    elif isinstance(value, list):
        steps = [(str(index), item) for index, item in enumerate(value)]
    else:
        return None
    for step, item in steps:
        found = _first_beyond(item, "%s/%s" % (pointer, step))
        if found:
            return found
    return None


def beyond_message(pointer, number):
    """What a reader says of a number beyond ±2^53: where it is and why it is refused."""
    return ("the number `%s` at `%s` is beyond ±2^53 (%d), where readers of JSON stop agreeing on a number's "
            "value (one rounds it to a 64-bit float, another keeps it exact), so the host and a node could digest "
            "it apart" % (number, pointer or "the document's top", SAFE_LIMIT))


# ---------------------------------------------------------------------------------------------


def main(args):
    if args not in (["canonical"], ["numbers"]):
        print(__doc__.strip().split("\n\n")[-1], file=sys.stderr)
        return 2
    data = sys.stdin.buffer.read()
    try:
        text = data.decode("utf-8")
        if args == ["canonical"]:
            sys.stdout.buffer.write(canonical_text(text).encode("utf-8"))
            return 0
        found = first_beyond_safe_range(text)
    except (UnicodeDecodeError, NotCanonical) as e:
        said = "has no canonical form" if args == ["canonical"] else "cannot be read"
        print("error: the document on standard input %s: %s" % (said, e), file=sys.stderr)
        return 2
    if found:
        print("error: the document on standard input cannot be used: %s" % beyond_message(*found), file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
