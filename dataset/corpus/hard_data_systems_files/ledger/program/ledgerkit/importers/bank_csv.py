"""Bank CSV exports. Two layouts are understood, told apart by the header row:

- ``Date,Description,Amount,Currency``: one signed amount (negative: money out);
- ``Date,Description,Debit,Credit,Currency``: money out in Debit, money in in Credit (both written as positive
  numbers; exactly one of the two is filled on each line).

Dates are DD/MM/YYYY. Amounts may use thousands separators (``1,234.56``) or accounting parentheses for
negative numbers (``(12.50)``). The Currency column may be left out, then ``--currency`` (default USD) applies.
"""

import csv
from datetime import date
from decimal import InvalidOperation

from ..errors import ImportError_
from ..money import check_currency
from .base import BankLine, parse_bank_amount


def _day(text, path, number):
    try:
        day, month, year = (int(part) for part in text.strip().split("/"))
        return date(year, month, day)
    except ValueError:
        raise ImportError_(path, number, f"bad date {text!r} (expected DD/MM/YYYY)") from None


def _amount(text, path, number):
    try:
        return parse_bank_amount(text)
    except (InvalidOperation, ValueError):
        raise ImportError_(path, number, f"bad amount {text!r}") from None


def read_bank_csv(path, default_currency="USD"):
    """The BankLines of the CSV export at ``path``."""
    check_currency(default_currency)
    lines = []
    with open(path, newline="", encoding="utf-8-sig") as handle:
        reader = csv.reader(handle)
        try:
            header = [name.strip().lower() for name in next(reader)]
        except StopIteration:
            raise ImportError_(path, 1, "empty file") from None
        columns = {name: index for index, name in enumerate(header)}
        split = "debit" in columns and "credit" in columns
        needed = {"date", "description"} | ({"debit", "credit"} if split else {"amount"})
        missing = needed - set(columns)
        if missing:
            raise ImportError_(path, 1, f"missing column(s) {', '.join(sorted(missing))}")
        for number, record in enumerate(reader, start=2):
            if not any(field.strip() for field in record):
                continue
            if len(record) != len(header):
                raise ImportError_(path, number, f"{len(record)} fields, the header has {len(header)}")
            field = lambda name: record[columns[name]].strip()  # noqa: E731
            if split:
                debit, credit = field("debit"), field("credit")
                if bool(debit) == bool(credit):
                    raise ImportError_(path, number, "exactly one of Debit and Credit must be filled")
                amount = -_amount(debit, path, number) if debit else _amount(credit, path, number)
            else:
                amount = _amount(field("amount"), path, number)
            currency = field("currency") if "currency" in columns and field("currency") else default_currency
            try:
                check_currency(currency)
            except Exception as error:  # MoneyError: report it with the line it came from
                raise ImportError_(path, number, str(error)) from None
            lines.append(BankLine(_day(field("date"), path, number), field("description"), amount, currency,
                                  f"{path}:{number}"))
    return lines
