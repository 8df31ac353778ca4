"""The instruction set: one table read by the assembler, the disassembler and the machine.

Every instruction is one opcode byte followed by its operands, little-endian:

=========  =====  ===============================================
kind       bytes  meaning
=========  =====  ===============================================
``i8``     1      signed byte (``push`` short form)
``i32``    4      signed 32-bit word
``u8``     1      unsigned byte (argument/local slot, count, call number)
``addr``   2      absolute address in memory
=========  =====  ===============================================
"""

from dataclasses import dataclass

OPERAND_SIZES = {"i8": 1, "i32": 4, "u8": 1, "addr": 2}
OPERAND_RANGES = {"i8": (-128, 127), "i32": (-(2 ** 31), 2 ** 32 - 1), "u8": (0, 255), "addr": (0, 0xFFFF)}


@dataclass(frozen=True)
class Instruction:
    opcode: int
    mnemonic: str
    operands: tuple
    summary: str

    @property
    def size(self):
        return 1 + sum(OPERAND_SIZES[kind] for kind in self.operands)


_TABLE = [
    (0x00, "nop", (), "do nothing"),
    (0x01, "halt", (), "stop the machine"),
    (0x02, "push", ("i32",), "push a word"),
    (0x03, "push8", ("i8",), "push a small number (the assembler picks it for push when it fits)"),
    (0x04, "pop", (), "drop the top of the stack"),
    (0x05, "dup", (), "a b -> a b b"),
    (0x06, "swap", (), "a b -> b a"),
    (0x07, "over", (), "a b -> a b a"),
    (0x10, "add", (), "a b -> a+b"),
    (0x11, "sub", (), "a b -> a-b"),
    (0x12, "mul", (), "a b -> a*b"),
    (0x13, "div", (), "a b -> a/b (truncated toward zero)"),
    (0x14, "mod", (), "a b -> a%b (sign of a)"),
    (0x15, "neg", (), "a -> -a"),
    (0x16, "and", (), "bitwise and"),
    (0x17, "or", (), "bitwise or"),
    (0x18, "xor", (), "bitwise xor"),
    (0x19, "not", (), "bitwise not"),
    (0x1A, "shl", (), "a b -> a<<b"),
    (0x1B, "shr", (), "a b -> a>>b (arithmetic)"),
    (0x20, "eq", (), "a b -> 1 if a==b else 0"),
    (0x21, "ne", (), "a b -> 1 if a!=b else 0"),
    (0x22, "lt", (), "a b -> 1 if a<b else 0"),
    (0x23, "le", (), "a b -> 1 if a<=b else 0"),
    (0x24, "gt", (), "a b -> 1 if a>b else 0"),
    (0x25, "ge", (), "a b -> 1 if a>=b else 0"),
    (0x30, "jmp", ("addr",), "jump"),
    (0x31, "jz", ("addr",), "pop; jump if zero"),
    (0x32, "jnz", ("addr",), "pop; jump if not zero"),
    (0x38, "call", ("addr", "u8"), "call a function with N arguments taken from the stack"),
    (0x39, "ret", (), "return the top of the stack to the caller, dropping the frame and the arguments"),
    (0x3A, "enter", ("u8",), "reserve N local slots (zeroed) in the current frame"),
    (0x3B, "lda", ("u8",), "push argument N"),
    (0x3C, "sta", ("u8",), "pop into argument N"),
    (0x3D, "ldl", ("u8",), "push local N"),
    (0x3E, "stl", ("u8",), "pop into local N"),
    (0x40, "load", (), "addr -> the word at addr"),
    (0x41, "store", (), "value addr -> (word at addr = value)"),
    (0x42, "loadb", (), "addr -> the byte at addr"),
    (0x43, "storeb", (), "value addr -> (byte at addr = value)"),
    (0x50, "sys", ("u8",), "system call N (see SYSCALLS)"),
]

BY_OPCODE = {}
BY_MNEMONIC = {}
for _opcode, _mnemonic, _operands, _summary in _TABLE:
    _instruction = Instruction(_opcode, _mnemonic, _operands, _summary)
    if _opcode in BY_OPCODE or _mnemonic in BY_MNEMONIC:
        raise RuntimeError(f"instruction table repeats {_mnemonic} / {_opcode:#04x}")
    BY_OPCODE[_opcode] = _instruction
    BY_MNEMONIC[_mnemonic] = _instruction

SYSCALLS = {
    "PRINT_INT": 1,   # pop a word, print it in decimal
    "PRINT_CHAR": 2,  # pop a word, print the character with that code
    "PRINT_STR": 3,   # pop an address, print the NUL-terminated bytes there (UTF-8)
    "READ_INT": 4,    # read a line of input, push it as a number (0 at end of input)
    "NEWLINE": 5,     # print a line break
}
"""The ``sys`` numbers; the assembler also knows these names as constants."""

WORD_MASK = 0xFFFFFFFF


def to_signed(value):
    """``value`` wrapped to a signed 32-bit word."""
    value &= WORD_MASK
    return value - 2 ** 32 if value & 0x80000000 else value


def encode_operand(kind, value):
    low, high = OPERAND_RANGES[kind]
    if not low <= value <= high:
        raise ValueError(f"{value} does not fit an {kind} operand ({low}..{high})")
    size = OPERAND_SIZES[kind]
    return (value & ((1 << (8 * size)) - 1)).to_bytes(size, "little")


def decode_operand(kind, data, offset):
    size = OPERAND_SIZES[kind]
    raw = data[offset:offset + size]
    if len(raw) < size:
        raise ValueError("operand runs past the end of the code")
    return int.from_bytes(raw, "little", signed=kind in ("i8", "i32"))
