"""Scalar functions and aggregate functions."""

import math

from .errors import EvaluationError
from .values import is_number, to_text

# -- scalar functions ------------------------------------------------------------------------------------------


def _upper(value):
    return None if value is None else to_text(value).upper()


def _lower(value):
    return None if value is None else to_text(value).lower()


def _length(value):
    return None if value is None else len(to_text(value))


def _abs(value):
    if value is None:
        return None
    if not is_number(value):
        raise EvaluationError(f"ABS of text {value!r}")
    return abs(value)


def _round(value, digits=0):
    """ROUND(x [, n]): half away from zero, always a float (as SQLite)."""
    if value is None or digits is None:
        return None
    if not is_number(value):
        raise EvaluationError(f"ROUND of text {value!r}")
    factor = 10 ** int(digits)
    scaled = abs(value) * factor
    rounded = math.floor(scaled + 0.5) / factor
    return float(math.copysign(rounded, value))


def _coalesce(*values):
    for value in values:
        if value is not None:
            return value
    return None


def _nullif(left, right):
    return None if left is not None and left == right else left


def _substr(value, start, length=None):
    if value is None or start is None:
        return None
    text = to_text(value)
    begin = max(int(start) - 1, 0)
    return text[begin:] if length is None else text[begin:begin + max(int(length), 0)]


SCALAR_FUNCTIONS = {
    "UPPER": (_upper, 1, 1),
    "LOWER": (_lower, 1, 1),
    "LENGTH": (_length, 1, 1),
    "ABS": (_abs, 1, 1),
    "ROUND": (_round, 1, 2),
    "COALESCE": (_coalesce, 1, 99),
    "IFNULL": (_coalesce, 2, 2),
    "NULLIF": (_nullif, 2, 2),
    "SUBSTR": (_substr, 2, 3),
}


def call_scalar(name, args):
    try:
        function, low, high = SCALAR_FUNCTIONS[name]
    except KeyError:
        raise EvaluationError(f"unknown function {name}") from None
    if not low <= len(args) <= high:
        raise EvaluationError(f"{name} takes {low} to {high} arguments, not {len(args)}")
    return function(*args)


# -- aggregates ------------------------------------------------------------------------------------------------


class Aggregate:
    """One running aggregate: step() per input row, result() at the end of the group."""

    def __init__(self, distinct=False):
        self.distinct = distinct
        self._seen = set()

    def add(self, value):
        if self.distinct:
            if value is None or value in self._seen:
                return
            self._seen.add(value)
        self.step(value)

    def step(self, value):
        raise NotImplementedError

    def result(self):
        raise NotImplementedError


class CountStar(Aggregate):
    def __init__(self, distinct=False):
        super().__init__(distinct)
        self.count = 0

    def step(self, value):
        self.count += 1

    def result(self):
        return self.count


class Count(Aggregate):
    """COUNT(x): the rows where x is not NULL."""

    def __init__(self, distinct=False):
        super().__init__(distinct)
        self.count = 0

    def step(self, value):
        if value is not None:
            self.count += 1

    def result(self):
        return self.count


class Sum(Aggregate):
    """SUM(x): NULL when every x is NULL; an integer while every x is one."""

    def __init__(self, distinct=False):
        super().__init__(distinct)
        self.total = None

    def step(self, value):
        if value is None:
            return
        if not is_number(value):
            raise EvaluationError(f"SUM of text {value!r}")
        self.total = value if self.total is None else self.total + value

    def result(self):
        return self.total


class Avg(Aggregate):
    """AVG(x): the mean of the non-NULL x, a float; NULL when there are none."""

    def __init__(self, distinct=False):
        super().__init__(distinct)
        self.total = 0
        self.rows = 0

    def step(self, value):
        if value is None:
            return
        self.rows += 1
        if not is_number(value):
            raise EvaluationError(f"AVG of text {value!r}")
        self.total += value

    def result(self):
        return None if self.rows == 0 else self.total / self.rows


class _Extreme(Aggregate):
    def __init__(self, distinct=False):
        super().__init__(distinct)
        self.best = None

    def step(self, value):
        from .values import sort_key

        if value is None:
            return
        if self.best is None or self._better(sort_key(value), sort_key(self.best)):
            self.best = value

    def result(self):
        return self.best


class Min(_Extreme):
    @staticmethod
    def _better(candidate, best):
        return candidate < best


class Max(_Extreme):
    @staticmethod
    def _better(candidate, best):
        return candidate > best


AGGREGATES = {"COUNT": Count, "SUM": Sum, "AVG": Avg, "MIN": Min, "MAX": Max}


def is_aggregate(name):
    return name in AGGREGATES


def new_aggregate(call):
    """A fresh running aggregate for the ast.Call ``call``."""
    if call.star:
        if call.name != "COUNT":
            raise EvaluationError(f"{call.name}(*) is not allowed")
        return CountStar()
    if len(call.args) != 1:
        raise EvaluationError(f"{call.name} takes one argument, not {len(call.args)}")
    return AGGREGATES[call.name](call.distinct)
