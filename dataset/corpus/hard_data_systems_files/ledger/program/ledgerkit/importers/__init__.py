"""Importers: bank files -> transactions. Each importer yields BankLine records; base.to_transactions turns them
into balanced two-posting transactions with the rules."""

from .bank_csv import read_bank_csv
from .base import BankLine, to_transactions
from .qif import read_qif

__all__ = ["BankLine", "read_bank_csv", "read_qif", "to_transactions"]
