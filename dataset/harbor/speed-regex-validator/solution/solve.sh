#!/bin/bash
python3 - <<'EOF'
from pathlib import Path
path = Path("/app/validate.py")
text = path.read_text()
# Same languages, no nested quantifiers over the same characters: each character has one way to match.
text = text.replace('ID_RE = re.compile(r"^([a-z0-9]+-?)*[a-z0-9]+$")',
                    'ID_RE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*\\Z")')
text = text.replace('EMAIL_RE = re.compile(r"^([a-zA-Z0-9]+[._]?)+@([a-z0-9]+\\.)+[a-z]{2,}$")',
                    'EMAIL_RE = re.compile(r"[a-zA-Z0-9]+(?:[._][a-zA-Z0-9]+)*[._]?@(?:[a-z0-9]+\\.)+[a-z]{2,}\\Z")')
assert "(?:-[a-z0-9]+)" in text and "(?:[._][a-zA-Z0-9]+)" in text
path.write_text(text)
EOF
