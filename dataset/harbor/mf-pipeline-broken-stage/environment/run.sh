#!/bin/bash
# bash run.sh RAW_DIR REF_DIR OUT_DIR: the three stages, REF_DIR holding rates.json and stores.csv.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
raw="$1"; ref="$2"; out="$3"
mkdir -p "$out"
python3 "$here/pipeline/extract.py" "$raw" "$out/stage1.jsonl"
python3 "$here/pipeline/transform.py" "$out/stage1.jsonl" "$ref/rates.json" "$ref/stores.csv" "$out/stage2.jsonl"
python3 "$here/pipeline/load.py" "$out/stage2.jsonl" "$out/report.csv"
