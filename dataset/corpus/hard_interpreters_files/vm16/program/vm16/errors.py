"""Errors of the toolchain: each names where it happened."""


class Vm16Error(Exception):
    """Base of every error the tools report to a user."""


class AssemblyError(Vm16Error):
    """The source is not a valid program; carries the file name and line number."""

    def __init__(self, message, line=None, source_name="<input>"):
        self.message = message
        self.line = line
        self.source_name = source_name
        where = f"{source_name}:{line}: " if line is not None else f"{source_name}: "
        super().__init__(where + message)


class ObjectFormatError(Vm16Error):
    """An object file that cannot be read (bad magic, truncated, wrong version)."""


class MachineError(Vm16Error):
    """The program did something the machine does not allow; carries the program counter."""

    def __init__(self, message, pc=None):
        self.message = message
        self.pc = pc
        super().__init__(message if pc is None else f"at {pc:#06x}: {message}")
