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
