"""SQL values and their rules.

Values are Python objects: None is SQL NULL, bool, int, float and str. Booleans behave as the integers 1 and 0
in arithmetic and output. Any comparison or arithmetic with NULL gives NULL ("unknown"); AND, OR and NOT follow
three-valued logic; a WHERE, ON or HAVING condition keeps a row only when it is TRUE (not when it is NULL).
Across types, every number sorts before every text (as in SQLite).
"""

from .errors import EvaluationError


def is_number(value):
    return isinstance(value, (int, float))  # bool is an int subclass: TRUE and FALSE count as 1 and 0


def _rank(value):
    return 0 if is_number(value) else 1


def compare(op, left, right):
    """The SQL comparison ``left op right``: True, False or None (NULL)."""
    if left is None or right is None:
        return None
    if op == "=":
        return _rank(left) == _rank(right) and left == right
    if op == "<>":
        return not (_rank(left) == _rank(right) and left == right)
    left_key = (_rank(left), left)
    right_key = (_rank(right), right)
    if op == "<":
        return left_key < right_key
    if op == "<=":
        return left_key <= right_key
    if op == ">":
        return left_key > right_key
    if op == ">=":
        return left_key >= right_key
    raise EvaluationError(f"unknown comparison {op}")


def logical_and(left, right):
    if left is False or right is False:
        return False
    if left is None or right is None:
        return None
    return True


def logical_or(left, right):
    if left is True or right is True:
        return True
    if left is None or right is None:
        return None
    return False


def logical_not(value):
    if value is None:
        return None
    return not value


def truth(value):
    """The truth of a condition's value: only TRUE (or a non-zero number) keeps a row; NULL does not."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            return float(value) != 0
        except ValueError:
            return False
    return bool(value)


def _number(value, op):
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)):
        return value
    raise EvaluationError(f"cannot apply {op} to text {value!r}")


def arithmetic(op, left, right):
    if left is None or right is None:
        return None
    if op == "||":
        return to_text(left) + to_text(right)
    a, b = _number(left, op), _number(right, op)
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op in ("/", "%"):
        if b == 0:
            return None  # SQLite: division by zero is NULL
        if isinstance(a, int) and isinstance(b, int):
            quotient = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)
            return quotient if op == "/" else a - b * quotient
        return a / b if op == "/" else a - b * int(a / b)
    raise EvaluationError(f"unknown operator {op}")


def negate(value):
    if value is None:
        return None
    return -_number(value, "-")


def like(value, pattern):
    """SQL LIKE: % any run, _ one character, ASCII letters compared without case."""
    if value is None or pattern is None:
        return None
    return _like(to_text(value).lower(), 0, to_text(pattern).lower(), 0)


def _like(text, i, pattern, j):
    while j < len(pattern):
        ch = pattern[j]
        if ch == "%":
            while j < len(pattern) and pattern[j] == "%":
                j += 1
            if j == len(pattern):
                return True
            return any(_like(text, k, pattern, j) for k in range(i, len(text) + 1))
        if i >= len(text) or (ch != "_" and text[i] != ch):
            return False
        i += 1
        j += 1
    return i == len(text)


def to_text(value):
    if value is None:
        return None
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        return format_number(value)
    return str(value)


def format_number(value):
    """A float as csvql prints it: at most 6 decimals, no trailing zeros (2.5, 3, 0.333333, -1.25)."""
    text = f"{value:.6f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def sort_key(value):
    """Key ordering values as ORDER BY does: NULL first, then numbers, then text."""
    if value is None:
        return (0, 0)
    if is_number(value):
        return (1, value)
    return (2, value)
