"""ledgerkit: a double-entry ledger kept as a plain-text journal.

money.py (amounts and currencies), rates.py (exchange rates by date), accounts.py (the account tree),
journal.py (transactions and their balancing), journal_io.py (reading and writing the journal file),
importers/ (bank CSV exports and QIF files), rules.py (which account an imported line goes to), ledger.py
(balances), reports.py (balance sheet and income statement, optionally converted), cli.py (command line).
"""

__version__ = "0.7.0"
