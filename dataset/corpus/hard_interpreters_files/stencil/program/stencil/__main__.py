import sys

from stencil.cli import main

sys.exit(main(sys.argv[1:]))
