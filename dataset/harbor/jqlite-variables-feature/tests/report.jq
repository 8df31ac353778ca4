# per order: the customer's lines, totals after the discount, and the last two skus
.region as $region
| .orders[]
| . as $order
| ($order.items | map(.qty * .price) | add // 0) as $gross
| {
    region: $region,
    id,
    customer: ($customer_names[$order.customer] // $order.customer),
    gross: $gross,
    net: ($gross - ($order.discount // $default_discount)),
    note: ($order.note // "-"),
    last_skus: ($order.items[-2:] | map(.sku)),
    all_but_first: [$order.items[1:][] | .sku],
    flagged: ([$order.items[] | select(.qty >= $min_qty)] | length),
    label: ($prefix + $order.id)
  }
