import sys

from jqlite.cli import main

sys.exit(main(sys.argv[1:]))
