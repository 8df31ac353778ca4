"""Errors of flowrun. The command line prints them and exits with ``exit_status``."""


class FlowrunError(Exception):
    exit_status = 2


class SpecError(FlowrunError):
    """The workflow file is not valid (a missing field, a bad type, an unknown dependency, ...)."""

    def __init__(self, path, reason):
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class CycleError(FlowrunError):
    """The jobs' dependencies form a cycle."""

    def __init__(self, cycle):
        super().__init__("dependency cycle: " + " -> ".join(cycle))
        self.cycle = list(cycle)


class UnknownRunError(FlowrunError):
    def __init__(self, run_id):
        super().__init__(f"no run {run_id} in the state database")
        self.run_id = run_id


class RunStateError(FlowrunError):
    """The run cannot be resumed (already succeeded, or its workflow changed)."""
