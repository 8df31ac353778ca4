"""The plugin registry: duplicates and unknown names are errors that say what is valid."""

from __future__ import annotations

import pytest

from terminal_agent.actions import TOOLS
from terminal_agent.errors import ConfigError
from terminal_agent.registry import Registry


def test_duplicate_name_is_an_error_and_keeps_the_first_entry():
    registry: Registry[object] = Registry("widget")

    @registry.register("a")
    def first() -> None: ...

    with pytest.raises(ConfigError, match="widget 'a' is already registered"):

        @registry.register("a")
        def second() -> None: ...

    assert registry.get("a") is first
    assert len(registry) == 1


def test_unknown_name_lists_the_valid_ones_sorted():
    registry: Registry[int] = Registry("widget")
    registry.register("zeta")(1)
    registry.register("alpha")(2)
    with pytest.raises(ConfigError, match=r"unknown widget 'beta'; valid: alpha, zeta"):
        registry.get("beta")
    assert registry.names() == ["alpha", "zeta"] == list(registry)
    assert "alpha" in registry and "beta" not in registry


def test_empty_registry_says_none_registered():
    with pytest.raises(ConfigError, match="none registered"):
        Registry("widget").get("x")


def test_the_tool_registry_refuses_a_second_bash():
    with pytest.raises(ConfigError, match="already registered"):
        TOOLS.register("bash")(type("OtherBash", (), {}))
    assert TOOLS.get("bash").__name__ != "OtherBash"


def test_an_entry_named_by_path_is_imported_on_first_use_and_can_be_unregistered():
    registry: Registry[object] = Registry("widget")
    registry.register_path("dumps", "json:dumps")
    assert registry.loaded() == {} and registry.names() == ["dumps"]
    import json

    assert registry.get("dumps") is json.dumps and registry.loaded() == {"dumps": json.dumps}
    registry.unregister("dumps")
    with pytest.raises(ConfigError, match=r"unknown widget 'dumps'; valid: \(none registered\)"):
        registry.get("dumps")
    with pytest.raises(ConfigError, match="unknown widget 'dumps'"):
        registry.unregister("dumps")
    with pytest.raises(ConfigError, match="is not 'package.module:attribute'"):
        registry.register_path("bad", "json.dumps")


def test_every_table_line_names_an_entry_that_loads():
    """The tables of the kinds registered by path: each line's module and attribute exist."""
    from terminal_agent.actions.base import Tool
    from terminal_agent.rewards.judge import JUDGE_BACKENDS
    from terminal_agent.tasks.grading_mode_registry import GRADING_MODES
    from terminal_agent.training.trainer_registry import TRAINER_BACKENDS

    assert {"bash", "file", "finish", "scratchpad", "search", "todo"} <= set(TOOLS.names())
    assert all(issubclass(TOOLS.get(name), Tool) for name in TOOLS)
    assert {"claude-cli", "litellm", "local", "model", "none"} <= set(JUDGE_BACKENDS.names())
    assert all(callable(JUDGE_BACKENDS.get(name)) for name in JUDGE_BACKENDS)
    assert {"harbor", "weighted_pytest"} <= set(GRADING_MODES.names())
    assert all(callable(GRADING_MODES.get(name)) for name in GRADING_MODES)
    assert all(hasattr(TRAINER_BACKENDS.get(name), "launch") for name in ["local", "verl"])
    from terminal_agent.tasks.families import FAMILIES, TaskFamily

    assert len(FAMILIES) >= 19 and all(issubclass(FAMILIES.get(name), TaskFamily) for name in FAMILIES)


def test_a_companion_is_imported_on_its_own_first_use_without_the_entry():
    registry: Registry[object] = Registry("widget", companions=("settings",))
    registry.register_path("dumps", "json:dumps", settings="json:JSONDecoder")
    registry.register("plain")(object())
    assert registry.names_with("settings") == ["dumps"]
    import json

    assert registry.companion("dumps", "settings") is json.JSONDecoder and "dumps" not in registry.loaded()
    assert registry.companion("plain", "settings") is None
    with pytest.raises(ConfigError, match="a widget has no companion 'rules'; roles: settings"):
        registry.companion("dumps", "rules")
    with pytest.raises(ConfigError, match=r"unknown widget 'nope'; valid: dumps, plain"):
        registry.companion("nope", "settings")
    with pytest.raises(ConfigError, match="widget 'x': no companion 'setings'; roles: settings"):
        registry.register("x", setings=int)
    with pytest.raises(ConfigError, match="is not 'package.module:attribute'"):
        registry.register_path("y", "json:dumps", settings="json.JSONDecoder")
    registry.unregister("dumps")
    assert registry.names_with("settings") == []
    registry.register("dumps", settings=int)(json.dumps)  # a name freed is free with its companions
    assert registry.companion("dumps", "settings") is int


def test_every_settings_companion_is_a_pydantic_model_documented_field_by_field():
    """The sandbox and judge backends with settings: each names a model whose every field has a docstring."""
    import ast
    import inspect

    from pydantic import BaseModel

    from terminal_agent.rewards.judge import JUDGE_BACKENDS
    from terminal_agent.sandbox.registry import SANDBOX_BACKENDS

    assert SANDBOX_BACKENDS.names_with("settings") == ["bwrap", "ray"]
    assert JUDGE_BACKENDS.names_with("settings") == ["claude-cli", "litellm", "local"]
    for registry in (SANDBOX_BACKENDS, JUDGE_BACKENDS):
        for name in registry.names_with("settings"):
            model = registry.companion(name, "settings")
            assert issubclass(model, BaseModel) and model.model_config.get("extra") == "forbid", name
            body = ast.parse(inspect.getsource(model)).body[0].body  # type: ignore[attr-defined]
            documented = {node.target.id for node, after in zip(body, body[1:])
                          if isinstance(node, ast.AnnAssign) and isinstance(after, ast.Expr)}
            assert set(model.model_fields) <= documented, (name, set(model.model_fields) - documented)
