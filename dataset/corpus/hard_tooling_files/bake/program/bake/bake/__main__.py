import sys

from bake.cli import main

sys.exit(main())
