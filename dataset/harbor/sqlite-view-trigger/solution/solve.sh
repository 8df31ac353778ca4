#!/bin/bash
cat > /app/bank_objects.sql <<'SQL'
CREATE VIEW account_balances AS
SELECT a.id AS account_id, a.owner AS owner,
       COALESCE(SUM(CASE t.kind WHEN 'deposit' THEN t.amount_cents ELSE -t.amount_cents END), 0) AS balance_cents,
       MAX(t.at) AS last_activity
FROM accounts a LEFT JOIN transactions t ON t.account_id = a.id
GROUP BY a.id;

CREATE TABLE owner_changes (id INTEGER PRIMARY KEY, account_id INTEGER NOT NULL, old_owner TEXT NOT NULL,
                            new_owner TEXT NOT NULL);

CREATE TRIGGER no_overdraft BEFORE INSERT ON transactions
WHEN NEW.kind = 'withdrawal'
  AND NEW.amount_cents > (SELECT balance_cents FROM account_balances WHERE account_id = NEW.account_id)
BEGIN
  SELECT RAISE(ABORT, 'insufficient funds');
END;

CREATE TRIGGER log_owner_change AFTER UPDATE OF owner ON accounts
WHEN OLD.owner IS NOT NEW.owner
BEGIN
  INSERT INTO owner_changes (account_id, old_owner, new_owner) VALUES (OLD.id, OLD.owner, NEW.owner);
END;
SQL
sqlite3 /app/ledger.sqlite < /app/bank_objects.sql
sqlite3 /app/ledger.sqlite 'SELECT * FROM account_balances;'
