"""QIF (Quicken Interchange Format) bank files.

    !Type:Bank
    D03/15'24
    T-1,234.56
    PGrocery store
    LFood:Groceries
    ^

One record per ``^``. D: the date, as MM/DD/YYYY or MM/DD'YY (also with ``-`` instead of ``/``); a two-digit
year YY means 20YY when YY < 70 and 19YY otherwise. T (or U): the amount, negative for money out. P: the payee
(the description); M: a memo, added to the description after " - ". L: the category: ``[Account:Name]`` is a
transfer to that account, ``Cat:Sub`` becomes ``Expenses:Cat:Sub`` for money out and ``Income:Cat:Sub`` for money
in. Other fields are ignored. QIF files carry no currency: ``--currency`` (default USD) applies.
"""

import re
from datetime import date
from decimal import InvalidOperation

from ..accounts import check_account
from ..errors import ImportError_, LedgerError
from .base import BankLine, parse_bank_amount

DATE = re.compile(r"^\s*(\d{1,2})[/-](\d{1,2})(?:[/-](\d{4})|'\s*(\d{2}))\s*$")


def parse_qif_date(text):
    match = DATE.match(text)
    if not match:
        raise ValueError(f"bad QIF date {text!r}")
    month, day = int(match.group(1)), int(match.group(2))
    if match.group(3):
        year = int(match.group(3))
    else:
        short = int(match.group(4))
        year = 2000 + short if short < 70 else 1900 + short
    return date(year, month, day)


def _category_account(category, amount):
    if category.startswith("[") and category.endswith("]"):
        return check_account(category[1:-1])
    segments = [segment.strip().replace(" ", "-") for segment in category.split(":") if segment.strip()]
    segments = [segment[:1].upper() + segment[1:] for segment in segments]
    return check_account(":".join(["Expenses" if amount < 0 else "Income"] + segments))


def read_qif(path, currency="USD"):
    lines = []
    record = {}
    start = None
    with open(path, encoding="utf-8") as handle:
        for number, raw in enumerate(handle, start=1):
            line = raw.rstrip("\r\n")
            if not line.strip():
                continue
            if line.startswith("!"):
                if not line.lower().startswith(("!type:bank", "!type:cash", "!type:ccard")):
                    raise ImportError_(path, number, f"unsupported section {line}")
                continue
            if start is None:
                start = number
            code, value = line[0], line[1:].strip()
            if code == "^":
                lines.append(_record(record, path, start, currency))
                record, start = {}, None
            elif code in "DTUPML":
                record.setdefault(code, value)
    if record:
        raise ImportError_(path, start, "record not closed with ^")
    return lines


def _record(record, path, number, currency):
    if "D" not in record:
        raise ImportError_(path, number, "record without a date (D)")
    amount_text = record.get("T", record.get("U"))
    if amount_text is None:
        raise ImportError_(path, number, "record without an amount (T)")
    try:
        day = parse_qif_date(record["D"])
        amount = parse_bank_amount(amount_text)
    except (ValueError, InvalidOperation) as error:
        raise ImportError_(path, number, str(error)) from None
    description = record.get("P", "")
    if record.get("M"):
        description = f"{description} - {record['M']}" if description else record["M"]
    category = None
    if record.get("L"):
        try:
            category = _category_account(record["L"], amount)
        except LedgerError as error:
            raise ImportError_(path, number, str(error)) from None
    return BankLine(day, description or "(no payee)", amount, currency, f"{path}:{number}", category)
