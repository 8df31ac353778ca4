#!/bin/bash
python3 - <<'FIX'
import json
from pathlib import Path
fixes = json.loads(Path("/solution/fixes.json").read_text())
chosen = None
for name, (path, planted, correct) in sorted(fixes.items()):
    if chosen is not None and name not in chosen:
        continue
    target = Path("/app") / path
    text = target.read_text()
    assert text.count(planted) == 1, (name, path)
    target.write_text(text.replace(planted, correct))
    print("fixed", name, "in", path)
FIX
cd /app/bake && python3 -m unittest discover -s tests -t . 2>&1 | tail -1
