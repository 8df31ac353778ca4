"""Configs whose backends own their settings: the host config picks a backend, each backend declares its section.

A host config (``SandboxConfig``, ``JudgeConfig``) has a ``backend`` field naming an entry of its registry. A
backend with settings of its own declares them as a pydantic model in its own module (docstring per field, unknown
keys refused) and names that model as the ``settings`` companion of its one registry line::

    SANDBOX_BACKENDS.register_path("bwrap", "terminal_agent.sandbox.bwrap.backend:BACKEND",
                                   settings="terminal_agent.sandbox.bwrap.settings:BwrapConfig")

The host config then holds one section per such backend, under the backend's name with ``-`` written ``_``
(``sandbox.bwrap``, ``judge.claude_cli``), validated by that model (a section the user leaves out holds the
model's defaults, so that a backend chosen later - ``auto``, a hot switch - finds its settings). A backend
reads its section typed with :meth:`BackendSettingsHost.backend_settings`. Adding a backend edits no host config.
"""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict, Field, SerializeAsAny, ValidationError, model_serializer, model_validator
from pydantic_core import InitErrorDetails
from pydantic.functional_serializers import SerializerFunctionWrapHandler

from terminal_agent.errors import ConfigError
from terminal_agent.registry import Registry

SETTINGS = "settings"
"""The companion role of a backend's settings model in its registry line."""

SettingsT = TypeVar("SettingsT", bound=BaseModel)


def section_key(backend: str) -> str:
    """The key of ``backend``'s section in its host config: its name with ``-`` written ``_``."""
    return backend.replace("-", "_")


class BackendSettingsHost(BaseModel):
    """A config with a ``backend`` field whose registered backends bring their own sections (see the module)."""

    model_config = ConfigDict(extra="allow")  # only the sections of registered backends: checked before validation

    __pydantic_extra__: dict[str, SerializeAsAny[BaseModel]] = Field(init=False)

    backend_registry: ClassVar[Registry[Any]]
    """The registry whose entries' ``settings`` companions give the sections (set by each host config)."""

    @model_validator(mode="before")
    @classmethod
    def _backend_sections(cls, data: Any) -> Any:
        """Each key that is no field must be the section of a registered backend with settings, and is validated by
        its model (an error names ``SECTION.field``); every such backend's section is there after it."""
        if not isinstance(data, dict):
            return data
        registry = cls.backend_registry
        backends = {section_key(name): name for name in registry.names_with(SETTINGS)}
        out: dict[str, Any] = {}
        errors: list[InitErrorDetails] = []
        for key, value in data.items():
            name = backends.get(key) if key not in cls.model_fields else None
            if name is None:
                if key not in cls.model_fields:
                    errors.append({"type": "extra_forbidden", "loc": (key,), "input": value})
                out[key] = value
                continue
            model = _settings_model(registry, name)
            try:
                out[key] = value if isinstance(value, model) else model.model_validate(value)
            except ValidationError as exc:
                errors.extend({"type": error["type"], "loc": (key, *error["loc"]), "input": error["input"],
                               **({"ctx": error["ctx"]} if "ctx" in error else {})}  # type: ignore[typeddict-item]
                              for error in exc.errors())
        if errors:
            raise ValidationError.from_exception_data(cls.__name__, errors)
        for key, name in backends.items():
            if key not in out:
                out[key] = _settings_model(registry, name)()
        return out

    @model_serializer(mode="wrap")
    def _sections_after_backend(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The dump with the backends' sections right after ``backend``, sorted by key."""
        data: dict[str, Any] = handler(self)
        sections = sorted(key for key in data if key not in type(self).model_fields)
        ordered: dict[str, Any] = {}
        for key, value in data.items():
            if key in sections:
                continue
            ordered[key] = value
            if key == "backend":
                ordered.update((section, data[section]) for section in sections)
        ordered.update((section, data[section]) for section in sections if section not in ordered)
        return ordered

    def backend_settings(self, backend: str, model: type[SettingsT]) -> SettingsT:
        """The section of ``backend`` (its model's defaults when this config was read before ``backend`` was
        registered). Raises :class:`ConfigError` when ``backend`` has no settings or they are not a ``model``."""
        held = (self.__pydantic_extra__ or {}).get(section_key(backend))
        if held is None:
            held = _settings_model(self.backend_registry, backend)()
        if not isinstance(held, model):
            raise ConfigError(f"the {section_key(backend)} section holds {type(held).__name__}, not {model.__name__}")
        return held


def _settings_model(registry: Registry[Any], backend: str) -> type[BaseModel]:
    """The settings model the registry line of ``backend`` names. Raises :class:`ConfigError` when it names none."""
    model = registry.companion(backend, SETTINGS)
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise ConfigError(f"{registry.kind} {backend!r} declares no settings model (got {model!r})")
    return model


__all__ = ["SETTINGS", "BackendSettingsHost", "section_key"]
