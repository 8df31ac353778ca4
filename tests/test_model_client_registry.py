"""The model-client registry: spec parsing, the typed ``type``, scripted files, plugins, the embedded entries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from terminal_agent.errors import ConfigError
from terminal_agent.interfaces import ModelClient
from terminal_agent.models import MODEL_CLIENTS, ModelClientConfig, build_model_client, config_from_spec
from terminal_agent.models.client_registry import register_model_client, spec_values
from terminal_agent.models.scripted import ScriptedModelClient

BUILT_IN = ["embedded", "embedded-batched", "embedded-continuous", "litellm", "local", "scripted"]
HELLO = [{"role": "user", "content": "Say hi."}]


# --- a plugin, registered the way a third-party module would: one decorator line at import ---
@register_model_client("myspec")
def build_my_client(config: ModelClientConfig) -> ModelClient:
    """Always finishes; records the token cap it was built with."""
    return ScriptedModelClient(lambda messages: f"<finish>\nmessage: cap {config.max_tokens}\n</finish>", name="myspec")


@register_model_client("canned", prefix="canned:", spec_field="model")
def build_canned(config: ModelClientConfig) -> ModelClient:
    """Replies with the spec's argument (``canned:TEXT``)."""
    return ScriptedModelClient(lambda messages: str(config.model), name="canned")


def test_every_built_in_entry_is_registered_with_one_signature():
    assert set(BUILT_IN) <= set(MODEL_CLIENTS.names())
    for name in BUILT_IN:
        entry = MODEL_CLIENTS.get(name)
        assert entry.name == name and callable(entry.factory)
    assert [name for name in MODEL_CLIENTS if MODEL_CLIENTS.get(name).fallback] == ["litellm"]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("embedded", {"type": "embedded"}),
        ("embedded-batched", {"type": "embedded-batched"}),
        ("embedded-continuous", {"type": "embedded-continuous"}),
        ("scripted:replies/a.yaml", {"type": "scripted", "replies_file": Path("replies/a.yaml")}),
        ("openai/gpt-4o-mini", {"type": "litellm", "model": "openai/gpt-4o-mini"}),
        ("anthropic/claude-x", {"type": "litellm", "model": "anthropic/claude-x"}),
        ("embedded-batchedX", {"type": "litellm", "model": "embedded-batchedX"}),  # names match exactly only
        ("litellm", {"type": "litellm"}),  # the model then comes from LITELLM_MODEL
    ],
)
def test_spec_parsing_goes_through_the_registry(spec, expected):
    config = config_from_spec(spec, max_tokens=7, temperature=None)
    assert config.model_dump(exclude_none=True) == {**expected, "max_tokens": 7}


def test_a_model_directory_spec_picks_the_local_entry(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    assert spec_values(str(tmp_path)) == {"type": "local", "model": str(tmp_path)}
    assert spec_values(str(tmp_path / "missing")) == {"type": "litellm", "model": str(tmp_path / "missing")}
    config = config_from_spec(str(tmp_path), max_tokens=3)
    assert (config.type, config.model, config.adapter, config.max_tokens) == ("local", str(tmp_path), None, 3)


def test_a_local_model_that_cannot_load_is_a_config_error_naming_it(tmp_path):
    with pytest.raises(ConfigError, match="no-such-base"):
        build_model_client(ModelClientConfig(type="local", model=str(tmp_path / "no-such-base")))


def test_no_spec_is_the_environments_choice(monkeypatch):
    monkeypatch.delenv("LITELLM_MODEL", raising=False)
    assert config_from_spec("  ").type == "embedded"
    monkeypatch.setenv("LITELLM_MODEL", "openai/from-env")
    assert (config_from_spec(None).type, config_from_spec(None).model) == ("litellm", "openai/from-env")


def test_unknown_type_names_the_valid_ones():
    with pytest.raises(ValidationError) as caught:
        ModelClientConfig(type="embeded")
    message = str(caught.value)
    assert "type" in message and "unknown model client 'embeded'" in message
    valid = message.split("valid: ", 1)[1].split(" [", 1)[0].split(", ")
    assert set(BUILT_IN) | {"canned", "myspec"} <= set(valid) and valid == sorted(valid)
    with pytest.raises(ConfigError, match=r"unknown model client 'embeded'; valid: .*embedded-continuous"):
        build_model_client(ModelClientConfig.model_construct(type="embeded"))  # a config built without validation
    with pytest.raises(ValidationError, match="batched"):
        ModelClientConfig(type="embedded", batched=True)  # the old flag is gone: the type says it


def test_registration_errors_are_config_errors():
    with pytest.raises(ConfigError, match="'embedded' is already registered"):
        register_model_client("embedded")(build_my_client)
    with pytest.raises(ConfigError, match="prefix 'scripted:' is already taken by 'scripted'"):
        register_model_client("other-scripted", prefix="scripted:", spec_field="replies_file")(build_my_client)
    with pytest.raises(ConfigError, match="'litellm' is already the fallback"):
        register_model_client("other-fallback", spec_field="model", fallback=True)(build_my_client)
    with pytest.raises(ConfigError, match="needs spec_field"):
        register_model_client("no-field", prefix="nf:")
    assert "other-scripted" not in MODEL_CLIENTS and "other-fallback" not in MODEL_CLIENTS


def test_a_plugin_client_is_built_from_its_spec():
    client = build_model_client("myspec")
    assert isinstance(client, ScriptedModelClient) and client.name == "myspec"
    assert client.complete(HELLO).text == "<finish>\nmessage: cap None\n</finish>"
    capped = build_model_client(config_from_spec("myspec", max_tokens=5))
    assert "cap 5" in capped.complete(HELLO).text
    assert spec_values("canned:hello there") == {"type": "canned", "model": "hello there"}
    assert build_model_client("canned:hello there").complete(HELLO).text == "hello there"


def test_scripted_spec_builds_a_client_from_json_and_yaml(tmp_path):
    (tmp_path / "r.json").write_text(json.dumps(["one", "two"]))
    (tmp_path / "r.yaml").write_text("- first\n- second\n")
    from_json = build_model_client(f"scripted:{tmp_path / 'r.json'}")
    assert [from_json.complete(HELLO).text for _ in range(2)] == ["one", "two"]
    assert build_model_client(f"scripted:{tmp_path / 'r.yaml'}").complete(HELLO).text == "first"


@pytest.mark.parametrize(
    ("name", "content", "error"),
    [
        ("broken.json", '["one", "two"', r"broken\.json is not valid JSON"),
        ("broken.yaml", "- one\n- [two\n", r"broken\.yaml is not valid YAML"),
        ("object.json", '{"reply": "one"}', r"object\.json must hold a list of reply strings, not dict"),
        ("empty.yaml", "", r"empty\.yaml must hold a list of reply strings, not NoneType"),
        ("entry.json", '["one", "two", 3]', r"entry\.json: reply 2 is int, not a string"),
        ("entry.yaml", "- one\n- {cmd: ls}\n", r"entry\.yaml: reply 1 is dict, not a string"),
        ("binary.json", b"\xff\xfe\x00", r"cannot read replies file .*binary\.json"),
    ],
)
def test_a_bad_scripted_file_is_a_config_error_naming_the_file(tmp_path, name, content, error):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(ConfigError, match=error):
        build_model_client(f"scripted:{path}")


def test_a_missing_scripted_file_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match=r"replies file .*nope\.json does not exist"):
        build_model_client(f"scripted:{tmp_path / 'nope.json'}")
    with pytest.raises(ConfigError, match=r"no replies file given \(spec scripted:FILE\)"):
        build_model_client("scripted")


@pytest.mark.model
def test_the_local_entry_samples_the_embedded_base_through_the_trainers_sampler():
    client = build_model_client(ModelClientConfig(type="local", device="cpu", max_tokens=4, slots=2))
    try:
        assert client.name.startswith("embedded/")
        reply = client.complete(HELLO, temperature=0.0)
        assert reply.text.strip() and reply.completion_tokens <= 4
    finally:
        client.close()


@pytest.mark.model
def test_embedded_spec_builds_the_embedded_model():
    from terminal_agent.models.embedded import EmbeddedModelClient

    client = build_model_client(config_from_spec("embedded", max_tokens=4))
    assert isinstance(client, EmbeddedModelClient) and not client.is_thread_safe
    assert client.config.max_new_tokens == 4
    reply = client.complete(HELLO)
    assert reply.text and 0 < reply.completion_tokens <= 4


@pytest.mark.model
def test_embedded_continuous_spec_builds_the_continuous_sampler_and_replies():
    from terminal_agent.models.continuous_batching import ContinuousBatchingClient

    client = build_model_client(config_from_spec("embedded-continuous", max_tokens=6, temperature=0.0))
    try:
        assert isinstance(client, ContinuousBatchingClient) and client.is_thread_safe
        assert client.config.max_new_tokens == 6
        reply = client.complete(HELLO)
        assert reply.completion_ids and len(reply.completion_ids) <= 6 and reply.finish_reason in {"stop", "length"}
        assert client.stats.requests == 1
    finally:
        client.close()
