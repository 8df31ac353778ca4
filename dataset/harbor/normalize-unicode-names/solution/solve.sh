#!/bin/bash
python3 - <<'EOF'
import os
import shutil
import unicodedata

# shutil.move, not os.rename: overlayfs refuses to rename a directory of a lower image layer (EXDEV)
for root, dirs, files in os.walk("/app/music", topdown=False):
    for name in files + dirs:
        nfc = unicodedata.normalize("NFC", name)
        if nfc != name:
            shutil.move(os.path.join(root, name), os.path.join(root, nfc))
EOF
