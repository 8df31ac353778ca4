"""The two-pass assembler: source text to an :class:`~vm16.objfile.ObjectFile`.

Pass 1 lays the program out: it gives every label its address and fixes the size of every statement. Pass 2
encodes each statement at the address pass 1 gave it. The two passes must agree on every size, or the labels
after a disagreement point at the wrong bytes: the encoding form of ``push`` (``push8`` when the value fits a
signed byte) is decided in pass 1 and pass 2 follows that decision.
"""

from dataclasses import dataclass

from vm16 import isa
from vm16.directives import DATA_DIRECTIVES, check_operand_count, data_bytes, data_size
from vm16.errors import AssemblyError
from vm16.expressions import Unresolved, evaluate, qualify
from vm16.objfile import ObjectFile
from vm16.source import read_source

MEMORY_SIZE = 0x10000


@dataclass
class Placed:
    """A statement with its address, its size and (for instructions) the table entry that encodes it."""

    statement: object
    address: int
    size: int
    scope: str | None
    instruction: isa.Instruction | None = None


class Assembler:
    def __init__(self, source_name="<input>"):
        self.source_name = source_name
        self.symbols = {}
        self.constants = dict(isa.SYSCALLS)
        self.placed = []
        self.entry_expression = None

    def error(self, message, line):
        return AssemblyError(message, line, self.source_name)

    # -- pass 1 ------------------------------------------------------------------------------------
    def layout(self, statements):
        address = 0
        scope = None
        for statement in statements:
            if statement.kind == "label":
                if not statement.name.startswith("."):
                    scope = statement.name
                full = self.qualify(statement.name, scope, statement.line)
                if full in self.symbols or full in self.constants:
                    raise self.error(f"{full} defined twice", statement.line)
                self.symbols[full] = address
                continue
            if statement.kind == "directive":
                check_operand_count(statement, self.source_name)
                if statement.name == ".const":
                    self.define_constant(statement)
                    continue
                if statement.name == ".entry":
                    self.entry_expression = (statement.operands[0], scope, statement.line)
                    continue
                if statement.name not in DATA_DIRECTIVES:
                    raise self.error(f"unknown directive {statement.name}", statement.line)
                try:
                    size = data_size(statement, address, lambda text, s=scope, st=statement: self.known(text, s, st.line))
                except AssemblyError as error:
                    raise self.error(error.message, statement.line) from None
                self.placed.append(Placed(statement, address, size, scope))
            else:
                instruction = self.choose_form(statement, scope)
                self.placed.append(Placed(statement, address, instruction.size, scope, instruction))
                size = instruction.size
            address += size
            if address > MEMORY_SIZE:
                raise self.error("program does not fit in 64 KiB", statement.line)

    def define_constant(self, statement):
        name, value = statement.operands
        if name in self.constants or name in self.symbols:
            raise self.error(f"{name} defined twice", statement.line)
        self.constants[name] = self.known(value, None, statement.line)

    def known(self, text, scope, line):
        """The value of an expression that must not depend on labels defined later."""
        try:
            return evaluate(text, scope, self.symbols, self.constants, line)
        except Unresolved as missing:
            raise self.error(f"{missing} must be defined before it is used here", line) from None

    def choose_form(self, statement, scope):
        instruction = isa.BY_MNEMONIC.get(statement.name)
        if instruction is None:
            raise self.error(f"unknown instruction {statement.name}", statement.line)
        if len(statement.operands) != len(instruction.operands):
            raise self.error(f"{statement.name} takes {len(instruction.operands)} operand(s), "
                             f"got {len(statement.operands)}", statement.line)
        if statement.name != "push":
            return instruction
        operand = statement.operands[0]
        try:
            value = evaluate(operand, scope, self.symbols, self.constants, statement.line)
        except Unresolved:
            return instruction  # a forward reference: its value is unknown, keep the long form
        if -128 <= value <= 127:
            return isa.BY_MNEMONIC["push8"]
        return instruction

    def qualify(self, name, scope, line):
        try:
            return qualify(name, scope)
        except AssemblyError as error:
            raise self.error(error.message, line) from None

    # -- pass 2 ------------------------------------------------------------------------------------
    def value(self, text, scope, line):
        try:
            return evaluate(text, scope, self.symbols, self.constants, line)
        except Unresolved as missing:
            raise self.error(f"undefined label {missing}", line) from None
        except AssemblyError as error:
            raise self.error(error.message, line) from None

    def encode(self):
        memory = bytearray()
        for placed in self.placed:
            statement = placed.statement
            if len(memory) != placed.address:
                raise self.error(f"internal: layout drifted at {statement.name}", statement.line)
            if placed.instruction is None:
                try:
                    chunk = data_bytes(statement, placed.address,
                                       lambda text, p=placed: self.value(text, p.scope, p.statement.line))
                except AssemblyError as error:
                    raise self.error(error.message, statement.line) from None
            else:
                chunk = self.encode_instruction(placed)
            if len(chunk) != placed.size:
                raise self.error(f"{statement.name} took {len(chunk)} bytes, {placed.size} were laid out",
                                 statement.line)
            memory += chunk
        return bytes(memory)

    def encode_instruction(self, placed):
        instruction = placed.instruction
        statement = placed.statement
        chunk = bytes([instruction.opcode])
        for kind, operand in zip(instruction.operands, statement.operands):
            value = self.value(operand, placed.scope, statement.line)
            try:
                chunk += isa.encode_operand(kind, value)
            except ValueError as error:
                raise self.error(f"{statement.name}: {error}", statement.line) from None
        return chunk

    def entry_point(self):
        if self.entry_expression is not None:
            text, scope, line = self.entry_expression
            return self.value(text, scope, line)
        return self.symbols.get("main", 0)

    def assemble(self, text):
        statements = read_source(text, self.source_name)
        self.layout(statements)
        code = self.encode()
        labels = {name: address for name, address in self.symbols.items()}
        return ObjectFile(code=code, entry=self.entry_point(), symbols=labels)


def assemble(text, source_name="<input>"):
    """The object file of the source ``text``; raises AssemblyError naming the line."""
    return Assembler(source_name).assemble(text)
