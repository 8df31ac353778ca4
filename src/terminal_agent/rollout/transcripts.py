"""Per-trajectory transcripts: the chat, each step's action and tool output, and timings.

One JSON file per trial under ``OUTPUT/transcripts/TASK/attempt-N.json``, written atomically.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import json
from pathlib import Path
from typing import Any

TRANSCRIPT_DIR = "transcripts"


def transcript_path(output_dir: Path, task_id: str, attempt: int) -> Path:
    """Where the transcript of ``task_id`` attempt ``attempt`` goes (task ids are safe directory names)."""
    return output_dir / TRANSCRIPT_DIR / task_id / f"attempt-{attempt}.json"


def to_jsonable(value: Any) -> Any:
    """Best-effort conversion of dataclasses, pydantic models and odd objects into JSON values."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else None
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, enum.Enum):
        return to_jsonable(value.value)
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if hasattr(value, "model_dump"):
        try:
            return to_jsonable(value.model_dump(mode="json"))
        except UnicodeDecodeError:
            # pydantic's JSON mode raises on bytes that are not UTF-8 (a binary task file, a tool's raw output);
            # python mode keeps them as bytes, decoded above with replacement: one such field must not crash a
            # training step's trial writer (it stopped a local run on the H200, 2026-12-04)
            return to_jsonable(value.model_dump())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_jsonable({f.name: getattr(value, f.name) for f in dataclasses.fields(value)})
    if hasattr(value, "to_dict"):
        try:
            return to_jsonable(value.to_dict())
        except Exception:  # noqa: BLE001 - fall through to repr
            pass
    return repr(value)


def write_transcript(path: Path, transcript: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(to_jsonable(transcript), indent=2, ensure_ascii=False) + "\n")
    tmp.replace(path)


def read_transcript(path: Path) -> dict[str, Any]:
    transcript: dict[str, Any] = json.loads(Path(path).read_text())
    return transcript
