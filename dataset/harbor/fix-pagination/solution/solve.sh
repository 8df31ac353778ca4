#!/bin/bash
python3 - <<'EOF'
from pathlib import Path
p = Path("/app/paginate.py")
s = p.read_text()
s = s.replace("start = page * per_page", "start = (page - 1) * per_page")
s = s.replace("items[start:start + per_page - 1]", "items[start:start + per_page]")
s = s.replace("return n_items // per_page", "return -(-n_items // per_page)")
p.write_text(s)
EOF
