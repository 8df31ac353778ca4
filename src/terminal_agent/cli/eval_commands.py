"""`terminal-agent eval run|report|compare`: run the agent on tasks and report pass rates with CIs."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, overload

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from terminal_agent.cli.eval_behaviour_command import behaviour
from terminal_agent.cli.sandbox_options import sandbox_config_from_options

if TYPE_CHECKING:  # imported lazily at run time (the commands start fast)
    from terminal_agent.evaluation.results import RunResults, TrialResult
    from terminal_agent.models.adapter_loading import LocalModelConfig
    from terminal_agent.rollout.runner import RolloutRunner, TrialSpec
    from terminal_agent.tasks.model import Task

app = typer.Typer(no_args_is_help=True)
app.command("behaviour")(behaviour)  # `eval behaviour`: its own module
console = Console(stderr=True)

DEFAULT_TASKS = Path("dataset/latest_verified.csv")


def _select(tasks: list[Task], task_ids: list[str] | None, limit: int | None) -> list[Task]:
    if task_ids:
        known = {task.task_id for task in tasks}
        missing = [t for t in task_ids if t not in known]
        if missing:
            raise typer.BadParameter(f"unknown task id(s): {', '.join(missing)}", param_hint="--task")
        tasks = [task for task in tasks if task.task_id in set(task_ids)]
    return tasks[:limit] if limit else tasks


@overload
def run_with_progress(
    runner: RolloutRunner, specs_or_tasks: Sequence[Task], *, description: str, tasks_file: str | None = None,
    trials: Literal[False] = False, on_trial: None = None,
) -> RunResults: ...


@overload
def run_with_progress(
    runner: RolloutRunner, specs_or_tasks: Sequence[TrialSpec], *, description: str, tasks_file: str | None = None,
    trials: Literal[True], on_trial: Callable[[TrialResult], None] | None = None,
) -> RunResults: ...


def run_with_progress(
    runner: RolloutRunner, specs_or_tasks: Sequence[Any], *, description: str, tasks_file: str | None = None,
    trials: bool = False, on_trial: Callable[[TrialResult], None] | None = None,
) -> RunResults:
    """Run a :class:`~terminal_agent.rollout.runner.RolloutRunner` under a rich progress bar (shared with screening)."""
    total = len(specs_or_tasks) * (1 if trials else runner.config.attempts)
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("passed {task.fields[passed]} errors {task.fields[errors]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
    ) as progress:
        bar = progress.add_task(description, total=total, passed=0, errors=0)
        counts = {"passed": 0, "errors": 0}

        def on_progress(done: int, total_: int, trial: TrialResult) -> None:
            counts["passed"] += int(trial.passed)
            counts["errors"] += int(not trial.scored)
            progress.update(bar, completed=done, total=total_, passed=counts["passed"], errors=counts["errors"])

        runner.on_progress = on_progress
        if trials:
            return runner.run_trials(specs_or_tasks, tasks_file=tasks_file, on_trial=on_trial)
        return runner.run(specs_or_tasks, tasks_file=tasks_file)


def _write_reports(results: RunResults, output_dir: Path, plot: bool = True) -> None:
    from terminal_agent.evaluation.report import run_report_markdown, summarize

    summary = results.summary or summarize(results)
    (output_dir / "report.md").write_text(run_report_markdown(results, summary))
    if plot:
        from terminal_agent.evaluation.plot import plot_run

        plot_run(results, output_dir / "rewards.png", summary)


def _print_summary(results: RunResults, output_dir: Path | None) -> None:
    from terminal_agent.evaluation.report import summarize

    s = results.summary or summarize(results)

    def ci(e: dict[str, Any]) -> str:
        if e["value"] is None or e["value"] != e["value"]:
            return "n/a"
        return f"{e['value']:.3f} [{e['ci_low']:.3f}, {e['ci_high']:.3f}]"

    console.print(f"[bold]{escape(results.run.model)}[/bold]: {s['n_tasks']} tasks, {s['n_trials']} trials, wall {s['wall_s']:.1f} s")
    console.print(f"  mean reward {ci(s['mean_reward'])}   pass rate {ci(s['pass_rate'])}   (95% CI, task bootstrap)")
    console.print("  " + "   ".join(f"pass@{k} {v:.3f}" for k, v in s["pass_at_k"].items() if v == v))
    console.print(
        f"  scored {s['n_scored']}, infrastructure errors {s['n_errors']} {s['errors_by_kind'] or ''}; "
        f"env time {s['env_time_s']:.1f} s, model time {s['model_time_s']:.1f} s; "
        f"{s['episodes_per_minute']:.2f} episodes/min",
        highlight=False,
    )
    if output_dir is not None:
        console.print(f"  results: {output_dir / 'results.json'}  report: {output_dir / 'report.md'}", highlight=False)
        if (output_dir / "config.json").is_file():
            console.print(f"  browse it: terminal-agent view {output_dir}", highlight=False)


@app.command("run")
def run(
    tasks_path: Path = typer.Argument(DEFAULT_TASKS, help="Tasks: CSV, parquet, task dir or dir of task dirs."),
    model: str = typer.Option(None, "--model", "-m", help="A registered model client: 'embedded', 'embedded-batched', 'embedded-continuous', 'scripted:FILE', a plugin's spec, a litellm model, or a local transformers model directory; default: $LITELLM_MODEL, else embedded (with --adapter: embedded)."),
    adapter: Path = typer.Option(
        None, "--adapter",
        help="A LoRA adapter of the local trainer on top of --model ('embedded' or a model directory): a checkpoint (RUN/checkpoints/step_N), its adapter/ directory, or a run directory (its latest checkpoint).",
    ),
    device: str = typer.Option("auto", "--device", help="Local models (a directory, --adapter): auto, cpu or cuda."),
    dtype: str = typer.Option("float32", "--dtype", help="Local models (a directory, --adapter): float32, bfloat16 or float16."),
    api_base: str = typer.Option(None, "--api-base", help="OpenAI-compatible endpoint (default: $LITE_LLM_API_BASE)."),
    attempts: int = typer.Option(1, "--attempts", "-k", min=1, help="Attempts per task."),
    concurrency: int = typer.Option(2, "--concurrency", "-c", min=1, help="Episodes at once."),
    max_steps: int = typer.Option(10, "--max-steps", min=1, help="Model turns per episode."),
    max_tokens: int = typer.Option(None, "--max-tokens", min=1, help="Cap on tokens per model reply."),
    temperature: float = typer.Option(None, "--temperature", min=0.0, help="Sampling temperature (default: the backend's)."),
    episode_timeout: float = typer.Option(None, "--episode-timeout", help="Wall clock per episode in seconds."),
    task_ids: list[str] = typer.Option(None, "--task", "-t", help="Only these task ids (repeatable)."),
    limit: int = typer.Option(None, "--limit", help="Only the first N tasks."),
    output_dir: Path = typer.Option(None, "--output-dir", "-o", help="Where results go (default: runs/eval-RUN_ID)."),
    plot: bool = typer.Option(True, "--plot/--no-plot", help="Write rewards.png."),
    max_error_rate: float = typer.Option(
        None, "--max-error-rate", min=0.0, max=1.0,
        help="Exit 1 when more than this share of trials were infrastructure errors (default: no limit).",
    ),
    sandbox_backend: str = typer.Option("docker", "--sandbox", help="Sandbox backend: docker, bwrap (no daemon; needs an export) or ray."),
    images_dir: Path = typer.Option(
        None, "--images-dir", help="The bwrap backend's export (`terminal-agent images export`); default: $TERMINAL_AGENT_IMAGES_DIR."
    ),
    harbor: bool = typer.Option(
        True, "--harbor/--no-harbor",
        help="Also write the run as a Harbor job (config.json, result.json, a folder per trial with its ATIF trajectory); "
        "`terminal-agent view` opens it.",
    ),
) -> None:
    """Evaluate a model on tasks: results.json, transcripts/, report.md, rewards.png and the Harbor job layout.

    Exits 1 when a task has no scored trial (every attempt was an infrastructure error) or when
    the share of errors exceeds ``--max-error-rate``; the results are written either way.
    """
    from terminal_agent.models.adapter_loading import describe_local_model
    from terminal_agent.models.client_registry import is_model_directory
    from terminal_agent.models.factory import ModelClientConfig, build_model_client, config_from_spec
    from terminal_agent.models.local_model_sampling import DEFAULT_LOCAL_MAX_TOKENS
    from terminal_agent.rollout.runner import RolloutConfig, RolloutRunner
    from terminal_agent.tasks.loading import load_tasks

    tasks = _select(load_tasks(tasks_path), task_ids, limit)
    if not tasks:
        raise typer.BadParameter("no tasks selected", param_hint="TASKS")
    sandbox = sandbox_config_from_options(sandbox_backend, images_dir)
    sampling: dict[str, float] = {}
    if max_tokens is not None:
        sampling["max_tokens"] = max_tokens
    if temperature is not None:
        sampling["temperature"] = temperature
    model_config = None
    if adapter is not None or is_model_directory(model):  # plain 'embedded' stays the registry's client
        local = _local_model_config(model or "embedded", adapter, device, dtype)
        console.print(f"loading local model {escape(describe_local_model(local))} ...", highlight=False)
        # the trainer's own sampler (the registry's 'local' entry); greedy unless --temperature says otherwise
        sampling.setdefault("temperature", 0.0)
        client = build_model_client(ModelClientConfig(
            type="local", model=local.model, adapter=local.adapter, device=local.device, dtype=local.dtype,
            max_tokens=max_tokens or DEFAULT_LOCAL_MAX_TOKENS, slots=max(1, concurrency)))
    else:
        if device != "auto" or dtype != "float32":
            raise typer.BadParameter("--device and --dtype are for local models (a model directory or --adapter)", param_hint="--device/--dtype")
        model_config = config_from_spec(model, api_base=api_base, max_tokens=max_tokens, temperature=temperature)
        console.print(f"loading model {model_config.model or model_config.type} ...", highlight=False)
        client = build_model_client(model_config)
    config = RolloutConfig(
        attempts=attempts, max_steps=max_steps, concurrency=concurrency, episode_timeout_s=episode_timeout, sampling=sampling,
        sandbox=sandbox,
    )
    output_dir = output_dir or Path("runs") / f"eval-{config.run_id}"
    config.output_dir = output_dir
    # a script is replayed from its first reply in every trial (one list shared by all trials would run dry)
    per_trial = (lambda spec: build_model_client(model_config)) if model_config and model_config.type == "scripted" else None
    harbor_job = None
    if harbor:  # the run directory is also a Harbor job (docs/harbor_jobs.md)
        from terminal_agent.harbor_jobs.eval_jobs import EvalHarborJob

        harbor_job = EvalHarborJob.for_run(
            output_dir, run_id=config.run_id, model=client.name, tasks_file=str(tasks_path), attempts=attempts,
            max_steps=max_steps, concurrency=concurrency, sampling=sampling, sandbox_backend=sandbox.backend,
            n_total_trials=len(tasks) * attempts,
        )
    runner = RolloutRunner(client, config, model_for_trial=per_trial,
                           on_transcript=harbor_job.on_transcript if harbor_job else None)
    try:
        results = run_with_progress(runner, tasks, description=f"eval {escape(client.name)}", tasks_file=str(tasks_path))
    finally:
        close = getattr(client, "close", None)  # the local samplers' worker and cache
        if callable(close):
            close()
    if harbor_job is not None:
        harbor_job.finish(results)
    _write_reports(results, output_dir, plot=plot)
    _print_summary(results, output_dir)
    failures = run_failures(results.trials, max_error_rate)
    for failure in failures:
        console.print(f"[red]failed[/red]: {escape(failure)}", highlight=False)
    if failures:
        raise typer.Exit(1)


def _local_model_config(model: str, adapter: Path | None, device: str, dtype: str) -> LocalModelConfig:
    """The local model to evaluate, its base and adapter checked before anything loads; every problem is a
    usage error (exit 2) naming the option and the path."""
    from pydantic import ValidationError

    from terminal_agent.errors import ConfigError
    from terminal_agent.models.adapter_loading import (
        LocalModelConfig,
        base_model_dir,
        check_adapter_fits,
        is_local_model,
        resolve_adapter_dir,
    )

    if not is_local_model(model):
        raise typer.BadParameter(f"--adapter needs 'embedded' or a transformers model directory, not {model!r}", param_hint="--model")
    try:
        local = LocalModelConfig(model=model, adapter=adapter, device=device, dtype=dtype)
    except ValidationError as exc:  # the config's own check names the bad value
        error = exc.errors()[0]
        raise typer.BadParameter(error["msg"], param_hint=f"--{error['loc'][0]}") from exc
    if device == "cuda":
        import torch

        if not torch.cuda.is_available():
            raise typer.BadParameter("torch sees no CUDA device", param_hint="--device")
    base_dir = base_model_dir(model)
    if adapter is not None:
        try:
            check_adapter_fits(resolve_adapter_dir(adapter), base_dir, shown_as=adapter)
        except ConfigError as exc:
            raise typer.BadParameter(str(exc), param_hint="--adapter") from exc
    return local


def run_failures(trials: Sequence[TrialResult], max_error_rate: float | None) -> list[str]:
    """Why a finished evaluation must exit non-zero: tasks without a scored trial, too many errors."""
    scored: dict[str, int] = {}
    for trial in trials:
        scored[trial.task_id] = scored.get(trial.task_id, 0) + int(trial.scored)
    problems = [f"task {task_id} has no scored trial (infrastructure errors only)" for task_id, n in scored.items() if n == 0]
    errors = sum(1 for trial in trials if not trial.scored)
    if max_error_rate is not None and trials and errors / len(trials) > max_error_rate:
        problems.append(f"{errors}/{len(trials)} trials were infrastructure errors, more than --max-error-rate {max_error_rate:g}")
    return problems


def read_results(path: Path) -> RunResults:
    """``RunResults.read(path)``; a file nested deep enough to make the JSON parser recurse is bad input too
    (a ConfigError naming the file, exit 2), like any other file that is not a results record."""
    from terminal_agent.errors import ConfigError
    from terminal_agent.evaluation.results import RunResults

    try:
        return RunResults.read(path)
    except RecursionError:
        raise ConfigError(f"results file {path} is not JSON: nested too deeply") from None


@app.command("report")
def report(
    results_path: Path = typer.Argument(..., help="A results.json (or the run directory holding it)."),
    markdown: Path = typer.Option(None, "--markdown", help="Write the markdown report here (default: print it)."),
    plot: Path = typer.Option(None, "--plot", help="Also write a PNG plot here."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON instead."),
) -> None:
    """Summarize a finished (or partial) run."""
    from terminal_agent.evaluation.report import run_report_markdown, summarize

    results = read_results(results_path)
    summary = summarize(results)
    if as_json:
        typer.echo(json.dumps(summary, indent=2, default=str))
    else:
        text = run_report_markdown(results, summary)
        if markdown:
            markdown.write_text(text)
            console.print(f"wrote {markdown}", highlight=False)
        else:
            typer.echo(text)
    if plot:
        from terminal_agent.evaluation.plot import plot_run

        plot_run(results, plot, summary)
        console.print(f"wrote {plot}", highlight=False)


@app.command("compare")
def compare(
    a: Path = typer.Argument(..., help="Baseline results.json (A)."),
    b: Path = typer.Argument(..., help="Candidate results.json (B), e.g. after training."),
    metric: str = typer.Option("reward", "--metric", help="'reward' (mean reward) or 'pass' (pass rate)."),
    n_boot: int = typer.Option(10_000, "--n-boot", min=100, help="Bootstrap resamples."),
    seed: int = typer.Option(0, "--seed", help="Bootstrap seed."),
    as_json: bool = typer.Option(False, "--json", help="Print the comparison as JSON."),
) -> None:
    """Did B beat A? Paired per-task bootstrap of the difference of per-task means."""
    from terminal_agent.evaluation.report import compare_runs, comparison_markdown

    if metric not in {"reward", "pass"}:
        raise typer.BadParameter("must be 'reward' or 'pass'", param_hint="--metric")
    run_a, run_b = read_results(a), read_results(b)
    comparison = compare_runs(run_a, run_b, metric=metric, n_boot=n_boot, seed=seed)
    if as_json:
        typer.echo(json.dumps(comparison.to_dict(), indent=2, default=str))
    else:
        typer.echo(comparison_markdown(run_a, run_b, comparison, metric))
