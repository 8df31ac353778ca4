import os
import tempfile
import unittest
from datetime import date
from decimal import Decimal

from ledgerkit.errors import JournalSyntaxError, UnbalancedError
from ledgerkit.importers import read_bank_csv, read_qif, to_transactions
from ledgerkit.importers.base import parse_bank_amount
from ledgerkit.journal_io import append_transactions, parse_journal, read_journal
from ledgerkit.ledger import Ledger
from ledgerkit.reports import balance_report, format_flat
from ledgerkit.rules import RuleSet

JOURNAL = """; household
2024-01-05 Groceries
    Expenses:Food          42.10 EUR
    Assets:Bank:Checking

2024-01-31 Salary  ; tags: work
    Assets:Bank:Checking   3000.00 EUR
    Income:Salary         -3000.00 EUR
"""


class JournalTest(unittest.TestCase):
    def test_parse_and_elided_amount(self):
        first, second = parse_journal(JOURNAL, "j")
        self.assertEqual(first.postings[1].money.format(), "-42.10 EUR")
        self.assertEqual(second.tags, ("work",))
        self.assertEqual(second.day, date(2024, 1, 31))

    def test_unbalanced(self):
        with self.assertRaises(UnbalancedError):
            parse_journal("2024-01-01 x\n    Assets:Cash  1.00 USD\n    Expenses:Food  -0.99 USD\n")

    def test_syntax_error_names_the_line(self):
        with self.assertRaises(JournalSyntaxError) as caught:
            parse_journal("2024-01-01 x\n    Assets:Cash 1.00 USD\n", "j.journal")
        self.assertIn("j.journal:2", str(caught.exception))

    def test_balances_roll_up(self):
        ledger = Ledger(parse_journal(JOURNAL))
        flat = format_flat(balance_report(ledger))
        self.assertIn("Assets\t2957.90 EUR", flat)
        self.assertIn("Assets:Bank:Checking\t2957.90 EUR", flat)
        self.assertIn("Income:Salary\t-3000.00 EUR", flat)
        until = format_flat(balance_report(ledger, date(2024, 1, 10)))
        self.assertNotIn("Income", until)

    def test_round_trip_through_the_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "x.journal")
            append_transactions(path, parse_journal(JOURNAL))
            append_transactions(path, parse_journal(JOURNAL)[:1])
            self.assertEqual(len(read_journal(path)), 3)


class ImportTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, text):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w") as handle:
            handle.write(text)
        return path

    def test_amount_text(self):
        self.assertEqual(parse_bank_amount("-12.50"), Decimal("-12.50"))
        self.assertEqual(parse_bank_amount("1,234.56"), Decimal("1234.56"))
        self.assertEqual(parse_bank_amount("+3"), Decimal("3"))

    def test_csv_with_rules(self):
        path = self.write("s.csv", "Date,Description,Amount\n15/01/2024,SUPERMARKET 12,-23.40\n"
                                   "31/01/2024,ACME payroll,1200.00\n")
        rules = RuleSet.parse("market => Expenses:Food\npayroll => Income:Salary\n")
        transactions = to_transactions(read_bank_csv(path, "EUR"), "Assets:Bank", rules)
        self.assertEqual([(t.day, t.postings[1].account, t.postings[1].money.format()) for t in transactions],
                         [(date(2024, 1, 15), "Expenses:Food", "23.40 EUR"),
                          (date(2024, 1, 31), "Income:Salary", "-1200.00 EUR")])

    def test_qif_with_four_digit_years(self):
        path = self.write("s.qif", "!Type:Bank\nD01/20/2024\nT-15.00\nPBookshop\nLBooks\n^\n"
                                   "D02/01/2024\nT100.00\nPRefund\nMorder 7\nL[Assets:Savings]\n^\n")
        lines = read_qif(path)
        self.assertEqual([(l.day, l.amount, l.description, l.category) for l in lines],
                         [(date(2024, 1, 20), Decimal("-15.00"), "Bookshop", "Expenses:Books"),
                          (date(2024, 2, 1), Decimal("100.00"), "Refund - order 7", "Assets:Savings")])


if __name__ == "__main__":
    unittest.main()
