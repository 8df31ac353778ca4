"""Exchange rates by date, from a CSV file with the columns ``date,base,quote,rate``: on ``date`` one unit of
``base`` was worth ``rate`` units of ``quote``.

The rate used for a day is the latest one published ON OR BEFORE that day (a weekend uses Friday's rate; a rate
is never taken from the future). A pair that only appears the other way round uses 1/rate; a pair with no rate
either way goes through USD (EUR -> JPY = EUR -> USD -> JPY, both legs at their own latest rate).
"""

import bisect
import csv
from datetime import date
from decimal import Decimal

from .errors import RateError
from .money import check_currency, parse_decimal

PIVOT = "USD"


class RateTable:
    def __init__(self):
        self._series = {}
        """(base, quote) -> (sorted list of dates, list of rates at those dates)."""

    def add(self, day, base, quote, rate):
        check_currency(base)
        check_currency(quote)
        if base == quote:
            raise RateError(f"a rate from {base} to itself")
        if rate <= 0:
            raise RateError(f"rate {rate} for {base}/{quote} on {day} is not positive")
        dates, rates = self._series.setdefault((base, quote), ([], []))
        index = bisect.bisect_left(dates, day)
        if index < len(dates) and dates[index] == day:
            rates[index] = rate
        else:
            dates.insert(index, day)
            rates.insert(index, rate)

    def _direct(self, base, quote, day):
        series = self._series.get((base, quote))
        if series is None:
            return None
        dates, rates = series
        index = bisect.bisect_right(dates, day) - 1  # the last date on or before ``day``
        if index < 0:
            return None
        return rates[index]

    def _pair(self, base, quote, day):
        rate = self._direct(base, quote, day)
        if rate is not None:
            return rate
        inverse = self._direct(quote, base, day)
        if inverse is not None:
            return Decimal(1) / inverse
        return None

    def rate(self, base, quote, day):
        """Units of ``quote`` per unit of ``base`` on ``day`` (see the module's rules)."""
        if base == quote:
            return Decimal(1)
        rate = self._pair(base, quote, day)
        if rate is not None:
            return rate
        if PIVOT not in (base, quote):
            first = self._pair(base, PIVOT, day)
            second = self._pair(PIVOT, quote, day)
            if first is not None and second is not None:
                return first * second
        raise RateError(f"no {base}/{quote} rate on or before {day.isoformat()}")

    def pairs(self):
        return sorted(self._series)

    def __len__(self):
        return sum(len(dates) for dates, _ in self._series.values())


def load_rates(path):
    table = RateTable()
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = {"date", "base", "quote", "rate"} - set(reader.fieldnames or ())
        if missing:
            raise RateError(f"{path}: missing column(s) {', '.join(sorted(missing))}")
        for line_number, row in enumerate(reader, start=2):
            try:
                day = date.fromisoformat(row["date"].strip())
            except ValueError:
                raise RateError(f"{path}:{line_number}: bad date {row['date']!r}") from None
            table.add(day, row["base"].strip(), row["quote"].strip(), parse_decimal(row["rate"]))
    return table
