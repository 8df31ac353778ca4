"""Switching the judge of a running job: validate, optionally make one live call, then write the control file."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from terminal_agent.errors import ConfigError, JudgeError
from terminal_agent.rewards.judge import NO_JUDGE, JudgeConfig, JudgeRequest, JudgeVerdict, run_judge
from terminal_agent.rewards.judge_factory import make_judge
from terminal_agent.rewards.judge_control import CONTROL_ENV, JudgeSetting, control_path, read_control, write_control
from terminal_agent.rewards.judge_prompt import CHECK_INSTRUCTION, CHECK_TRANSCRIPT


def require_control_path(configured: Path | str | None) -> Path:
    """The control file to write/read; a ConfigError says how to name one when none is."""
    path = control_path(configured)
    if path is None:
        raise ConfigError(
            f"no judge control file: pass --control-file or set {CONTROL_ENV} to the absolute path the training job reads"
        )
    return path


def check_judge(setting: JudgeSetting, base: JudgeConfig | None = None) -> JudgeVerdict:
    """One live call to the judge ``setting`` names, on a tiny solved task; JudgeError when it fails."""
    config = (base or JudgeConfig()).model_copy(update={"backend": setting.backend})
    if setting.model is not None:
        config = config.model_copy(update={"model": setting.model})
    judge = make_judge(config)
    request = JudgeRequest(CHECK_INSTRUCTION, CHECK_TRANSCRIPT, "1/1 tests passed, weighted score 1.00")
    verdict, error = run_judge(judge, request, max_attempts=1)
    if verdict is None:
        raise JudgeError(f"check of judge {setting.backend!r} failed, nothing switched: {error}")
    return verdict


def switch_judge(
    path: Path,
    backend: str,
    *,
    model: str | None = None,
    weight: float | None = None,
    check: bool = False,
    base: JudgeConfig | None = None,
) -> tuple[JudgeSetting, JudgeVerdict | None]:
    """Validate the new setting, check it live when asked (not for ``none``), write it atomically."""
    try:
        setting = JudgeSetting(backend=backend, model=model, weight=weight)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
        raise ConfigError(f"bad judge setting: {problems}") from None
    verdict = check_judge(setting, base) if check and backend != NO_JUDGE else None
    return write_control(path, setting), verdict


def show_judge(path: Path) -> JudgeSetting | None:
    """The control file's setting (None when the file does not exist; ConfigError when it is bad)."""
    if not path.exists():
        return None
    return read_control(path)


__all__ = ["check_judge", "require_control_path", "show_judge", "switch_judge"]
