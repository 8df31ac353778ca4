"""python3 -m ledgerkit JOURNAL COMMAND ...

    import-csv FILE --account ACCOUNT [--rules FILE] [--currency CUR]
    import-qif FILE --account ACCOUNT [--rules FILE] [--currency CUR]
    balance [--from DATE] [--as-of DATE] [--prefix ACCOUNT] [--convert CUR --rates FILE] [--flat | --natural]
    income --from DATE --to DATE [--convert CUR --rates FILE] [--flat]
    rate BASE QUOTE DATE --rates FILE
    convert "AMOUNT CUR" TARGET DATE --rates FILE
    check

Dates are YYYY-MM-DD. Exit status 0, or 2 with a message naming the problem.
"""

import argparse
import sys
from datetime import date

from .errors import LedgerError
from .importers import read_bank_csv, read_qif, to_transactions
from .journal_io import append_transactions, read_journal
from .ledger import Ledger
from .money import Money
from .rates import load_rates
from .reports import balance_report, format_flat, format_report, income_statement, net_total
from .rules import RuleSet


def _day(text):
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a YYYY-MM-DD date: {text!r}") from None


def build_parser():
    parser = argparse.ArgumentParser(prog="ledgerkit", description="A plain-text double-entry ledger.")
    parser.add_argument("journal", help="the journal file (created by the first import)")
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("import-csv", "import-qif"):
        sub = commands.add_parser(name)
        sub.add_argument("file")
        sub.add_argument("--account", required=True, help="the bank account the file is a statement of")
        sub.add_argument("--rules", help="categorization rules (see rules.py)")
        sub.add_argument("--currency", default="USD", help="currency of lines that name none")
    balance = commands.add_parser("balance")
    balance.add_argument("--from", dest="start", type=_day)
    balance.add_argument("--as-of", type=_day)
    balance.add_argument("--prefix")
    balance.add_argument("--convert", metavar="CUR")
    balance.add_argument("--rates")
    balance.add_argument("--flat", action="store_true", help="ACCOUNT<TAB>AMOUNT lines")
    balance.add_argument("--natural", action="store_true", help="credit accounts shown positive")
    income = commands.add_parser("income")
    income.add_argument("--from", dest="start", type=_day, required=True)
    income.add_argument("--to", dest="end", type=_day, required=True)
    income.add_argument("--convert", metavar="CUR")
    income.add_argument("--rates")
    income.add_argument("--flat", action="store_true")
    rate = commands.add_parser("rate")
    rate.add_argument("base")
    rate.add_argument("quote")
    rate.add_argument("day", type=_day)
    rate.add_argument("--rates", required=True)
    convert = commands.add_parser("convert")
    convert.add_argument("money")
    convert.add_argument("target")
    convert.add_argument("day", type=_day)
    convert.add_argument("--rates", required=True)
    commands.add_parser("check")
    return parser


def _rates(args):
    if args.convert and not args.rates:
        raise LedgerError("--convert needs --rates FILE")
    return load_rates(args.rates) if args.rates else None


def _import(args):
    rules = RuleSet.load(args.rules)
    if args.command == "import-csv":
        lines = read_bank_csv(args.file, args.currency)
    else:
        lines = read_qif(args.file, args.currency)
    ledger = Ledger(read_journal(args.journal))
    fresh, skipped = [], 0
    for transaction in to_transactions(lines, args.account, rules):
        if ledger.duplicates_of(transaction):
            skipped += 1
            continue
        ledger.add(transaction)
        fresh.append(transaction)
    if fresh:
        append_transactions(args.journal, fresh)
    print(f"imported {len(fresh)} transactions, skipped {skipped} duplicates")


def run(args):
    if args.command in ("import-csv", "import-qif"):
        _import(args)
        return 0
    if args.command == "rate":
        print(load_rates(args.rates).rate(args.base, args.quote, args.day))
        return 0
    if args.command == "convert":
        money = Money.parse(args.money)
        rate = load_rates(args.rates).rate(money.currency, args.target, args.day)
        print(money.convert(args.target, rate).format())
        return 0
    ledger = Ledger(read_journal(args.journal))
    if args.command == "check":
        print(f"ok: {len(ledger.transactions)} transactions, {len(ledger.accounts())} accounts")
        return 0
    rates = _rates(args)
    if args.command == "balance":
        lines = balance_report(ledger, args.as_of, args.convert, rates, args.prefix, args.start)
        print(format_flat(lines) if args.flat else format_report(lines, args.natural))
        return 0
    if args.command == "income":
        lines = income_statement(ledger, args.start, args.end, args.convert, rates)
        if args.flat:
            print(format_flat(lines))
        else:
            print(format_report(lines, natural=True))
            for money in net_total(lines).values():
                print(f"Net result\t{(-money).format()}")
        return 0
    return 2


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        return run(args)
    except LedgerError as error:
        print(f"ledgerkit: {error}", file=sys.stderr)
        return error.exit_status
    except OSError as error:
        print(f"ledgerkit: {error.filename}: {error.strerror}", file=sys.stderr)
        return 2
