# A small inventory report: exercises strings, closures, loops and arithmetic together.
let items = [
  {"name": "bolt\\M6", "qty": 120, "price": 0.25},
  {"name": "nut \"hex\"", "qty": 75, "price": 0.1},
  {"name": "washer", "qty": 9, "price": 0.05},
  {"name": "rivet\tsteel", "qty": 0, "price": 0.4},
];

fn make_tally() {
  let total = 0;
  let seen = [];
  return {
    "add": fn(item) { total += item["qty"]; push(seen, item["name"]); return total; },
    "total": fn() => total,
    "seen": fn() => seen,
  };
}

fn first_missing(list) {
  let i = 0;
  for item in list {
    if item["qty"] == 0 { return i; }
    i += 1;
  }
  return -1;
}

let tally = make_tally();
let labels = [];
for item in items {
  tally["add"](item);
  push(labels, fn() => format("{} x{}", repr(item["name"]), item["qty"]));
}
for label in labels { print(label()); }
print("total", tally["total"]());
print("missing at", first_missing(items));
let value = 0;
for item in items { value += item["qty"] * item["price"]; }
print("value", value, "buckets", -value // 10 % 7, 2 ** 2 ** 3 - -2 ** 2);
print(tally["seen"]());
