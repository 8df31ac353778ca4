#!/bin/bash
python3 - <<'EOF'
from pathlib import Path

path = Path("/app/sshd_config")
lines = path.read_text().splitlines()
end = next((i for i, l in enumerate(lines) if l.strip().startswith("Match")), len(lines))
head = [l for l in lines[:end] if l.split()[:1] not in (["PermitRootLogin"], ["PasswordAuthentication"])]
head += ["PermitRootLogin no", "PasswordAuthentication no"]
path.write_text("\n".join(head + lines[end:]) + "\n")
EOF
