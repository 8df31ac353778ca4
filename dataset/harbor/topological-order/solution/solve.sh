#!/bin/bash
cat > /app/order.py <<'EOF'
import heapq
import sys

deps = {}
for line in open(sys.argv[1]):
    if ":" in line:
        job, rest = line.split(":", 1)
        deps.setdefault(job.strip(), set()).update(rest.split())
for job in list(deps):
    for dep in deps[job]:
        deps.setdefault(dep, set())
waiting = {job: set(d) for job, d in deps.items()}
ready = [job for job, d in waiting.items() if not d]
heapq.heapify(ready)
order = []
while ready:
    job = heapq.heappop(ready)
    order.append(job)
    for other, d in waiting.items():
        if job in d:
            d.discard(job)
            if not d:
                heapq.heappush(ready, other)
if len(order) != len(deps):
    print("cycle", file=sys.stderr)
    sys.exit(2)
print("\n".join(order))
EOF
