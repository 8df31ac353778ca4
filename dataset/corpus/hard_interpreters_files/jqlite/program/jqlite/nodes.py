"""The compiled form of a filter."""

from dataclasses import dataclass


@dataclass
class Identity:
    pass


@dataclass
class RecurseAll:
    """``..``: the input and every value inside it."""


@dataclass
class Literal:
    value: object


@dataclass
class Field:
    target: object  # the filter whose outputs are indexed
    name: object    # a filter giving the key
    optional: bool = False


@dataclass
class Index:
    target: object
    index: object
    optional: bool = False


@dataclass
class Slice:
    target: object
    start: object  # a filter, or None
    stop: object   # a filter, or None
    optional: bool = False


@dataclass
class Iterate:
    target: object
    optional: bool = False


@dataclass
class Pipe:
    left: object
    right: object


@dataclass
class Comma:
    left: object
    right: object


@dataclass
class Binary:
    operator: str
    left: object
    right: object


@dataclass
class Alternative:
    left: object
    right: object


@dataclass
class Logical:
    operator: str  # "and" / "or"
    left: object
    right: object


@dataclass
class Negate:
    operand: object


@dataclass
class ArrayConstruction:
    body: object  # a filter, or None for []


@dataclass
class ObjectConstruction:
    entries: list  # [(key filter, value filter)]


@dataclass
class Conditional:
    branches: list  # [(condition, body)]
    otherwise: object


@dataclass
class FunctionCall:
    name: str
    arguments: list


@dataclass
class Variable:
    name: str


@dataclass
class Binding:
    """``source as $name | body``: body runs once per output of source, with $name bound to it."""

    source: object
    name: str
    body: object


@dataclass
class TryCatch:
    body: object
