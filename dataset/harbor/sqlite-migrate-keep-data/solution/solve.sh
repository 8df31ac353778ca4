#!/bin/bash
cat > /app/migrate_v2.sql <<'SQL'
PRAGMA foreign_keys = OFF;
BEGIN;
CREATE TABLE categories (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
INSERT INTO categories (name) SELECT DISTINCT lower(trim(category)) FROM products ORDER BY 1;
CREATE TABLE products_v2 (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  price_cents INTEGER NOT NULL CHECK (price_cents >= 0),
  category_id INTEGER NOT NULL REFERENCES categories(id)
);
INSERT INTO products_v2 (id, name, price_cents, category_id)
  SELECT p.id, p.name, CAST(round(CAST(p.price AS REAL) * 100) AS INTEGER), c.id
  FROM products p JOIN categories c ON c.name = lower(trim(p.category));
CREATE TABLE orders_v2 (
  id INTEGER PRIMARY KEY,
  product_id INTEGER NOT NULL REFERENCES products(id),
  qty INTEGER NOT NULL,
  placed_on TEXT NOT NULL
);
INSERT INTO orders_v2 (id, product_id, qty, placed_on)
  SELECT id, product_id, qty, substr(placed, 7, 4) || '-' || substr(placed, 1, 2) || '-' || substr(placed, 4, 2) FROM orders;
DROP TABLE orders;
DROP TABLE products;
ALTER TABLE products_v2 RENAME TO products;
ALTER TABLE orders_v2 RENAME TO orders;
PRAGMA user_version = 2;
COMMIT;
SQL
sqlite3 /app/shop.db < /app/migrate_v2.sql
sqlite3 /app/shop.db 'PRAGMA user_version; PRAGMA foreign_key_check;'
