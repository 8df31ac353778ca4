"""The syntax tree of a query."""

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Literal:
    value: object


@dataclass(frozen=True)
class Column:
    name: str
    table: str | None = None

    def label(self):
        return self.name


@dataclass(frozen=True)
class Star:
    table: str | None = None


@dataclass(frozen=True)
class Unary:
    op: str
    operand: object


@dataclass(frozen=True)
class Binary:
    op: str
    left: object
    right: object


@dataclass(frozen=True)
class IsNull:
    operand: object
    negated: bool = False


@dataclass(frozen=True)
class InList:
    operand: object
    items: tuple
    negated: bool = False


@dataclass(frozen=True)
class Between:
    operand: object
    low: object
    high: object
    negated: bool = False


@dataclass(frozen=True)
class Call:
    name: str
    args: tuple
    star: bool = False
    distinct: bool = False


@dataclass(frozen=True)
class SelectItem:
    expr: object
    alias: str | None = None


@dataclass(frozen=True)
class TableRef:
    name: str
    alias: str | None = None

    @property
    def binding(self):
        return self.alias or self.name


@dataclass(frozen=True)
class Join:
    kind: str
    """INNER or LEFT."""
    table: TableRef
    condition: object


@dataclass(frozen=True)
class OrderItem:
    expr: object
    descending: bool = False


@dataclass
class Select:
    items: list
    table: TableRef
    joins: list = field(default_factory=list)
    where: object = None
    group_by: list = field(default_factory=list)
    order_by: list = field(default_factory=list)
    limit: int | None = None
    offset: int = 0
    distinct: bool = False
    having: object = None


def walk(node):
    """Every node of the expression ``node``, depth first, parents before children."""
    yield node
    if isinstance(node, Unary):
        yield from walk(node.operand)
    elif isinstance(node, Binary):
        yield from walk(node.left)
        yield from walk(node.right)
    elif isinstance(node, IsNull):
        yield from walk(node.operand)
    elif isinstance(node, InList):
        yield from walk(node.operand)
        for item in node.items:
            yield from walk(item)
    elif isinstance(node, Between):
        yield from walk(node.operand)
        yield from walk(node.low)
        yield from walk(node.high)
    elif isinstance(node, Call):
        for arg in node.args:
            yield from walk(arg)


def render(node):
    """SQL text of an expression (used for the names of unnamed result columns)."""
    if isinstance(node, Literal):
        if node.value is None:
            return "NULL"
        if isinstance(node.value, str):
            return "'" + node.value.replace("'", "''") + "'"
        if isinstance(node.value, bool):
            return "TRUE" if node.value else "FALSE"
        return str(node.value)
    if isinstance(node, Column):
        return f"{node.table}.{node.name}" if node.table else node.name
    if isinstance(node, Star):
        return f"{node.table}.*" if node.table else "*"
    if isinstance(node, Unary):
        return f"{node.op} {render(node.operand)}" if node.op == "NOT" else f"{node.op}{render(node.operand)}"
    if isinstance(node, Binary):
        return f"{render(node.left)} {node.op} {render(node.right)}"
    if isinstance(node, IsNull):
        return f"{render(node.operand)} IS {'NOT ' if node.negated else ''}NULL"
    if isinstance(node, InList):
        inner = ", ".join(render(item) for item in node.items)
        return f"{render(node.operand)} {'NOT ' if node.negated else ''}IN ({inner})"
    if isinstance(node, Between):
        return (f"{render(node.operand)} {'NOT ' if node.negated else ''}BETWEEN {render(node.low)} AND "
                f"{render(node.high)}")
    if isinstance(node, Call):
        if node.star:
            return f"{node.name}(*)"
        inner = ", ".join(render(arg) for arg in node.args)
        return f"{node.name}({'DISTINCT ' if node.distinct else ''}{inner})"
    raise TypeError(f"cannot render {node!r}")
