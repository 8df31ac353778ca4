#!/bin/bash
cd /app/invoicing
python3 - <<'EOF'
from pathlib import Path

def patch(path, old, new):
    p = Path(path)
    text = p.read_text()
    assert old in text, (path, old)
    p.write_text(text.replace(old, new))

# Floats cannot hold 2.675 and round() rounds half to even: quantize the exact decimal, halves up.
patch("invoicing/money.py", "from decimal import Decimal\n", "from decimal import ROUND_HALF_UP, Decimal\n")
patch("invoicing/money.py", "    return Decimal(round(float(value), 2))\n",
      "    return Decimal(str(value)).quantize(CENT, rounding=ROUND_HALF_UP)\n")
# Thousands separators, and a percentage is a hundredth.
patch("invoicing/lines.py", "quantity=int(quantity),", 'quantity=int(quantity.replace(",", "")),')
patch("invoicing/lines.py", '/ 10 if discount', '/ 100 if discount')
# Region names: case and spaces do not matter.
patch("invoicing/tax.py", "    if category in EXEMPT:", "    region = region.strip().lower()\n    if category.lower() in EXEMPT:")
# Tax is due on the discounted net, not on the gross.
patch("invoicing/totals.py",
      "        gross = to_money(line.quantity * line.unit_price)\n        subtotal += line_net(line)\n"
      "        tax += to_money(gross * rate_for(region, line.category))\n",
      "        net = line_net(line)\n        subtotal += net\n        tax += to_money(net * rate_for(region, line.category))\n")
EOF
python3 -m unittest discover -s tests -t .
