"""The builtin functions, registered by name and argument count.

Each builtin is ``function(evaluator, value, arguments, env)`` and yields its outputs; ``arguments`` are the
unevaluated argument filters (most builtins evaluate them against ``value``).
"""

import math
import re

from jqlite.errors import FilterRuntimeError
from jqlite.values import SortKey, compare, describe, equal, is_true, type_of

BUILTINS = {}


def builtin(name, arity=0):
    def register(function):
        key = (name, arity)
        if key in BUILTINS:
            raise ValueError(f"builtin {name}/{arity} registered twice")
        BUILTINS[key] = function
        return function
    return register


def known_function(name, arity):
    return (name, arity) in BUILTINS


def single(evaluator, node, value, env):
    """Every output of ``node`` (arguments that produce several values make the builtin run once each)."""
    return evaluator.evaluate(node, value, env)


def require(value, kind, what):
    if type_of(value) != kind:
        raise FilterRuntimeError(f"{what} needs an {kind}, not {describe(value)}"
                                 if kind[0] in "aeiou" else f"{what} needs a {kind}, not {describe(value)}")
    return value


# -- basics ----------------------------------------------------------------------------------------
@builtin("empty")
def _empty(evaluator, value, arguments, env):
    return iter(())


@builtin("error", 1)
def _error(evaluator, value, arguments, env):
    for message in single(evaluator, arguments[0], value, env):
        raise FilterRuntimeError(message if isinstance(message, str) else describe(message))
    return iter(())


@builtin("not")
def _not(evaluator, value, arguments, env):
    yield not is_true(value)


@builtin("type")
def _type(evaluator, value, arguments, env):
    yield type_of(value)


@builtin("length")
def _length(evaluator, value, arguments, env):
    kind = type_of(value)
    if kind == "null":
        yield 0
    elif kind == "boolean":
        raise FilterRuntimeError("boolean has no length")
    elif kind == "number":
        yield abs(value)
    else:
        yield len(value)


@builtin("keys")
def _keys(evaluator, value, arguments, env):
    kind = type_of(value)
    if kind == "object":
        yield sorted(value)
    elif kind == "array":
        yield list(range(len(value)))
    else:
        raise FilterRuntimeError(f"{describe(value)} has no keys")


@builtin("values")
def _values(evaluator, value, arguments, env):
    if is_true(value):
        yield value


@builtin("has", 1)
def _has(evaluator, value, arguments, env):
    for key in single(evaluator, arguments[0], value, env):
        if type_of(value) == "object" and isinstance(key, str):
            yield key in value
        elif type_of(value) == "array" and type_of(key) == "number":
            yield 0 <= key < len(value)
        else:
            raise FilterRuntimeError(f"cannot check whether {describe(value)} has key {describe(key)}")


@builtin("tostring")
def _tostring(evaluator, value, arguments, env):
    if isinstance(value, str):
        yield value
    else:
        from jqlite.output import compact
        yield compact(value)


@builtin("tonumber")
def _tonumber(evaluator, value, arguments, env):
    if type_of(value) == "number":
        yield value
        return
    text = require(value, "string", "tonumber")
    try:
        number = float(text)
    except ValueError:
        raise FilterRuntimeError(f"cannot parse {text!r} as a number") from None
    yield int(number) if number.is_integer() and "." not in text and "e" not in text.lower() else number


# -- arrays ----------------------------------------------------------------------------------------
@builtin("map", 1)
def _map(evaluator, value, arguments, env):
    items = value.values() if type_of(value) == "object" else require(value, "array", "map")
    result = []
    for item in items:
        result.extend(evaluator.evaluate(arguments[0], item, env))
    yield result


@builtin("select", 1)
def _select(evaluator, value, arguments, env):
    for condition in evaluator.evaluate(arguments[0], value, env):
        if is_true(condition):
            yield value


@builtin("add")
def _add(evaluator, value, arguments, env):
    items = list(value.values()) if type_of(value) == "object" else require(value, "array", "add")
    total = None
    for item in items:
        total = evaluator.arithmetic("+", total, item)
    yield total


@builtin("sort")
def _sort(evaluator, value, arguments, env):
    yield sorted(require(value, "array", "sort"), key=SortKey)


@builtin("sort_by", 1)
def _sort_by(evaluator, value, arguments, env):
    items = require(value, "array", "sort_by")
    keyed = [(list(evaluator.evaluate(arguments[0], item, env)), item) for item in items]
    yield [item for _, item in sorted(keyed, key=lambda pair: SortKey(pair[0]))]


@builtin("group_by", 1)
def _group_by(evaluator, value, arguments, env):
    items = require(value, "array", "group_by")
    keyed = sorted(((list(evaluator.evaluate(arguments[0], item, env)), item) for item in items),
                   key=lambda pair: SortKey(pair[0]))
    groups = []
    for key, item in keyed:
        if groups and equal(groups[-1][0], key):
            groups[-1][1].append(item)
        else:
            groups.append((key, [item]))
    yield [members for _, members in groups]


@builtin("unique")
def _unique(evaluator, value, arguments, env):
    result = []
    for item in sorted(require(value, "array", "unique"), key=SortKey):
        if not result or not equal(result[-1], item):
            result.append(item)
    yield result


@builtin("min")
def _min(evaluator, value, arguments, env):
    items = require(value, "array", "min")
    yield min(items, key=SortKey) if items else None


@builtin("max")
def _max(evaluator, value, arguments, env):
    items = require(value, "array", "max")
    yield max(items, key=SortKey) if items else None


@builtin("reverse")
def _reverse(evaluator, value, arguments, env):
    if isinstance(value, str):
        yield value[::-1]
    elif value is None:
        yield []
    else:
        yield list(reversed(require(value, "array", "reverse")))


@builtin("first")
def _first(evaluator, value, arguments, env):
    items = require(value, "array", "first")
    yield items[0] if items else None


@builtin("last")
def _last(evaluator, value, arguments, env):
    items = require(value, "array", "last")
    yield items[-1] if items else None


@builtin("first", 1)
def _first_of(evaluator, value, arguments, env):
    for output in evaluator.evaluate(arguments[0], value, env):
        yield output
        return


@builtin("range", 1)
def _range(evaluator, value, arguments, env):
    for stop in single(evaluator, arguments[0], value, env):
        count = require(stop, "number", "range")
        number = 0
        while number < count:
            yield number
            number += 1


@builtin("range", 2)
def _range2(evaluator, value, arguments, env):
    for start in single(evaluator, arguments[0], value, env):
        for stop in single(evaluator, arguments[1], value, env):
            number = require(start, "number", "range")
            while number < require(stop, "number", "range"):
                yield number
                number += 1


@builtin("flatten")
def _flatten(evaluator, value, arguments, env):
    def flat(items):
        for item in items:
            if isinstance(item, list):
                yield from flat(item)
            else:
                yield item
    yield list(flat(require(value, "array", "flatten")))


@builtin("any")
def _any(evaluator, value, arguments, env):
    yield any(is_true(item) for item in require(value, "array", "any"))


@builtin("all")
def _all(evaluator, value, arguments, env):
    yield all(is_true(item) for item in require(value, "array", "all"))


@builtin("contains", 1)
def _contains(evaluator, value, arguments, env):
    for other in single(evaluator, arguments[0], value, env):
        yield contains(value, other)


def contains(value, other):
    kind = type_of(value)
    if kind != type_of(other):
        raise FilterRuntimeError(f"{describe(value)} and {describe(other)} cannot have their containment checked")
    if kind == "object":
        return all(key in value and contains(value[key], other[key]) for key in other)
    if kind == "array":
        return all(any(type_of(a) == type_of(b) and contains(a, b) for a in value) for b in other)
    if kind == "string":
        return other in value
    return equal(value, other)


# -- objects ---------------------------------------------------------------------------------------
@builtin("to_entries")
def _to_entries(evaluator, value, arguments, env):
    yield [{"key": key, "value": item} for key, item in require(value, "object", "to_entries").items()]


@builtin("from_entries")
def _from_entries(evaluator, value, arguments, env):
    result = {}
    for entry in require(value, "array", "from_entries"):
        require(entry, "object", "from_entries")
        key = next((entry[k] for k in ("key", "k", "name", "Name", "Key") if k in entry), None)
        if isinstance(key, (int, float)) and not isinstance(key, bool):
            key = str(key)
        if not isinstance(key, str):
            raise FilterRuntimeError(f"from_entries: entry without a string key: {describe(entry)}")
        result[key] = entry.get("value", entry.get("v"))
    yield result


@builtin("with_entries", 1)
def _with_entries(evaluator, value, arguments, env):
    entries = next(_to_entries(evaluator, value, [], env))
    mapped = next(_map(evaluator, entries, arguments, env))
    yield from _from_entries(evaluator, mapped, [], env)


# -- strings ---------------------------------------------------------------------------------------
@builtin("join", 1)
def _join(evaluator, value, arguments, env):
    for separator in single(evaluator, arguments[0], value, env):
        parts = []
        for item in require(value, "array", "join"):
            if item is None:
                parts.append("")
            elif isinstance(item, bool) or isinstance(item, (int, float)):
                parts.append(next(_tostring(evaluator, item, [], env)))
            elif isinstance(item, str):
                parts.append(item)
            else:
                raise FilterRuntimeError(f"cannot join {describe(item)}")
        yield require(separator, "string", "join").join(parts)


@builtin("split", 1)
def _split(evaluator, value, arguments, env):
    for separator in single(evaluator, arguments[0], value, env):
        text = require(value, "string", "split")
        separator = require(separator, "string", "split")
        yield text.split(separator) if separator else list(text)


@builtin("ascii_downcase")
def _downcase(evaluator, value, arguments, env):
    yield "".join(c.lower() if c.isascii() else c for c in require(value, "string", "ascii_downcase"))


@builtin("ascii_upcase")
def _upcase(evaluator, value, arguments, env):
    yield "".join(c.upper() if c.isascii() else c for c in require(value, "string", "ascii_upcase"))


@builtin("startswith", 1)
def _startswith(evaluator, value, arguments, env):
    for prefix in single(evaluator, arguments[0], value, env):
        yield require(value, "string", "startswith").startswith(require(prefix, "string", "startswith"))


@builtin("endswith", 1)
def _endswith(evaluator, value, arguments, env):
    for suffix in single(evaluator, arguments[0], value, env):
        yield require(value, "string", "endswith").endswith(require(suffix, "string", "endswith"))


@builtin("test", 1)
def _test(evaluator, value, arguments, env):
    for pattern in single(evaluator, arguments[0], value, env):
        try:
            yield re.search(require(pattern, "string", "test"), require(value, "string", "test")) is not None
        except re.error as error:
            raise FilterRuntimeError(f"bad regular expression: {error}") from None


@builtin("ltrimstr", 1)
def _ltrimstr(evaluator, value, arguments, env):
    for prefix in single(evaluator, arguments[0], value, env):
        if isinstance(value, str) and isinstance(prefix, str) and value.startswith(prefix):
            yield value[len(prefix):]
        else:
            yield value


@builtin("rtrimstr", 1)
def _rtrimstr(evaluator, value, arguments, env):
    for suffix in single(evaluator, arguments[0], value, env):
        if isinstance(value, str) and isinstance(suffix, str) and suffix and value.endswith(suffix):
            yield value[:-len(suffix)]
        else:
            yield value


# -- numbers ---------------------------------------------------------------------------------------
@builtin("floor")
def _floor(evaluator, value, arguments, env):
    yield math.floor(require(value, "number", "floor"))


@builtin("sqrt")
def _sqrt(evaluator, value, arguments, env):
    number = require(value, "number", "sqrt")
    if number < 0:
        yield None
    else:
        yield math.sqrt(number)


@builtin("tojson")
def _tojson(evaluator, value, arguments, env):
    from jqlite.output import compact
    yield compact(value)


def order(left, right):
    return compare(left, right)
