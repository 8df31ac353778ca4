#!/bin/bash
cd /app
for f in basket/render.py basket/cli.py basket/core.py unit_tests/test_core.py unit_tests/test_render.py docs/API.md basket/__init__.py; do
  sed -i -E 's/\bcalc_total\b/compute_basket_total/g' "$f"
done
cat >> basket/core.py <<'PY'


def calc_total(lines, tax_rate=0.0, discount_cents=0):
    # the deprecated name of compute_basket_total
    import warnings

    warnings.warn("calc_total is deprecated; use compute_basket_total", DeprecationWarning, stacklevel=2)
    return compute_basket_total(lines, tax_rate, discount_cents)
PY
cat > basket/__init__.py <<'PY'
# Shopping-basket arithmetic.

from .core import calc_total, calc_total_tax, compute_basket_total, recalc_totals

__all__ = ["compute_basket_total", "calc_total_tax", "recalc_totals", "calc_total"]
PY
python3 -W error::DeprecationWarning -m unittest discover -s unit_tests -t . -v
python3 -m basket.cli total samples/b1.json
