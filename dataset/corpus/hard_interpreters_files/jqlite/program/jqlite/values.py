"""JSON values as jqlite sees them: type names, truth, ordering and equality."""

from jqlite.errors import FilterRuntimeError

TYPE_ORDER = {"null": 0, "boolean": 1, "number": 2, "string": 3, "array": 4, "object": 5}


def type_of(value):
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    raise FilterRuntimeError(f"not a JSON value: {value!r}")


def is_true(value):
    """jq truth: only false and null are false (0, "" and [] are true)."""
    return value is not None and value is not False


def compare(left, right):
    """-1, 0 or 1 in jq's total order: null < false < true < numbers < strings < arrays < objects."""
    left_type, right_type = type_of(left), type_of(right)
    if left_type != right_type:
        return -1 if TYPE_ORDER[left_type] < TYPE_ORDER[right_type] else 1
    if left_type == "array":
        for a, b in zip(left, right):
            order = compare(a, b)
            if order:
                return order
        return (len(left) > len(right)) - (len(left) < len(right))
    if left_type == "object":
        left_keys, right_keys = sorted(left), sorted(right)
        if left_keys != right_keys:
            return compare(left_keys, right_keys)
        for key in left_keys:
            order = compare(left[key], right[key])
            if order:
                return order
        return 0
    return (left > right) - (left < right)


def equal(left, right):
    return compare(left, right) == 0


class SortKey:
    """Wraps a value so that Python's sort uses :func:`compare`."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __lt__(self, other):
        return compare(self.value, other.value) < 0

    def __eq__(self, other):
        return compare(self.value, other.value) == 0


def describe(value, limit=30):
    """A short description for error messages: ``object ({"a":1,...})``."""
    import json
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    if len(text) > limit:
        text = text[:limit - 3] + "..."
    return f"{type_of(value)} ({text})"
