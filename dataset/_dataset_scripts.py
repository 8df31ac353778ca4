"""Shared start of the dataset/ scripts: ``HERE`` (this folder) and an importable ``terminal_agent``.

Imported first by each script (``python dataset/<script>.py`` puts this folder on ``sys.path``).
When the package is not installed (a checkout without ``pip install -e .``), the checkout's
``src/`` is put on ``sys.path`` so the scripts still run.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

#: The dataset/ folder: the scripts' default inputs and outputs live here.
HERE = Path(__file__).resolve().parent

if importlib.util.find_spec("terminal_agent") is None:  # running from a checkout without `pip install -e .`
    sys.path.insert(0, str(HERE.parent / "src"))
