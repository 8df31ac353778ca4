"""Printing results: pretty (two-space indent, the default), compact (``-c``) or raw strings (``-r``)."""

import json
import math

from jqlite.errors import FilterRuntimeError


def prepare(value):
    """A copy of ``value`` that json can print as jq would: integral floats as ints, no NaN or infinity."""
    if isinstance(value, float):
        if math.isnan(value):
            return None
        if math.isinf(value):
            return 1.7976931348623157e308 if value > 0 else -1.7976931348623157e308
        return int(value) if value.is_integer() and abs(value) < 2 ** 53 else value
    if isinstance(value, list):
        return [prepare(item) for item in value]
    if isinstance(value, dict):
        return {key: prepare(item) for key, item in value.items()}
    return value


def compact(value):
    return json.dumps(prepare(value), separators=(",", ":"), ensure_ascii=False)


def pretty(value, indent=2):
    try:
        return json.dumps(prepare(value), indent=indent, ensure_ascii=False)
    except (TypeError, ValueError) as error:
        raise FilterRuntimeError(f"cannot print value: {error}") from None


def render(value, raw=False, compact_output=False, sort_keys=False):
    """The text one output is printed as (without the newline)."""
    if sort_keys:
        value = sorted_keys(value)
    if raw and isinstance(value, str):
        return value
    return compact(value) if compact_output else pretty(value)


def sorted_keys(value):
    if isinstance(value, dict):
        return {key: sorted_keys(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [sorted_keys(item) for item in value]
    return value
