"""Tables: the CSV files of a directory, ``<name>.csv``, first row the column names.

Column types are inferred from the data: INTEGER when every non-empty field is a whole number, REAL when every
one is a number, TEXT otherwise. An empty field is NULL.
"""

import csv
import os
import re
from dataclasses import dataclass

from .errors import CatalogError

_INTEGER = re.compile(r"^[+-]?\d+$")
_REAL = re.compile(r"^[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?$")


@dataclass
class Table:
    name: str
    columns: list
    types: list
    rows: list
    """Tuples of Python values (None for NULL)."""


def infer_type(fields):
    present = [field for field in fields if field != ""]
    if present and all(_INTEGER.match(field) for field in present):
        return "INTEGER"
    if present and all(_REAL.match(field) for field in present):
        return "REAL"
    return "TEXT" if present else "INTEGER"


def convert(field, column_type):
    if field == "":
        return None
    if column_type == "INTEGER":
        return int(field)
    if column_type == "REAL":
        return float(field)
    return field


class Catalog:
    """The tables of one directory, loaded on first use."""

    def __init__(self, directory):
        if not os.path.isdir(directory):
            raise CatalogError(f"data directory {directory} does not exist")
        self.directory = directory
        self._tables = {}

    def names(self):
        return sorted(name[:-4] for name in os.listdir(self.directory) if name.endswith(".csv"))

    def table(self, name):
        key = name.lower()
        if key not in self._tables:
            self._tables[key] = self._load(name)
        return self._tables[key]

    def _load(self, name):
        matches = [candidate for candidate in self.names() if candidate.lower() == name.lower()]
        if not matches:
            raise CatalogError(f"no table {name} (no {name}.csv in {self.directory})")
        path = os.path.join(self.directory, matches[0] + ".csv")
        with open(path, newline="", encoding="utf-8") as handle:
            reader = csv.reader(handle)
            try:
                header = next(reader)
            except StopIteration:
                raise CatalogError(f"{path} is empty (it needs a header row)") from None
            raw = []
            for line_number, record in enumerate(reader, start=2):
                if not record:
                    continue
                if len(record) != len(header):
                    raise CatalogError(f"{path}:{line_number}: {len(record)} fields, the header has {len(header)}")
                raw.append(record)
        columns = [column.strip() for column in header]
        if len({column.lower() for column in columns}) != len(columns):
            raise CatalogError(f"{path}: repeated column name in the header")
        types = [infer_type([record[i] for record in raw]) for i in range(len(columns))]
        rows = [tuple(convert(record[i], types[i]) for i in range(len(columns))) for record in raw]
        return Table(matches[0], columns, types, rows)
