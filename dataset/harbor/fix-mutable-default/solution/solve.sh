#!/bin/bash
python3 - <<'EOF'
from pathlib import Path
p = Path("/app/tags.py")
s = p.read_text()
s = s.replace("def add_tag(tag, tags=[]):\n    tags.append(tag)", "def add_tag(tag, tags=None):\n    if tags is None:\n        tags = []\n    tags.append(tag)")
s = s.replace("    result = None\n", "    result = []\n")
s = s.replace("result = add_tag(word[1:])", "result = add_tag(word[1:], result)")
p.write_text(s)
EOF
