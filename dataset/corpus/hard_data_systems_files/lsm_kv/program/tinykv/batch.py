"""Batch files: one command a line, applied to a store in one process (much faster than one CLI call each).

    put KEY VALUE...     (the value is the rest of the line, spaces included)
    del KEY
    flush
    compact [N]
    # a comment; blank lines are skipped
"""

from dataclasses import dataclass

from .errors import BatchSyntaxError


@dataclass(frozen=True)
class BatchCommand:
    name: str
    key: str | None = None
    value: str | None = None
    count: int | None = None


def parse_batch(lines, path="<batch>"):
    commands = []
    for number, raw in enumerate(lines, start=1):
        line = raw.rstrip("\n")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        word, _, rest = line.partition(" ")
        if word == "put":
            key, space, value = rest.partition(" ")
            if not key or not space:
                raise BatchSyntaxError(path, number, line)
            commands.append(BatchCommand("put", key, value))
        elif word == "del" and rest and " " not in rest:
            commands.append(BatchCommand("del", rest))
        elif word == "flush" and not rest:
            commands.append(BatchCommand("flush"))
        elif word == "compact":
            if rest and not rest.isdigit():
                raise BatchSyntaxError(path, number, line)
            commands.append(BatchCommand("compact", count=int(rest) if rest else None))
        else:
            raise BatchSyntaxError(path, number, line)
    return commands


def apply_batch(store, commands):
    """Apply ``commands`` in order; returns {command name: how many}."""
    counts = {}
    for command in commands:
        if command.name == "put":
            store.put(command.key, command.value)
        elif command.name == "del":
            store.delete(command.key)
        elif command.name == "flush":
            store.flush()
        elif command.name == "compact":
            store.compact(command.count)
        counts[command.name] = counts.get(command.name, 0) + 1
    return counts
