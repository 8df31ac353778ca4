"""vm16: a small stack machine, its assembler and its disassembler.

The instruction set lives in one table (:mod:`vm16.isa`) that all three read:

    python3 -m vm16.asm program.s -o program.vmo     assemble
    python3 -m vm16.run program.vmo                  run an object file
    python3 -m vm16.disasm program.vmo               list it
    python3 -m vm16 program.s                        assemble and run in one step

docs/ISA.md describes the machine, the object format and the assembly language.
"""

__version__ = "1.4.0"
