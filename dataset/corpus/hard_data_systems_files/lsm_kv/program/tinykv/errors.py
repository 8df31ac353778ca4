"""The errors tinykv raises; the command line maps each to an exit status (see cli.py)."""


class StoreError(Exception):
    """Base class of every error of the store."""

    exit_status = 2


class CorruptLogError(StoreError):
    """The write-ahead log holds a record that is damaged and is not a torn final write."""

    exit_status = 3

    def __init__(self, path, offset, reason):
        super().__init__(f"{path}: corrupt record at byte {offset}: {reason}")
        self.path = path
        self.offset = offset
        self.reason = reason


class CorruptSegmentError(StoreError):
    """A segment file does not have the layout FORMAT.md describes."""

    exit_status = 3

    def __init__(self, path, reason):
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class ManifestError(StoreError):
    """The manifest is missing a field or names a segment that does not exist."""

    exit_status = 3


class BatchSyntaxError(StoreError):
    """A line of a batch file is not one of the commands batch.py knows."""

    exit_status = 2

    def __init__(self, path, line_number, line):
        super().__init__(f"{path}:{line_number}: cannot parse {line!r}")
        self.path = path
        self.line_number = line_number
