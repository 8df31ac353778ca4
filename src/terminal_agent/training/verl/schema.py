"""Validate rLLM/verl hydra keys against the real schema.

Level 1 (always, no GPU, no Ray): compose rLLM's ``agent_ppo_trainer`` config, which loads verl's
``ppo_trainer`` YAML, with Hydra, and set every key of the preset on it, then the raw hydra keys of
the command line. A key that does not exist in that schema is an error naming the key (only the
mapping's few ``add`` keys and a raw ``+key`` add one); a raw key that changes a value the preset
maps is an error naming both; then every interpolation is resolved. The YAML comes from the installed packages when they are installed (what will run),
otherwise straight from the wheels: ``pip download --no-deps verl==0.9.1`` (done by
``scripts/setup.sh``) and rLLM's wheel; nothing is imported from either.

Level 2 (where verl imports): verl's own ``validate_config`` and its dataclass conversion
(:mod:`terminal_agent.training.verl.config_check`), in-process, or in the interpreter named by
``TERMINAL_AGENT_VERL_PYTHON`` (the CI venv).

Where the YAML is looked for, in order:

* verl: ``TERMINAL_AGENT_VERL_CONFIG_DIR``; the installed ``verl`` package; a wheel named by
  ``TERMINAL_AGENT_VERL_WHEEL``; ``verl-0.9.1-*.whl`` in the wheel cache.
* rLLM: ``TERMINAL_AGENT_RLLM_CONFIG_DIR``; the installed ``rllm`` package; a wheel named by
  ``TERMINAL_AGENT_RLLM_WHEEL``; the newest ``rllm-0.3*.whl`` in the wheel cache.

The wheel cache is ``$XDG_CACHE_HOME/terminal-agent/wheels`` (``~/.cache/...``); the YAML read
from a wheel is unpacked once beside it, keyed by the wheel's hash.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib.util
import json
import logging
import os
import shutil
import subprocess
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from terminal_agent.errors import ConfigError, TrainingSetupError
from terminal_agent.training.launch_plan import RawOverride
from terminal_agent.training.verl.overrides import RLLM_TRAINER_CONFIG, HydraOverride

if TYPE_CHECKING:  # hydra-core is imported where a config is composed (_require_hydra names what to install)
    from omegaconf import DictConfig

logger = logging.getLogger(__name__)

VERL_VERSION = "0.9.1"
VERL_CONFIG_SUBDIR = "verl/trainer/config"
RLLM_CONFIG_SUBDIR = "rllm/trainer/config"
SETUP_HINT = "run scripts/setup.sh, or: pip download --no-deps verl==0.9.1 -d ~/.cache/terminal-agent/wheels"


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "terminal-agent"


def wheel_cache_dir() -> Path:
    """Where ``scripts/setup.sh`` puts the verl and rLLM wheels read here."""
    return cache_root() / "wheels"


@dataclass(frozen=True)
class ConfigSource:
    """Where one package's hydra YAML was found."""

    package: str
    directory: Path
    """The ``.../trainer/config`` directory."""
    origin: str
    """``installed <version>``, ``wheel <file name>`` or ``directory``."""


def _package_config_dir(module: str, subdir: str) -> Path | None:
    """``<package>/trainer/config`` of an installed package, found without importing it."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):  # a broken finder entry means: not usable here
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location).parent / subdir
        if candidate.is_dir():
            return candidate
    return None


def _installed_version(distribution: str) -> str:
    import importlib.metadata as metadata

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "unknown"


def _unpack_wheel_configs(wheel: Path, subdir: str) -> Path:
    """The ``subdir`` YAML of ``wheel``, unpacked once into the cache (atomic rename)."""
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()[:16]
    target = cache_root() / "schemas" / f"{wheel.stem}-{digest}"
    if (target / subdir).is_dir():
        return target / subdir
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".unpack-", dir=target.parent))
    try:
        with zipfile.ZipFile(wheel) as archive:
            members = [name for name in archive.namelist() if name.startswith(subdir + "/") and name.endswith(".yaml")]
            if not members:
                raise TrainingSetupError(f"{wheel.name} has no {subdir}/*.yaml")
            for name in members:
                archive.extract(name, staging)
        try:
            staging.rename(target)
        except OSError:  # another process unpacked it first; theirs is identical
            pass
    except zipfile.BadZipFile as exc:
        raise TrainingSetupError(f"{wheel} is not a readable wheel: {exc}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target / subdir


def _newest(paths: list[Path]) -> Path | None:
    def key(path: Path) -> tuple[int, ...]:
        version = path.name.split("-")[1] if "-" in path.name else ""
        return tuple(int(part) if part.isdigit() else -1 for part in version.replace("rc", ".").split("."))

    return max(paths, key=key) if paths else None


def _find_config(package: str, subdir: str, wheel_glob: str) -> ConfigSource:
    upper = package.upper()
    explicit = os.environ.get(f"TERMINAL_AGENT_{upper}_CONFIG_DIR")
    if explicit:
        if not Path(explicit).is_dir():
            raise TrainingSetupError(f"TERMINAL_AGENT_{upper}_CONFIG_DIR={explicit} is not a directory")
        return ConfigSource(package, Path(explicit), "directory")
    installed = _package_config_dir(package, subdir)
    if installed is not None:
        return ConfigSource(package, installed, f"installed {_installed_version(package)}")
    wheel_env = os.environ.get(f"TERMINAL_AGENT_{upper}_WHEEL")
    wheel = Path(wheel_env) if wheel_env else _newest(sorted(wheel_cache_dir().glob(wheel_glob)))
    if wheel is None or not wheel.is_file():
        raise TrainingSetupError(
            f"{package}'s trainer config schema was not found: {package} is not installed and no {wheel_glob} "
            f"is in {wheel_cache_dir()} ({SETUP_HINT})"
        )
    return ConfigSource(package, _unpack_wheel_configs(wheel, subdir), f"wheel {wheel.name}")


def verl_config_source() -> ConfigSource:
    return _find_config("verl", VERL_CONFIG_SUBDIR, f"verl-{VERL_VERSION}-*.whl")


def rllm_config_source() -> ConfigSource:
    return _find_config("rllm", RLLM_CONFIG_SUBDIR, "rllm-0.3*.whl")


# --- level 1 -------------------------------------------------------------------------------------
def _require_hydra() -> None:
    if importlib.util.find_spec("hydra") is None or importlib.util.find_spec("omegaconf") is None:
        raise TrainingSetupError("hydra-core is not installed: pip install -e '.[train]' (or pip install hydra-core)")


def _compose(rllm_dir: Path, verl_dir: Path, overrides: list[str]) -> DictConfig:
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    if GlobalHydra.instance().is_initialized():
        GlobalHydra.instance().clear()
    # verl's YAML joins rLLM's through the search path (rLLM names it pkg://verl..., which needs an import)
    search = f"hydra.searchpath=[file://{verl_dir}]"
    with initialize_config_dir(config_dir=str(rllm_dir), version_base=None):
        return compose(config_name=RLLM_TRAINER_CONFIG, overrides=[search, *overrides])


#: Sections the GRPO workflow trainer reads; a '???' left in them would fail on the cluster.
REQUIRED_SECTIONS = ("actor_rollout_ref.actor", "actor_rollout_ref.rollout", "actor_rollout_ref.model", "data.",
                     "algorithm.", "trainer.", "rllm.")


def config_dict(config: Any, *, resolve: bool, what: str) -> dict[str, Any]:
    """An OmegaConf mapping node (a DictConfig) as a plain dict (``OmegaConf.to_container``), its keys as str.
    Raises ConfigError naming ``what`` when the node is not a mapping."""
    from omegaconf import OmegaConf

    container = OmegaConf.to_container(config, resolve=resolve)
    if not isinstance(container, dict):
        raise ConfigError(f"{what}: a mapping was expected, not {type(container).__name__}")
    return {str(key): value for key, value in container.items()}


def _has_key(tree: Any, dotted: str) -> bool:
    for part in dotted.split("."):
        if not isinstance(tree, dict) or part not in tree:
            return False
        tree = tree[part]
    return True


def base_trainer_schema() -> dict[str, Any]:
    """rLLM's trainer config with nothing set, as plain containers (interpolations kept): the schema keys are
    checked against. Composed once per pair of YAML directories; do not change what it returns."""
    _require_hydra()
    verl_source, rllm_source = verl_config_source(), rllm_config_source()
    return _base_schema(rllm_source, verl_source)


@functools.lru_cache(maxsize=4)
def _base_schema(rllm_source: ConfigSource, verl_source: ConfigSource) -> dict[str, Any]:
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    try:
        base = _compose(rllm_source.directory, verl_source.directory, [])
    except (HydraException, OmegaConfBaseException) as exc:
        raise TrainingSetupError(f"rLLM/verl base config does not compose ({rllm_source.origin}, "
                                 f"{verl_source.origin}): {exc}") from None
    return config_dict(base, resolve=False, what=f"rLLM's {RLLM_TRAINER_CONFIG}")


def schema_has_key(schema: dict[str, Any], dotted: str) -> bool:
    """Whether the dotted key exists in ``schema`` (:func:`base_trainer_schema`)."""
    return _has_key(schema, dotted)


def _overlaps(a: str, b: str) -> bool:
    return a == b or a.startswith(b + ".") or b.startswith(a + ".")


def _same_value(found: Any, wanted: Any) -> bool:
    if isinstance(wanted, (list, tuple)):
        return isinstance(found, (list, tuple)) and len(found) == len(wanted) and all(
            _same_value(f, w) for f, w in zip(found, wanted))
    if isinstance(wanted, bool) or isinstance(found, bool):
        return found is wanted
    return bool(found == wanted)


def _check_raw_keys(schema: dict[str, Any], raw: list[RawOverride], origin: str) -> None:
    for override in raw:
        exists = _has_key(schema, override.key)
        if override.prefix == "" and not exists:
            raise ConfigError(f"{override.key} (command line): neither a preset key{_preset_keys_of(override.key)} "
                              f"nor a key of rLLM/verl's trainer config ({origin}); to add a key verl reads but "
                              f"does not declare, write +{override.key}={override.value}")
        if override.prefix == "+" and exists:
            raise ConfigError(f"+{override.key} (command line): rLLM/verl's trainer config already has this key; "
                              f"set it without the + ({override.key}={override.value})")


def _preset_keys_of(key: str) -> str:
    """`` (section 'trainer' has: ...)`` for a key in a section the preset has too; empty otherwise."""
    from pydantic import BaseModel

    from terminal_agent.training.verl.preset_sections import VerlPreset

    field = VerlPreset.model_fields.get(key.split(".")[0])
    section = field.annotation if field is not None else None
    if not (isinstance(section, type) and issubclass(section, BaseModel)):
        return ""
    return f" (section {key.split('.')[0]!r} has: {', '.join(sorted(section.model_fields))})"


def _check_raw_against_mapping(config: Any, overrides: list[HydraOverride], raw: list[RawOverride]) -> None:
    """A raw key may not change what the preset sets: each mapped value must survive the raw keys."""
    from omegaconf import DictConfig, ListConfig, OmegaConf

    for mapped in overrides:
        touching = [r for r in raw if _overlaps(r.key, mapped.key)]
        if not touching:
            continue
        found = OmegaConf.select(config, mapped.key, default=None, throw_on_resolution_failure=False)
        if isinstance(found, (DictConfig, ListConfig)):
            found = OmegaConf.to_container(found, resolve=True)
        if _same_value(found, mapped.value):
            continue
        raw_text = touching[0].text
        if mapped.origin == "preset":
            raise ConfigError(f"{raw_text} (command line) conflicts with the preset key {mapped.source}: both set "
                              f"{mapped.key} (preset {_shown(mapped.value)}, command line {_shown(found)}); change "
                              f"{mapped.source} instead")
        raise ConfigError(f"{raw_text} (command line) conflicts with the project's mapping (governed by "
                          f"{mapped.source}), which sets {mapped.key}={_shown(mapped.value)} (command line: "
                          f"{_shown(found)})")


def _shown(value: Any) -> str:
    from terminal_agent.training.verl.overrides import format_hydra_value

    return format_hydra_value(value)


def compose_trainer_config(overrides: list[HydraOverride], raw: list[RawOverride] | tuple[RawOverride, ...] = ()
                           ) -> DictConfig:
    """Level 1: rLLM's trainer config with every override set, then the raw hydra keys of the command line;
    a DictConfig with interpolations kept.

    Raises :class:`ConfigError` naming the hydra key and the preset key behind it when the schema
    has no such key, Hydra rejects a value, or an interpolation does not resolve; naming a raw key
    that the schema does not have, or that changes a value the preset sets (and the preset key).
    """
    raw = list(raw)
    _require_hydra()
    from hydra.errors import HydraException
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    verl_source, rllm_source = verl_config_source(), rllm_config_source()
    origin = f"{rllm_source.origin}, {verl_source.origin}"
    schema = base_trainer_schema()
    for override in overrides:
        parent = override.key.rpartition(".")[0]
        if override.add:
            known = _has_key(schema, parent) and not _has_key(schema, override.key)
        else:
            known = _has_key(schema, override.key)
        if not known:
            raise ConfigError(f"{override.source}: sets {override.key!r}, which rLLM/verl's schema does not have "
                              f"({origin})")
    _check_raw_keys(schema, raw, origin)
    # a raw +key the mapping adds too is set over it (then checked to agree), not added twice
    added = {o.key for o in overrides if o.add}
    raw = [dataclasses.replace(r, prefix="++") if r.prefix == "+" and r.key in added else r for r in raw]
    try:
        config = _compose(rllm_source.directory, verl_source.directory,
                          [o.to_hydra() for o in overrides] + [r.to_hydra() for r in raw])
    except (HydraException, OmegaConfBaseException) as exc:
        mapped = [o.to_hydra() for o in overrides]
        for raw_override in raw:  # name the raw key at fault: Hydra's grammar errors do not
            try:
                _compose(rllm_source.directory, verl_source.directory, [*mapped, raw_override.to_hydra()])
            except (HydraException, OmegaConfBaseException) as own:
                raise ConfigError(f"{raw_override.text} (command line): hydra rejects it: {own}") from None
        raise ConfigError(f"hydra rejects the preset's keys: {exc}") from None
    _register_mul_resolver()
    if raw:
        _check_raw_against_mapping(config, overrides, raw)
    try:
        OmegaConf.to_container(config, resolve=True)
    except OmegaConfBaseException as exc:
        key = getattr(exc, "full_key", "") or "?"
        raise ConfigError(f"{key}: does not resolve in the composed rLLM/verl config: {exc}") from None
    # verl leaves '???' in sections it does not use (e.g. a disabled reward model); ours must be complete
    missing = sorted(key for key in OmegaConf.missing_keys(config) if key.startswith(REQUIRED_SECTIONS))
    if missing:
        raise ConfigError(f"the composed rLLM/verl config still needs a value for: {', '.join(missing)}")
    return config


def _register_mul_resolver() -> None:
    from omegaconf import OmegaConf

    if not OmegaConf.has_resolver("mul"):  # rLLM's own resolver, needed by data.gen_batch_size
        OmegaConf.register_new_resolver("mul", lambda x, y: int(x) * int(y))


def composed_to_yaml(config: Any) -> str:
    from omegaconf import OmegaConf

    return OmegaConf.to_yaml(config)


# --- level 2 -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Level2Result:
    """What verl's own validation said about one config."""

    ran: bool
    """False when verl imports nowhere (``reason`` says why)."""
    where: str = ""
    """``in-process`` or the interpreter used."""
    verl_version: str = ""
    reason: str = ""
    notes: tuple[str, ...] = ()
    """Steps that could not run here (verl's LoRA rank check needs vLLM)."""


def verl_importable() -> bool:
    try:
        importlib.import_module("verl.utils.config")
    except ImportError:
        return False
    return True


def validate_with_verl(config: Any, python: str | None = None) -> Level2Result:
    """Level 2 on one composed config; see :func:`validate_many_with_verl`."""
    return validate_many_with_verl([config], python)[0]


def validate_many_with_verl(configs: list[Any], python: str | None = None) -> list[Level2Result]:
    """Level 2 on composed configs. Raises :class:`ConfigError` with verl's message when verl refuses one.

    ``python``: an interpreter with verl (default ``TERMINAL_AGENT_VERL_PYTHON``; one process checks
    them all); without one, in-process where verl imports; otherwise results with ``ran=False``.
    """
    python = python or os.environ.get("TERMINAL_AGENT_VERL_PYTHON")
    if python is None and verl_importable():
        import verl

        from terminal_agent.training.verl.config_check import check_config

        results = []
        for config in configs:
            # verl signals a refused config with AssertionError/ValueError/TypeError or omegaconf errors
            try:
                notes = check_config(config)
            except Exception as exc:  # noqa: BLE001
                raise ConfigError(f"verl {verl.__version__} validate_config refuses the config: "
                                  f"{type(exc).__name__}: {exc}") from None
            results.append(Level2Result(True, "in-process", verl.__version__, notes=tuple(notes)))
        return results
    if python is None:
        reason = ("verl does not import here (pip install -e '.[train]', or set TERMINAL_AGENT_VERL_PYTHON to an "
                  "interpreter that has it)")
        return [Level2Result(False, reason=reason) for _ in configs]
    return _validate_in_interpreter(configs, python)


def _validate_in_interpreter(configs: list[Any], python: str) -> list[Level2Result]:
    script = Path(__file__).with_name("config_check.py")
    with tempfile.TemporaryDirectory(prefix="verl-check-") as scratch:
        files = []
        for index, config in enumerate(configs):
            files.append(Path(scratch) / f"composed-{index}.yaml")
            files[-1].write_text(composed_to_yaml(config))
        try:
            done = subprocess.run([python, str(script), *map(str, files)], capture_output=True, text=True,
                                  timeout=900, cwd=scratch)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise TrainingSetupError(f"cannot run verl's validation with {python}: {exc}") from None
    answers = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    if not answers:
        raise TrainingSetupError(f"verl's validation with {python} gave no answer (exit {done.returncode}): "
                                 f"{done.stderr.strip()[-1500:]}")
    if answers[0].get("unavailable"):
        return [Level2Result(False, python, reason=answers[0].get("error", "")) for _ in configs]
    results = []
    for answer in answers:
        if not answer.get("ok"):
            raise ConfigError(f"verl {answer.get('verl', '?')} validate_config refuses the config: "
                              f"{answer.get('error')}")
        results.append(Level2Result(True, python, answer.get("verl", ""), notes=tuple(answer.get("notes", ()))))
    if len(results) != len(configs):
        raise TrainingSetupError(f"verl's validation with {python} answered {len(results)} of {len(configs)} "
                                 f"configs: {done.stderr.strip()[-1500:]}")
    return results


def default_verl_python() -> str | None:
    """The CI venv's interpreter (``scripts/setup_verl_check_venv.sh``), when it exists."""
    candidate = cache_root() / "verl-check-venv" / "bin" / "python"
    return str(candidate) if candidate.exists() else None


__all__ = [
    "ConfigSource", "Level2Result", "base_trainer_schema", "compose_trainer_config", "composed_to_yaml", "config_dict",
    "default_verl_python", "schema_has_key",
    "rllm_config_source", "validate_many_with_verl", "validate_with_verl", "verl_config_source", "verl_importable",
    "wheel_cache_dir",
]
