"""The parsed form of a template: statement nodes and expression nodes."""

from dataclasses import dataclass, field


# -- expressions -----------------------------------------------------------------------------------
@dataclass
class Const:
    value: object


@dataclass
class Name:
    name: str


@dataclass
class ListExpr:
    items: list


@dataclass
class Attribute:
    target: object
    name: str


@dataclass
class Item:
    target: object
    key: object


@dataclass
class Call:
    function: object
    args: list
    kwargs: list = field(default_factory=list)  # [(name, expression)]


@dataclass
class Filter:
    value: object
    name: str
    args: list
    line: int = 0


@dataclass
class BinOp:
    operator: str
    left: object
    right: object


@dataclass
class UnaryOp:
    operator: str  # "not" or "-"
    operand: object


@dataclass
class Conditional:
    """``a if cond else b``."""

    condition: object
    then: object
    otherwise: object


# -- statements ------------------------------------------------------------------------------------
@dataclass
class Text:
    text: str


@dataclass
class Output:
    expression: object
    line: int = 0


@dataclass
class If:
    tests: list  # [(condition, body)]
    otherwise: list = None
    line: int = 0


@dataclass
class For:
    targets: list  # loop variable names (two for "for k, v in ...")
    iterable: object
    body: list
    otherwise: list = None
    line: int = 0


@dataclass
class Set:
    name: str
    expression: object
    line: int = 0


@dataclass
class Block:
    name: str
    body: list
    line: int = 0


@dataclass
class Include:
    template: object
    line: int = 0


@dataclass
class Macro:
    name: str
    params: list      # names
    defaults: list    # [(name, expression)] for the trailing params that have one
    body: list
    line: int = 0


@dataclass
class Import:
    template: object
    alias: str
    line: int = 0


@dataclass
class TemplateNode:
    body: list
    extends: object = None  # an expression, or None
    blocks: dict = field(default_factory=dict)  # name -> Block
    macros: list = field(default_factory=list)
