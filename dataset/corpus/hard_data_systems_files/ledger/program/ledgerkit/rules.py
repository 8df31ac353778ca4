"""Import rules: which account the other side of an imported bank line goes to.

A rules file has one rule a line, ``PATTERN => ACCOUNT``: PATTERN is a case-insensitive regular expression
searched in the line's description; the first rule that matches wins. Lines no rule matches go to
``Expenses:Uncategorized`` (money out) or ``Income:Uncategorized`` (money in).
"""

import re
from dataclasses import dataclass

from .accounts import check_account
from .errors import LedgerError

UNCATEGORIZED_OUT = "Expenses:Uncategorized"
UNCATEGORIZED_IN = "Income:Uncategorized"


@dataclass(frozen=True)
class Rule:
    pattern: re.Pattern
    account: str


class RuleSet:
    def __init__(self, rules=()):
        self.rules = list(rules)

    @classmethod
    def parse(cls, text, path="<rules>"):
        rules = []
        for number, raw in enumerate(text.splitlines(), start=1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            pattern, arrow, account = line.partition("=>")
            if not arrow or not pattern.strip() or not account.strip():
                raise LedgerError(f"{path}:{number}: expected 'PATTERN => ACCOUNT'")
            try:
                compiled = re.compile(pattern.strip(), re.IGNORECASE)
            except re.error as error:
                raise LedgerError(f"{path}:{number}: bad pattern: {error}") from None
            rules.append(Rule(compiled, check_account(account.strip())))
        return cls(rules)

    @classmethod
    def load(cls, path):
        if path is None:
            return cls()
        with open(path, encoding="utf-8") as handle:
            return cls.parse(handle.read(), path)

    def account_for(self, description, amount):
        for rule in self.rules:
            if rule.pattern.search(description):
                return rule.account
        return UNCATEGORIZED_OUT if amount < 0 else UNCATEGORIZED_IN
