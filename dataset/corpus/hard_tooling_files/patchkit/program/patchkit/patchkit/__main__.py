import sys

from patchkit.cli import main

sys.exit(main())
