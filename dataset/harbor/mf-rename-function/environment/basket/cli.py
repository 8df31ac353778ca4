"""python3 -m basket.cli COMMAND BASKET.json [TAX_RATE]: print one number (cents) or the rendering."""

import json
import sys

from basket import core
from basket.render import render

COMMANDS = {"total": "calc_total", "tax": "calc_total_tax"}


def main(argv):
    command, path = argv[0], argv[1]
    tax_rate = float(argv[2]) if len(argv) > 2 else 0.2
    basket = json.load(open(path))
    if command == "render":
        print(render(basket, tax_rate))
    elif command == "total":
        print(getattr(core, COMMANDS[command])(basket["lines"], tax_rate, basket.get("discount_cents", 0)))
    elif command == "tax":
        print(getattr(core, COMMANDS[command])(basket["lines"], tax_rate))
    else:
        raise SystemExit(f"unknown command {command}")


if __name__ == "__main__":
    main(sys.argv[1:])
