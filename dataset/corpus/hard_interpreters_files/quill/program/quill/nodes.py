"""The syntax tree. Every node records the line it starts on; :func:`dump` prints a tree as S-expressions."""

from dataclasses import dataclass, field, fields


@dataclass
class Node:
    line: int = field(default=0, kw_only=True, compare=False)


# -- expressions -----------------------------------------------------------------------------------
@dataclass
class Number(Node):
    value: object


@dataclass
class String(Node):
    value: str


@dataclass
class Boolean(Node):
    value: bool


@dataclass
class Nil(Node):
    pass


@dataclass
class Name(Node):
    name: str


@dataclass
class ListLiteral(Node):
    items: list


@dataclass
class MapLiteral(Node):
    pairs: list  # [(key expression, value expression)]


@dataclass
class Index(Node):
    target: Node
    index: Node


@dataclass
class Call(Node):
    callee: Node
    arguments: list


@dataclass
class Unary(Node):
    operator: str  # "-" or "not"
    operand: Node


@dataclass
class Binary(Node):
    operator: str
    left: Node
    right: Node


@dataclass
class Logical(Node):
    operator: str  # "and" or "or": short-circuit
    left: Node
    right: Node


@dataclass
class Lambda(Node):
    params: list
    body: list  # statements; an arrow lambda's body is [Return(expression)]


# -- statements ------------------------------------------------------------------------------------
@dataclass
class Let(Node):
    name: str
    value: Node


@dataclass
class Assign(Node):
    target: Node  # Name or Index
    operator: str  # "=", "+=" or "-="
    value: Node


@dataclass
class FunctionDef(Node):
    name: str
    params: list
    body: list


@dataclass
class Return(Node):
    value: Node = None


@dataclass
class If(Node):
    condition: Node
    then_body: list
    else_body: list = None  # a list of statements, or None


@dataclass
class While(Node):
    condition: Node
    body: list


@dataclass
class For(Node):
    name: str
    iterable: Node
    body: list


@dataclass
class Break(Node):
    pass


@dataclass
class Continue(Node):
    pass


@dataclass
class ExpressionStatement(Node):
    expression: Node


@dataclass
class Program(Node):
    statements: list


def dump(node):
    """``node`` as one S-expression, e.g. ``(binary + (number 1) (number 2))``."""
    if isinstance(node, list):
        return "[" + " ".join(dump(item) for item in node) + "]"
    if isinstance(node, tuple):
        return "(" + " ".join(dump(item) for item in node) + ")"
    if not isinstance(node, Node):
        return repr(node) if isinstance(node, str) else str(node)
    name = _snake(type(node).__name__)
    parts = [getattr(node, f.name) if f.name == "operator" else dump(getattr(node, f.name))
             for f in fields(node) if f.name != "line"]
    return "(" + " ".join([name, *parts]) + ")"


def _snake(name):
    out = ""
    for i, char in enumerate(name):
        if char.isupper() and i:
            out += "_"
        out += char.lower()
    return out
