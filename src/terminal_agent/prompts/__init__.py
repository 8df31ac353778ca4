"""The system prompt: ``system_prompt.md`` rendered with the registered tools and the limits the code applies.

``${tools}`` becomes, for every tool in ``prompt_order``, its one-line ``description`` and its
first example, so a new tool module appears in the prompt without touching this package.
"""

from __future__ import annotations

import re
from importlib import resources
from string import Template

from terminal_agent.actions import TOOLS, ActionConfig

EXAMPLE_BLOCK = re.compile(r"^<([a-z_]+)>\n(.*?)\n</\1>$", re.DOTALL | re.MULTILINE)


def system_prompt_template() -> str:
    return resources.files(__name__).joinpath("system_prompt.md").read_text(encoding="utf-8")


def render_tools(values: dict[str, str]) -> str:
    """The ``${tools}`` section: ``name: description`` and one example per registered tool."""
    tools = sorted((TOOLS.get(name) for name in TOOLS), key=lambda tool: (tool.prompt_order, tool.name))
    sections = [f"{tool.name}: {Template(tool.description).safe_substitute(values)}\n{tool.example()}" for tool in tools]
    return "\n\n".join(sections)


def render_system_prompt(config: ActionConfig | None = None, template: str | None = None) -> str:
    """The prompt with ``${tools}``, ``${max_timeout_secs}``, ``${max_output_chars}`` and
    ``${max_consecutive_error_turns}`` filled in. A custom ``template`` may use them too."""
    config = config or ActionConfig()
    values = {
        "max_timeout_secs": f"{config.max_timeout_secs:g}",
        "max_output_chars": str(config.max_output_chars),
        "max_consecutive_error_turns": str(config.max_consecutive_error_turns),
    }
    values["tools"] = render_tools(values)
    return Template(template if template is not None else system_prompt_template()).safe_substitute(values).strip()


def prompt_examples(prompt: str) -> list[tuple[str, str]]:
    """Every ``<tag>...</tag>`` example block of ``prompt`` as ``(tag, full block)``, in order."""
    return [(match.group(1), match.group(0)) for match in EXAMPLE_BLOCK.finditer(prompt)]


__all__ = ["prompt_examples", "render_system_prompt", "system_prompt_template"]
