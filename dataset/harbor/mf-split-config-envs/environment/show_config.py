"""python3 /app/show_config.py --env ENV: print the effective settings of ENV as JSON."""

import argparse
import json
import sys

sys.path.insert(0, "/app")
from app.config_loader import load  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--env", required=True)
    args = parser.parse_args()
    try:
        settings = load(args.env)
    except KeyError:
        print(f"unknown environment: {args.env}", file=sys.stderr)
        return 2
    print(json.dumps(settings, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
