#!/bin/bash
cd /app/repo
git merge --no-edit feature/currency || true
cat > pricing.py <<'EOF'
import configparser

from currency import convert


def load_config(path="config.ini"):
    parser = configparser.ConfigParser()
    parser.read(path)
    return parser


def line_total(unit_price, quantity):
    return round(unit_price * quantity, 2)


def order_total(lines, config, currency="EUR"):
    """Total of (unit_price, quantity) lines, VAT included, in ``currency`` (prices are EUR); bulk discount on
    big subtotals."""
    subtotal = sum(line_total(price, qty) for price, qty in lines)
    if subtotal >= float(config["discount"]["threshold"]):
        subtotal *= 1 - float(config["discount"]["rate"])
    vat = float(config["tax"]["vat_rate"])
    return convert(round(subtotal * (1 + vat), 2), currency, config)
EOF
cat > config.ini <<'EOF'
[tax]
vat_rate = 0.20

[discount]
threshold = 100
rate = 0.05

[currency]
eur = 1.0
usd = 1.08
gbp = 0.86
EOF
cat > test_pricing.py <<'EOF'
import unittest

from pricing import load_config, order_total


class PricingTest(unittest.TestCase):
    def setUp(self):
        self.config = load_config()

    def test_small_order(self):
        self.assertEqual(order_total([(10.0, 2)], self.config), 24.0)

    def test_bulk_discount(self):
        self.assertEqual(order_total([(50.0, 2)], self.config), 114.0)

    def test_display_currency(self):
        self.assertEqual(order_total([(10.0, 2)], self.config, "USD"), 25.92)

    def test_discount_then_currency(self):
        self.assertEqual(order_total([(50.0, 2)], self.config, "GBP"), 98.04)
EOF
python3 -B -m unittest test_pricing
git add pricing.py config.ini test_pricing.py
git commit -q --no-edit
git log --oneline --graph -6
