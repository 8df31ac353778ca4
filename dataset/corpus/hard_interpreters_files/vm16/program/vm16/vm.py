"""The machine: 64 KiB of memory, a stack of 32-bit words, and a stack of call frames.

``call f, N`` takes the N arguments the caller pushed and opens a frame for them; ``enter K`` reserves K
zeroed locals in it; ``lda``/``sta`` and ``ldl``/``stl`` reach arguments and locals of the *current* frame;
``ret`` pops the return value, drops the frame (its locals, temporaries and the N arguments), pushes the return
value for the caller and resumes the caller's frame.
"""

import sys
from dataclasses import dataclass

from vm16 import isa
from vm16.errors import MachineError

MEMORY_SIZE = 0x10000
STACK_LIMIT = 4096
FRAME_LIMIT = 512
DEFAULT_MAX_STEPS = 5_000_000


@dataclass
class Frame:
    """One active call: where to return, where its arguments start and where its locals start."""

    function: int
    return_pc: int
    base: int
    nargs: int
    locals_base: int
    nlocals: int = 0


class Machine:
    def __init__(self, obj, stdin=None, stdout=None, max_steps=DEFAULT_MAX_STEPS, trace=None):
        if len(obj.code) > MEMORY_SIZE:
            raise MachineError("program larger than memory")
        self.memory = bytearray(MEMORY_SIZE)
        self.memory[:len(obj.code)] = obj.code
        self.code_end = len(obj.code)
        self.pc = obj.entry
        self.stack = []
        self.frames = []
        self.frame = None
        self.stdin = stdin if stdin is not None else sys.stdin
        self.stdout = stdout if stdout is not None else sys.stdout
        self.max_steps = max_steps
        self.steps = 0
        self.halted = False
        self.trace = trace
        self.symbols = obj.symbols

    # -- stack -------------------------------------------------------------------------------------
    def push(self, value):
        if len(self.stack) >= STACK_LIMIT:
            raise MachineError("stack overflow")
        self.stack.append(isa.to_signed(value))

    def pop(self):
        floor = self.frame.locals_base + self.frame.nlocals if self.frame else 0
        if len(self.stack) <= floor:
            raise MachineError("stack underflow")
        return self.stack.pop()

    # -- memory ------------------------------------------------------------------------------------
    def check_address(self, address, size):
        if not 0 <= address <= MEMORY_SIZE - size:
            raise MachineError(f"memory access out of range: {address}")

    def load_word(self, address):
        self.check_address(address, 4)
        return int.from_bytes(self.memory[address:address + 4], "little", signed=True)

    def store_word(self, address, value):
        self.check_address(address, 4)
        self.memory[address:address + 4] = (value & isa.WORD_MASK).to_bytes(4, "little")

    def read_string(self, address):
        end = address
        while True:
            self.check_address(end, 1)
            if self.memory[end] == 0:
                break
            end += 1
        return self.memory[address:end].decode("utf-8", errors="replace")

    # -- fetch/decode ------------------------------------------------------------------------------
    def fetch(self):
        if not 0 <= self.pc < self.code_end:
            raise MachineError("ran past the end of the program", self.pc)
        opcode = self.memory[self.pc]
        instruction = isa.BY_OPCODE.get(opcode)
        if instruction is None:
            raise MachineError(f"illegal opcode {opcode:#04x}", self.pc)
        operands = []
        offset = self.pc + 1
        for kind in instruction.operands:
            try:
                operands.append(isa.decode_operand(kind, self.memory[:self.code_end], offset))
            except ValueError as error:
                raise MachineError(str(error), self.pc) from None
            offset += isa.OPERAND_SIZES[kind]
        return instruction, operands, offset

    # -- running -----------------------------------------------------------------------------------
    def run(self):
        while not self.halted:
            self.step()
        return self

    def step(self):
        if self.steps >= self.max_steps:
            raise MachineError(f"step limit of {self.max_steps} reached", self.pc)
        self.steps += 1
        instruction, operands, next_pc = self.fetch()
        if self.trace is not None:
            shown = ", ".join(str(o) for o in operands)
            self.trace.write(f"{self.pc:04x}  {instruction.mnemonic:<6} {shown:<12} {self.stack[-6:]}\n")
        here = self.pc
        self.pc = next_pc
        handler = getattr(self, "op_" + instruction.mnemonic)
        try:
            handler(*operands)
        except MachineError as error:
            if error.pc is None:
                raise MachineError(error.message, here) from None
            raise

    # -- instructions ------------------------------------------------------------------------------
    def op_nop(self):
        pass

    def op_halt(self):
        self.halted = True

    def op_push(self, value):
        self.push(value)

    def op_push8(self, value):
        self.push(value)

    def op_pop(self):
        self.pop()

    def op_dup(self):
        value = self.pop()
        self.push(value)
        self.push(value)

    def op_swap(self):
        b, a = self.pop(), self.pop()
        self.push(b)
        self.push(a)

    def op_over(self):
        b, a = self.pop(), self.pop()
        self.push(a)
        self.push(b)
        self.push(a)

    def binary(self, function):
        b, a = self.pop(), self.pop()
        self.push(function(a, b))

    def op_add(self):
        self.binary(lambda a, b: a + b)

    def op_sub(self):
        self.binary(lambda a, b: a - b)

    def op_mul(self):
        self.binary(lambda a, b: a * b)

    def op_div(self):
        b, a = self.pop(), self.pop()
        if b == 0:
            raise MachineError("division by zero")
        quotient = abs(a) // abs(b)
        self.push(quotient if (a < 0) == (b < 0) else -quotient)

    def op_mod(self):
        b, a = self.pop(), self.pop()
        if b == 0:
            raise MachineError("division by zero")
        remainder = abs(a) % abs(b)
        self.push(-remainder if a < 0 else remainder)

    def op_neg(self):
        self.push(-self.pop())

    def op_and(self):
        self.binary(lambda a, b: a & b)

    def op_or(self):
        self.binary(lambda a, b: a | b)

    def op_xor(self):
        self.binary(lambda a, b: a ^ b)

    def op_not(self):
        self.push(~self.pop())

    def op_shl(self):
        self.binary(lambda a, b: a << (b & 31))

    def op_shr(self):
        self.binary(lambda a, b: a >> (b & 31))

    def op_eq(self):
        self.binary(lambda a, b: int(a == b))

    def op_ne(self):
        self.binary(lambda a, b: int(a != b))

    def op_lt(self):
        self.binary(lambda a, b: int(a < b))

    def op_le(self):
        self.binary(lambda a, b: int(a <= b))

    def op_gt(self):
        self.binary(lambda a, b: int(a > b))

    def op_ge(self):
        self.binary(lambda a, b: int(a >= b))

    def op_jmp(self, address):
        self.pc = address

    def op_jz(self, address):
        if self.pop() == 0:
            self.pc = address

    def op_jnz(self, address):
        if self.pop() != 0:
            self.pc = address

    # -- calls ---------------------------------------------------------------------------------------
    def op_call(self, address, nargs):
        if len(self.frames) >= FRAME_LIMIT:
            raise MachineError("call stack overflow (runaway recursion?)")
        floor = self.frame.locals_base + self.frame.nlocals if self.frame else 0
        if len(self.stack) - nargs < floor:
            raise MachineError(f"call with {nargs} arguments but fewer on the stack")
        frame = Frame(function=address, return_pc=self.pc, base=len(self.stack) - nargs, nargs=nargs,
                      locals_base=len(self.stack))
        self.frames.append(frame)
        self.frame = frame
        self.pc = address

    def op_ret(self):
        if self.frame is None:
            raise MachineError("ret outside a function")
        value = self.pop()
        frame = self.frames.pop()
        del self.stack[frame.base:]
        self.frame = self.frames[-1] if self.frames else None
        self.push(value)
        self.pc = frame.return_pc

    def op_enter(self, count):
        frame = self.current_frame("enter")
        if frame.nlocals or len(self.stack) != frame.locals_base:
            raise MachineError("enter must come first in a function, once")
        frame.nlocals = count
        self.stack.extend([0] * count)

    def current_frame(self, mnemonic):
        if self.frame is None:
            raise MachineError(f"{mnemonic} outside a function")
        return self.frame

    def argument_slot(self, index, mnemonic):
        frame = self.current_frame(mnemonic)
        if index >= frame.nargs:
            raise MachineError(f"{mnemonic} {index}: the function has {frame.nargs} argument(s)")
        return frame.base + index

    def local_slot(self, index, mnemonic):
        frame = self.current_frame(mnemonic)
        if index >= frame.nlocals:
            raise MachineError(f"{mnemonic} {index}: the function has {frame.nlocals} local(s)")
        return frame.locals_base + index

    def op_lda(self, index):
        self.push(self.stack[self.argument_slot(index, "lda")])

    def op_sta(self, index):
        slot = self.argument_slot(index, "sta")
        self.stack[slot] = self.pop()

    def op_ldl(self, index):
        self.push(self.stack[self.local_slot(index, "ldl")])

    def op_stl(self, index):
        slot = self.local_slot(index, "stl")
        self.stack[slot] = self.pop()

    # -- memory instructions -------------------------------------------------------------------------
    def op_load(self):
        self.push(self.load_word(self.pop()))

    def op_store(self):
        address, value = self.pop(), self.pop()
        self.store_word(address, value)

    def op_loadb(self):
        address = self.pop()
        self.check_address(address, 1)
        self.push(self.memory[address])

    def op_storeb(self):
        address, value = self.pop(), self.pop()
        self.check_address(address, 1)
        self.memory[address] = value & 0xFF

    # -- system calls --------------------------------------------------------------------------------
    def op_sys(self, number):
        if number == isa.SYSCALLS["PRINT_INT"]:
            self.stdout.write(str(self.pop()))
        elif number == isa.SYSCALLS["PRINT_CHAR"]:
            code = self.pop()
            if not 0 <= code <= 0x10FFFF:
                raise MachineError(f"PRINT_CHAR of {code}")
            self.stdout.write(chr(code))
        elif number == isa.SYSCALLS["PRINT_STR"]:
            self.stdout.write(self.read_string(self.pop()))
        elif number == isa.SYSCALLS["READ_INT"]:
            line = self.stdin.readline()
            try:
                self.push(int(line.strip()) if line.strip() else 0)
            except ValueError:
                raise MachineError(f"READ_INT got {line.strip()!r}") from None
        elif number == isa.SYSCALLS["NEWLINE"]:
            self.stdout.write("\n")
        else:
            raise MachineError(f"unknown system call {number}")


def run_object(obj, stdin=None, stdout=None, max_steps=DEFAULT_MAX_STEPS, trace=None):
    """Run ``obj`` to its ``halt``; the finished machine (its stack holds what the program left)."""
    return Machine(obj, stdin=stdin, stdout=stdout, max_steps=max_steps, trace=trace).run()
