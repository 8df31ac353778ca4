"""One module per tool. Importing this package registers every module in it into ``TOOLS``,
so adding a tool is adding one file here."""

from __future__ import annotations

import importlib
import pkgutil

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")
