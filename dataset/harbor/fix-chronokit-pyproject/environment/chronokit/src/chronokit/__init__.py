"""Human-readable durations."""

__version__ = "2.0.1"
