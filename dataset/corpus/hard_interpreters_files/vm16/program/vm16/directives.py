"""Data directives: what each puts in memory and how many bytes it takes.

``.word v, ...`` 32-bit words; ``.byte v, ...`` bytes; ``.zero N`` N zero bytes; ``.string "text", ...`` the UTF-8
bytes of each text followed by a NUL; ``.const NAME value`` a named number (takes no space); ``.align N`` pads
to a multiple of N. The escapes of strings (and of character operands like ``'\\n'``) are in :data:`ESCAPES`.
"""

from vm16.errors import AssemblyError

ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", '"': '"', "'": "'", "e": "\x1b"}
DATA_DIRECTIVES = (".word", ".byte", ".zero", ".string", ".align")


def decode_string(literal, line=None, source_name="<input>"):
    """The text of a quoted literal (``"..."`` or ``'...'``) with its escapes decoded."""
    if len(literal) < 2 or literal[0] not in "\"'" or literal[-1] != literal[0]:
        raise AssemblyError(f"expected a quoted string, found {literal!r}", line, source_name)
    body = literal[1:-1]
    out = []
    index = 0
    while index < len(body):
        char = body[index]
        if char != "\\":
            out.append(char)
            index += 1
            continue
        if index + 1 >= len(body):
            raise AssemblyError("string ends in a lone backslash", line, source_name)
        code = body[index + 1]
        if code == "x":
            digits = body[index + 2:index + 4]
            if len(digits) != 2 or any(d not in "0123456789abcdefABCDEF" for d in digits):
                raise AssemblyError("\\x needs two hex digits", line, source_name)
            out.append(chr(int(digits, 16)))
            index += 4
            continue
        if code not in ESCAPES:
            raise AssemblyError(f"unknown escape \\{code}", line, source_name)
        out.append(ESCAPES[code])
        index += 2
    return "".join(out)


def string_bytes(literal, line=None, source_name="<input>"):
    """What ``.string literal`` stores: the UTF-8 bytes of the decoded text and a terminating NUL."""
    return decode_string(literal, line, source_name).encode("utf-8") + b"\0"


def data_size(statement, address, evaluate):
    """Bytes a data directive takes at ``address`` (``evaluate`` gives the value of a constant operand)."""
    name, operands = statement.name, statement.operands
    if name == ".word":
        return 4 * len(operands)
    if name == ".byte":
        return len(operands)
    if name == ".zero":
        return evaluate(operands[0])
    if name == ".string":
        return sum(len(string_bytes(operand, statement.line)) for operand in operands)
    if name == ".align":
        boundary = evaluate(operands[0])
        return (-address) % boundary
    raise AssemblyError(f"unknown directive {name}", statement.line)


def data_bytes(statement, address, evaluate):
    """The bytes a data directive stores (``evaluate`` gives the value of an operand, labels included)."""
    name, operands = statement.name, statement.operands
    if name == ".word":
        return b"".join((evaluate(operand) & 0xFFFFFFFF).to_bytes(4, "little") for operand in operands)
    if name == ".byte":
        values = [evaluate(operand) for operand in operands]
        for value in values:
            if not -128 <= value <= 255:
                raise AssemblyError(f".byte value {value} out of range", statement.line)
        return bytes(value & 0xFF for value in values)
    if name == ".zero":
        return bytes(evaluate(operands[0]))
    if name == ".string":
        return b"".join(string_bytes(operand, statement.line) for operand in operands)
    if name == ".align":
        return bytes((-address) % evaluate(operands[0]))
    raise AssemblyError(f"unknown directive {name}", statement.line)


def check_operand_count(statement, source_name="<input>"):
    expected = {".zero": 1, ".align": 1, ".const": 2, ".entry": 1}
    if statement.name in expected and len(statement.operands) != expected[statement.name]:
        raise AssemblyError(f"{statement.name} takes {expected[statement.name]} operand(s)", statement.line, source_name)
    if statement.name in (".word", ".byte", ".string") and not statement.operands:
        raise AssemblyError(f"{statement.name} needs at least one operand", statement.line, source_name)
