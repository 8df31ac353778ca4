"""`terminal-agent judge switch|show|eval|report`: the hot switch and the judge benchmark."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

if TYPE_CHECKING:  # imported lazily at run time (the commands start fast)
    from terminal_agent.rewards.judge_control import JudgeSetting

app = typer.Typer(no_args_is_help=True)
console = Console(stderr=True)

DEFAULT_CASES = Path("evaluation/llm_as_a_judge_evals/cases")
CONTROL_HELP = "Absolute path of the control file the training job reads (default: $TERMINAL_AGENT_JUDGE_CONTROL)."


def _print_setting(path: Path, setting: JudgeSetting | None) -> None:
    if setting is None:
        console.print(f"{path}: no control file yet; the job's configured judge applies", highlight=False)
        return
    weight = "the job's configured weight" if setting.weight is None else f"{setting.weight:g}"
    model = setting.model or "the backend's default"
    console.print(
        f"judge [bold]{escape(setting.backend)}[/bold], model {escape(model)}, weight {weight}  "
        f"(written {setting.written_at} by {setting.written_by}; {path})",
        highlight=False,
    )


@app.command("switch")
def switch(
    backend: str = typer.Argument(..., help="litellm, claude-cli, local, model or none."),
    model_arg: str = typer.Argument(None, metavar="[MODEL]", help="The backend's model (same as --model)."),
    model: str = typer.Option(None, "--model", "-m", help="litellm model string or Claude model alias."),
    weight: float = typer.Option(None, "--weight", "-w", min=0.0, help="Judge weight from now on (default: the job's configured one)."),
    check: bool = typer.Option(False, "--check", help="Make one live judge call first; switch only if it succeeds."),
    control_file: Path = typer.Option(None, "--control-file", help=CONTROL_HELP),
) -> None:
    """Change the judge of a running job (every reward worker picks it up at its next episode)."""
    from terminal_agent.rewards.judge_switch import require_control_path, switch_judge

    if model_arg and model and model_arg != model:
        raise typer.BadParameter(f"two models given: {model_arg!r} and --model {model!r}", param_hint="MODEL")
    path = require_control_path(control_file)
    if check and backend != "none":
        console.print(f"checking judge {escape(backend)} with one live call ...", highlight=False)
    setting, verdict = switch_judge(path, backend, model=model or model_arg, weight=weight, check=check)
    if verdict is not None:
        console.print(f"  check passed: score {verdict.score:.2f} in {verdict.latency_s:.1f} s ({escape(verdict.backend)})", highlight=False)
    if weight is None and backend != "none":
        console.print("  no --weight: the job's configured judge_weight applies (0 means the judge stays off)", highlight=False)
    _print_setting(path, setting)


@app.command("show")
def show(control_file: Path = typer.Option(None, "--control-file", help=CONTROL_HELP)) -> None:
    """Print the judge setting in the control file."""
    from terminal_agent.rewards.judge_switch import require_control_path, show_judge

    path = require_control_path(control_file)
    _print_setting(path, show_judge(path))


def _print_ranking(results: dict[str, Any]) -> None:
    from terminal_agent.evaluation.judge_benchmark_report import summarize_judges

    table = Table(title="judge benchmark")
    for column in ("rank", "judge", "accuracy", "hacking acc.", "err. to middle", "spread", "failures", "latency s", "cost $"):
        table.add_column(column, justify="left" if column == "judge" else "right")

    def f(value: float | None, spec: str = ".3f") -> str:
        return "n/a" if value is None else format(value, spec)

    for row in summarize_judges(results):
        table.add_row(
            str(row["rank"]), escape(row["judge"]), f(row["accuracy"]), f(row["hacking_accuracy"]), f(row["error_to_middle"]),
            f(row["spread"]), f(row["failure_rate"]), f(row["mean_latency_s"], ".2f"), f(row["total_cost_usd"], ".4f"),
        )
    console.print(table)


@app.command("eval")
def evaluate(
    judges: list[str] = typer.Option(None, "--judge", "-j", help="BACKEND[:MODEL], repeatable (local, litellm:openai/x, claude-cli:sonnet). Default: local."),
    cases_dir: Path = typer.Option(DEFAULT_CASES, "--cases", help="Directory of *.yaml judge cases."),
    attempts: int = typer.Option(3, "--attempts", "-k", min=1, help="Attempts per case and judge."),
    case_ids: list[str] = typer.Option(None, "--case", help="Only these case ids (repeatable)."),
    max_tokens: int = typer.Option(256, "--max-tokens", min=16, help="Cap on judge reply tokens."),
    temperature: float = typer.Option(0.7, "--temperature", min=0.0, help="Judge sampling temperature (above 0 so k attempts can differ)."),
    timeout: float = typer.Option(120.0, "--timeout", help="Seconds per judge call."),
    output_dir: Path = typer.Option(None, "--output-dir", "-o", help="Where results.json and report.md go (default: runs/judge-eval-TIME)."),
) -> None:
    """Benchmark judges on cases with known score ranges: results.json and report.md."""
    from terminal_agent.evaluation.judge_benchmark import build_judges, load_cases, run_judge_benchmark
    from terminal_agent.evaluation.judge_benchmark_report import judge_report_markdown
    from terminal_agent.rewards.judge import JudgeConfig

    cases = load_cases(cases_dir)
    if case_ids:
        unknown = sorted(set(case_ids) - {c.id for c in cases})
        if unknown:
            raise typer.BadParameter(f"unknown case id(s): {', '.join(unknown)}", param_hint="--case")
        cases = [c for c in cases if c.id in set(case_ids)]
    base = JudgeConfig(max_tokens=max_tokens, temperature=temperature, timeout_s=timeout)
    console.print(f"building judge(s) {', '.join(judges or ['local'])} ...", highlight=False)
    built = build_judges(list(judges or ["local"]), base)
    output_dir = output_dir or Path("runs") / f"judge-eval-{time.strftime('%Y%m%d-%H%M%S')}"
    output_dir.mkdir(parents=True, exist_ok=True)
    total = len(built) * len(cases) * attempts
    done = {"n": 0}

    def on_attempt(record: dict[str, Any]) -> None:
        done["n"] += 1
        outcome = f"{record['score']:.2f}" if record["score"] is not None else f"error: {(record['error'] or '')[:80]}"
        console.print(f"  [{done['n']}/{total}] {escape(record['judge'])} {record['case']} #{record['attempt']}: {escape(outcome)}", highlight=False)

    results = run_judge_benchmark(built, cases, attempts=attempts, on_attempt=on_attempt)
    (output_dir / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    (output_dir / "report.md").write_text(judge_report_markdown(results))
    _print_ranking(results)
    console.print(f"results: {output_dir / 'results.json'}  report: {output_dir / 'report.md'}", highlight=False)


@app.command("report")
def report(
    results_path: Path = typer.Argument(..., help="results.json of `judge eval`."),
    output: Path = typer.Option(None, "--output", "-o", help="Write the markdown here (default: print it)."),
) -> None:
    """Rebuild the judge benchmark report from its results.json alone."""
    from terminal_agent.errors import ConfigError
    from terminal_agent.evaluation.judge_benchmark_report import judge_report_markdown

    try:
        results = json.loads(results_path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{results_path}: cannot read judge benchmark results: {exc}") from None
    except RecursionError:  # json recurses per level of nesting
        raise ConfigError(f"{results_path}: cannot read judge benchmark results: JSON nested too deeply") from None
    markdown = judge_report_markdown(results)
    if output is None:
        typer.echo(markdown, nl=False)
    else:
        output.write_text(markdown)
        console.print(f"report: {output}", highlight=False)
