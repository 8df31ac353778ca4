#!/bin/bash
set -e
mkdir -p /app/build && cd /app/build
tar xzf /app/dist/wordfreq-1.2.tar.gz
cd wordfreq-1.2
# The version is 1.2; strdup is POSIX, not C99 (an implicit declaration is an error under -Werror).
sed -i 's/^VERSION = 1.1$/VERSION = 1.2/; s/-std=c99/-std=c99 -D_POSIX_C_SOURCE=200809L/' Makefile
# install into a missing folder creates a FILE named bin: create the folders, name the targets.
python3 - <<'EOF'
from pathlib import Path
path = Path("Makefile")
text = path.read_text()
text = text.replace("\tinstall -m 755 wordfreq $(PREFIX)/bin\n",
                    "\tinstall -d $(PREFIX)/bin $(PREFIX)/share/man/man1\n\tinstall -m 755 wordfreq $(PREFIX)/bin/wordfreq\n")
text = text.replace("\tinstall -m 644 man/wordfreq.1 $(PREFIX)/share/man/man1\n",
                    "\tinstall -m 644 man/wordfreq.1 $(PREFIX)/share/man/man1/wordfreq.1\n")
path.write_text(text)
EOF
# Ties in alphabetical order, as the man page says.
python3 - <<'EOF'
from pathlib import Path
path = Path("src/wordfreq.c")
source = path.read_text()
old = "    return (y->count > x->count) - (y->count < x->count);\n"
new = ("    if (x->count != y->count)\n        return (y->count > x->count) - (y->count < x->count);\n"
       "    return strcmp(x->word, y->word);\n")
path.write_text(source.replace(old, new))
EOF
make clean && make
make install PREFIX=/app/prefix
/app/prefix/bin/wordfreq --version
