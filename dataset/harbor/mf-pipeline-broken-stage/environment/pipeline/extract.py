"""Stage 1: every raw store export (RAW_DIR/*.csv) -> one JSON object per order, values as text."""

import csv
import json
import sys
from pathlib import Path


def main(raw_dir, out_path):
    with open(out_path, "w") as out:
        for path in sorted(Path(raw_dir).glob("*.csv")):
            with open(path, newline="") as handle:
                for row in csv.DictReader(handle):
                    out.write(json.dumps({key: value for key, value in row.items()}) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
