"""Shopping-basket arithmetic."""

from .core import calc_total, calc_total_tax, recalc_totals

__all__ = ["calc_total", "calc_total_tax", "recalc_totals"]
