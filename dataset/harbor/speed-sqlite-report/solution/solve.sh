#!/bin/bash
# The correlated subqueries scan orders (and shipments, per order) once per customer: index the columns they
# look up, in the schema that load.py applies.
cat >> /app/schema.sql <<'EOF'

CREATE INDEX orders_by_customer ON orders(customer_id, amount_cents);
CREATE INDEX shipments_by_order ON shipments(order_id);
EOF
