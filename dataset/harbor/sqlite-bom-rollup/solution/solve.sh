#!/bin/bash
cat > /app/rollup.sql <<'SQL'
WITH RECURSIVE
  walk(product_id, part_id, mult, depth) AS (
    SELECT id, id, 1, 1 FROM parts WHERE is_product = 1
    UNION ALL
    SELECT w.product_id, c.part_id, w.mult * c.qty, w.depth + 1
    FROM walk w JOIN components c ON c.assembly_id = w.part_id
  )
SELECT w.product_id AS product,
       SUM(w.mult * COALESCE(p.cost_cents, 0)) AS cost_cents,
       MAX(w.depth) AS levels,
       COUNT(DISTINCT CASE WHEN w.depth > 1 AND NOT EXISTS (SELECT 1 FROM components k WHERE k.assembly_id = w.part_id)
                           THEN w.part_id END) AS leaf_parts
FROM walk w JOIN parts p ON p.id = w.part_id
GROUP BY w.product_id
ORDER BY w.product_id;
SQL
python3 - <<'EOF'
import csv
import sqlite3

con = sqlite3.connect("file:/app/bom.db?mode=ro", uri=True)
rows = con.execute(open("/app/rollup.sql").read()).fetchall()
with open("/app/rollup.csv", "w", newline="") as handle:
    out = csv.writer(handle)
    out.writerow(["product", "cost_cents", "levels", "leaf_parts"])
    out.writerows(rows)
EOF
cat /app/rollup.csv
