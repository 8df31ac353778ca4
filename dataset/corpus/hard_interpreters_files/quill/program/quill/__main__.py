"""``python3 -m quill``: see :mod:`quill.cli`."""

import sys

from quill.cli import main

sys.exit(main(sys.argv[1:]))
