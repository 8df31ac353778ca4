"""The chat parser rLLM HEAD needs for the project's models (terminal_agent.training.verl.rllm_chat_parser).

rLLM's ``VerlEngine`` picks its parser by the model's name; for the embedded SmolLM2 it gets the generic
``ChatTemplateParser``, which fails its own equivalence check (``VerlEngine()`` raises) and has no
``parse_completion``. These tests show both failures on the real tokenizer, then that our parser passes
rLLM's check, parses real completion ids, builds multi-turn prompts that extend each other token for
token, works on other templates, and drives ``TerminalTaskWorkflow`` through a token-in-token-out engine.

``scripts/test_rllm_conformance.sh`` collects ``test_rllm_<version>.py`` only: ``test_rllm_head.py``
imports this module's tests. Run alone: ``HEAD_PYTHON -m pytest tests/rllm_conformance/test_rllm_head_chat_parser.py``.
"""

from __future__ import annotations

import asyncio
import copy
import importlib.util
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

from conftest import FINISH, LOOK, RLLM_VERSION, SOLVE, TASK, assistant_tokens_only, flat_task, masked_text

if not RLLM_VERSION.startswith("0.3"):
    pytest.skip(f"needs rLLM 0.3* (installed: {RLLM_VERSION})", allow_module_level=True)

from rllm.engine.rollout.rollout_engine import RolloutEngine  # noqa: E402
from rllm.parser import ChatTemplateParser  # noqa: E402
from rllm.parser.chat_template_parser import LlamaChatTemplateParser, QwenChatTemplateParser  # noqa: E402
from rllm.parser.utils import PARSER_TEST_MESSAGES  # noqa: E402

from terminal_agent.training.verl.rllm_chat_parser import (  # noqa: E402
    TemplateChatParser,
    TurnPromptBuilder,
    chat_parser_for,
    original_chat_template,
    prepare_model_dir_for_rllm,
    rllm_check_safe_chat_template,
)
from terminal_agent.training.verl.rllm_engines import RolloutEngineModelClient, model_output_to_response  # noqa: E402

SYSTEM = "You are a terminal agent. Answer with one action."
OBSERVATION_1 = "<output>\nexit code 0\n</output>"
OBSERVATION_2 = "<output>\nhello.txt\n</output>"
CUT = "<bash>\ncmd: echo hel"


def _chat(*turns: str) -> list[dict]:
    """Our agent's chat: system, task, then reply/observation pairs (the observation after the last reply too)."""
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": TASK.instruction}]
    observations = [OBSERVATION_1, OBSERVATION_2, "<output>\n\n</output>"]
    for reply, observation in zip(turns, observations):
        messages += [{"role": "assistant", "content": reply}, {"role": "user", "content": observation}]
    return messages


def _render_ids(tokenizer, messages):
    text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    return tokenizer.encode(text, add_special_tokens=False)


def _reply_ids(tokenizer, text, *, cut=False):
    ids = tokenizer.encode(text, add_special_tokens=False)
    return ids if cut else ids + [tokenizer.eos_token_id]


# --- what is broken without us -----------------------------------------------------------------
@pytest.mark.model
def test_rllms_generic_parser_fails_on_smollm2_the_way_the_gpu_run_did(tokenizer):
    # VerlEngine's constructor calls exactly this (read from its source: verl itself is not installed here)
    source = Path(importlib.util.find_spec("rllm.engine.rollout.verl_engine").origin).read_text()
    assert "self.chat_parser = ChatTemplateParser.get_parser(tokenizer" in source
    assert "self.chat_parser.parse_completion(completion_ids)" in source
    # (a) the model's name matches none of rLLM's parsers; the generic one fails its equivalence check
    with pytest.raises(AssertionError, match="equivalence"):
        ChatTemplateParser.get_parser(tokenizer)
    generic = ChatTemplateParser(tokenizer)
    lone_user = generic.parse([PARSER_TEST_MESSAGES[1]])
    assert "SmolLM" in lone_user  # a message rendered alone gets the template's default system prompt
    # (b) even where the check passes, the generic parser cannot read a reply
    with pytest.raises(NotImplementedError):
        generic.parse_completion(_reply_ids(tokenizer, SOLVE))


# --- our parser --------------------------------------------------------------------------------
@pytest.mark.model
def test_our_parser_passes_rllms_equivalence_check_and_renders_as_the_template(tokenizer):
    parser = chat_parser_for(tokenizer)
    assert isinstance(parser, TemplateChatParser) and isinstance(parser, ChatTemplateParser)
    assert parser.verify_equivalence(PARSER_TEST_MESSAGES)  # verbose: raises with both renderings if not
    chat = _chat(SOLVE, LOOK)
    assert parser.verify_equivalence(chat)
    whole = tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
    assert parser.parse(chat, add_generation_prompt=True, is_first_msg=True) == whole
    # message k alone gives exactly what the whole render adds for it
    pieces = [parser.parse(chat[:1], is_first_msg=True)] + [parser.parse([m]) for m in chat[1:-1]]
    pieces.append(parser.parse(chat[-1:], add_generation_prompt=True))
    assert "".join(pieces) == whole
    assert parser.generation_prompt == "<|im_start|>assistant\n"
    # is_first_msg keeps the template's default system prompt; a continuation never gets it
    assert "SmolLM" in parser.parse(chat[1:2], is_first_msg=True) and "SmolLM" not in parser.parse(chat[1:2])


@pytest.mark.model
def test_rllms_own_masking_works_on_our_parser(tokenizer):
    """rLLM's tokenize_and_mask_cumulative (its chat-based path) over our parser: mask = the replies exactly."""
    chat = _chat(SOLVE, LOOK)[:-1]  # ends with the last reply
    prompt, response, mask = chat_parser_for(tokenizer).tokenize_and_mask_cumulative(chat)
    assert tokenizer.decode(prompt.tolist() + response.tolist()) == tokenizer.apply_chat_template(chat, tokenize=False)
    kept = tokenizer.decode([t for t, m in zip(response.tolist(), mask.tolist()) if m])
    assert kept == SOLVE + "<|im_end|>\n" + LOOK + "<|im_end|>\n"


@pytest.mark.model
def test_parse_completion_reads_real_completion_ids(tokenizer):
    parser = chat_parser_for(tokenizer)
    ended = parser.parse_completion(_reply_ids(tokenizer, SOLVE))
    assert ended == {"content": SOLVE, "reasoning": "", "tool_calls": []}
    cut = parser.parse_completion(_reply_ids(tokenizer, CUT, cut=True))  # cut by the token cap: no <|im_end|>
    assert cut == {"content": CUT, "reasoning": "", "tool_calls": []}
    thought = parser.parse_completion(_reply_ids(tokenizer, "<think>\nls first\n</think>\n\n" + LOOK))
    assert thought == {"content": LOOK, "reasoning": "ls first", "tool_calls": []}
    unfinished = parser.parse_completion(_reply_ids(tokenizer, "<think>\nstill thinking", cut=True))
    assert unfinished["reasoning"] == "still thinking" and unfinished["content"] == ""
    assert parser.parse_completion([tokenizer.eos_token_id])["content"] == ""


@pytest.mark.model
def test_multi_turn_prompts_extend_each_other_token_for_token(tokenizer):
    builder = TurnPromptBuilder(chat_parser_for(tokenizer))
    assert builder.turn_end_ids == tokenizer.encode("<|im_end|>\n", add_special_tokens=False)
    prompts, completions = [], []
    for k, (reply, cut) in enumerate([(SOLVE, False), (CUT, True), (FINISH, False)]):
        messages = _chat(SOLVE, CUT)[: 2 + 2 * k]
        prompt = builder.prompt_ids(messages)
        assert prompt == _render_ids(tokenizer, messages)  # and the same ids a fresh render of the chat gives
        completion = _reply_ids(tokenizer, reply, cut=cut)
        builder.record(messages, prompt, completion)
        prompts.append(prompt)
        completions.append(completion)
    assert builder.extended_turns == 2
    # turn 2: after <|im_end|> the template's "\n"; turn 3: after the cut reply, the whole "<|im_end|>\n"
    assert prompts[1][len(prompts[0]) + len(completions[0])] == tokenizer.encode("\n", add_special_tokens=False)[0]
    assert prompts[2][len(prompts[1]) + len(completions[1]):][:2] == builder.turn_end_ids
    response, mask = assistant_tokens_only(prompts, completions, tokenizer)  # raises if a prompt does not extend
    assert masked_text(response, mask, tokenizer) == SOLVE + "<|im_end|>" + CUT + FINISH + "<|im_end|>"
    # a rewritten history is rendered whole, never spliced
    rewritten = _chat(SOLVE, CUT)
    rewritten[1] = {"role": "user", "content": "a shorter task"}
    assert builder.prompt_ids(rewritten) == _render_ids(tokenizer, rewritten)


# --- other templates ---------------------------------------------------------------------------
HEADER_TEMPLATE = (  # a Llama-3-like layout written for this test: BOS, headers, <|eot|>, a default system prompt
    "{{- bos_token -}}"
    "{%- if messages[0]['role'] == 'system' -%}{%- set system = messages[0]['content'] -%}{%- set rest = messages[1:] -%}"
    "{%- else -%}{%- set system = 'Default: you work in a terminal.' -%}{%- set rest = messages -%}{%- endif -%}"
    "{{- '<|header|>system<|/header|>\n\n' + system + '<|eot|>' -}}"
    "{%- for message in rest -%}{{- '<|header|>' + message['role'] + '<|/header|>\n\n' + message['content'] | trim + '<|eot|>' -}}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<|header|>assistant<|/header|>\n\n' -}}{%- endif -%}"
)
QWEN_STYLE_TEMPLATE = (  # ChatML with a Qwen-like default system prompt, written for this test
    "{%- if messages[0]['role'] != 'system' -%}"
    "{{- '<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n' -}}{%- endif -%}"
    "{%- for message in messages -%}{{- '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>\n' -}}{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\n' -}}{%- endif -%}"
)


def _retemplated(tokenizer, template, name=None, special=()):
    copied = copy.deepcopy(tokenizer)
    if special:
        copied.add_tokens(list(special), special_tokens=True)
    copied.chat_template = template
    if name is not None:
        copied.name_or_path = name
    return copied


@pytest.mark.model
def test_a_header_template_with_bos_and_a_default_system_prompt(tokenizer):
    other = _retemplated(tokenizer, HEADER_TEMPLATE, special=("<|header|>", "<|/header|>", "<|eot|>"))
    with pytest.raises(AssertionError):
        ChatTemplateParser.get_parser(other)
    parser = chat_parser_for(other)
    assert isinstance(parser, TemplateChatParser)
    assert parser.verify_equivalence(PARSER_TEST_MESSAGES)
    eot = other.convert_tokens_to_ids("<|eot|>")
    assert parser.assistant_end == "<|eot|>" and eot in parser.stop_ids
    reply = other.encode(LOOK, add_special_tokens=False)
    assert parser.parse_completion(reply + [eot])["content"] == LOOK
    builder = TurnPromptBuilder(parser)
    assert builder.turn_end_ids == [eot] and builder.missing_turn_end(reply + [eot]) == []
    prompts, completions = [], []
    for k, text in enumerate([SOLVE, LOOK]):
        messages = _chat(SOLVE, LOOK)[: 2 + 2 * k]
        prompts.append(builder.prompt_ids(messages))
        assert other.decode(prompts[-1]) == other.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        completions.append(other.encode(text, add_special_tokens=False) + [eot])
        builder.record(messages, prompts[-1], completions[-1])
    assert other.decode(prompts[0][:1]) == other.bos_token and other.decode(prompts[1]).count(other.bos_token) == 1
    assistant_tokens_only(prompts, completions, other)


@pytest.mark.model
def test_rllms_own_parser_is_kept_only_where_it_agrees_with_the_template(tokenizer):
    qwen = _retemplated(tokenizer, QWEN_STYLE_TEMPLATE, name="/models/qwen-style-smol")
    parser = chat_parser_for(qwen)
    assert type(parser) is QwenChatTemplateParser  # rLLM has one for this name and it renders as the template
    builder = TurnPromptBuilder(parser, qwen)
    first = builder.prompt_ids(_chat()[:2])
    builder.record(_chat()[:2], first, _reply_ids(qwen, SOLVE))
    assert builder.prompt_ids(_chat(SOLVE)) == _render_ids(qwen, _chat(SOLVE))
    assert parser.parse_completion(_reply_ids(qwen, SOLVE))["content"] == SOLVE
    # a name rLLM maps to Llama on a ChatML template: rLLM's choice disagrees, ours is used
    misnamed = _retemplated(tokenizer, tokenizer.chat_template, name="/models/llama-but-chatml")
    assert type(ChatTemplateParser.get_parser(misnamed)) is LlamaChatTemplateParser
    assert isinstance(chat_parser_for(misnamed), TemplateChatParser)


@pytest.mark.model
def test_a_prepared_model_folder_lets_rllm_build_its_engine_parser(tokenizer, tmp_path):
    from transformers import AutoTokenizer

    from terminal_agent.models.embedded import ensure_embedded_model_cached

    source = Path(ensure_embedded_model_cached())
    prepared = prepare_model_dir_for_rllm(source, tmp_path / "smollm2")
    assert prepared == tmp_path / "smollm2" and (prepared / "model.safetensors").is_symlink()
    loaded = AutoTokenizer.from_pretrained(str(prepared))
    assert type(ChatTemplateParser.get_parser(loaded)) is ChatTemplateParser  # what VerlEngine() runs: passes now
    assert original_chat_template(loaded.chat_template) == tokenizer.chat_template
    assert rllm_check_safe_chat_template(loaded.chat_template) == loaded.chat_template  # idempotent
    for messages in (_chat(SOLVE), _chat(SOLVE)[1:], _chat()[:2]):  # every conversation renders as before
        assert loaded.apply_chat_template(messages, tokenize=False) == tokenizer.apply_chat_template(messages, tokenize=False)
    ours = chat_parser_for(loaded)  # rLLM's generic parser has no parse_completion: ours, on the original template
    assert isinstance(ours, TemplateChatParser) and "SmolLM" in ours.parse(_chat()[1:2], is_first_msg=True)
    assert prepare_model_dir_for_rllm(prepared, tmp_path / "again") == prepared  # rLLM accepts it as it is
    # rLLM's verl transform masks every pad id as padding: SmolLM2 pads with <|im_end|>, the end of each turn;
    # the prepared folder pads with a special token no rendered conversation holds
    assert tokenizer.pad_token == "<|im_end|>" and loaded.pad_token == "<|endoftext|>"
    rendered = loaded(loaded.apply_chat_template(_chat(SOLVE), tokenize=False), add_special_tokens=False)["input_ids"]
    assert loaded.pad_token_id not in rendered and tokenizer.pad_token_id in rendered


# --- the client and the workflow over a token-in-token-out engine ----------------------------------
class ScriptedTokenEngine(RolloutEngine):
    """Token in, token out, like verl's VerlEngine: scripted replies come back as sampled ids.

    A reply given as ``(text, "length")`` is cut (no end token). Rendering a chat is refused: the
    client must build the prompt ids itself.
    """

    def __init__(self, tokenizer, replies):
        super().__init__()
        self.tokenizer = tokenizer
        self.replies = list(replies)
        self.calls: list[tuple[list[int], dict]] = []
        self.weight_version = 7

    @property
    def supports_token_in_token_out(self) -> bool:
        return True

    async def get_token_output_from_token_input(self, token_input, **kwargs):
        self.calls.append((list(token_input), dict(kwargs)))
        reply = self.replies.pop(0)
        text, cut = (reply[0], True) if isinstance(reply, tuple) else (reply, False)
        ids = _reply_ids(self.tokenizer, text, cut=cut)
        return SimpleNamespace(token_ids=ids, log_probs=[-0.25] * len(ids), stop_reason="length" if cut else "stop")

    async def _get_model_response(self, messages, **kwargs):
        raise AssertionError("the client must not ask the engine to render the chat")


@pytest.fixture()
def engine_loop():
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield loop
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)
    loop.close()


@pytest.mark.model
def test_the_client_renders_token_ids_itself_and_builds_rllms_model_output(tokenizer, engine_loop):
    engine = ScriptedTokenEngine(tokenizer, [SOLVE, (CUT, "length"), FINISH])
    client = RolloutEngineModelClient(engine, engine_loop, application_id="uid-1")
    assert client.token_in_token_out and isinstance(client.chat_parser, TemplateChatParser)
    responses = []
    for k in range(3):
        responses.append(client.complete(_chat(SOLVE, CUT)[: 2 + 2 * k], max_tokens=64, tools=[]))
    prompts = [call[0] for call in engine.calls]
    completions = [list(output.completion_ids) for output in client.outputs]
    assert [output.prompt_ids for output in client.outputs] == prompts
    assistant_tokens_only(prompts, completions, tokenizer)  # each prompt extends the last prompt + completion
    for k, prompt in enumerate(prompts):
        assert prompt == _render_ids(tokenizer, _chat(SOLVE, CUT)[: 2 + 2 * k])
    for _, kwargs in engine.calls:  # engine keys and sampling go through; parser-only keys do not
        assert kwargs == {"enforce_max_prompt_length": False, "application_id": "uid-1", "max_tokens": 64}
    solve, cut, finish = client.outputs
    assert (solve.text, solve.content, solve.reasoning, solve.finish_reason) == (SOLVE, SOLVE, "", "stop")
    assert (cut.content, cut.finish_reason) == (CUT, "length") and finish.content == FINISH
    assert solve.logprobs == [-0.25] * len(solve.completion_ids) and solve.weight_version == 7
    assert solve.prompt_length == len(prompts[0]) and solve.completion_length == len(solve.completion_ids)
    assert responses[0] == model_output_to_response(solve) and responses[1].finish_reason == "length"


def test_token_in_token_out_can_be_required_or_switched_off(tokenizer, engine_loop):
    from terminal_agent.errors import ConfigError
    from terminal_agent.models.scripted import ScriptedModelClient
    from terminal_agent.training.verl.rllm_engines import ModelClientRolloutEngine

    chat_only = ModelClientRolloutEngine(ScriptedModelClient([SOLVE]), tokenizer)
    assert not RolloutEngineModelClient(chat_only, engine_loop).token_in_token_out
    with pytest.raises(ConfigError, match="token_in_token_out"):
        RolloutEngineModelClient(chat_only, engine_loop, token_in_token_out=True)
    off = RolloutEngineModelClient(ScriptedTokenEngine(tokenizer, []), engine_loop, token_in_token_out=False)
    assert not off.token_in_token_out and off.chat_parser is None


@pytest.mark.docker
@pytest.mark.model
def test_the_workflow_trains_on_token_ids_from_a_token_in_token_out_engine(task_image, tokenizer, run_id):
    from rllm.engine.agent_workflow_engine import AgentWorkflowEngine
    from rllm.workflows.workflow import TerminationReason

    from terminal_agent.compat.rllm import step_metadata
    from terminal_agent.training.verl.rllm_workflow import TerminalTaskWorkflow

    replies = [LOOK, SOLVE, FINISH]
    rollout_engine = ScriptedTokenEngine(tokenizer, replies)
    engine = AgentWorkflowEngine(
        workflow_cls=TerminalTaskWorkflow,
        workflow_args={"env_args": {"run_id": run_id}, "max_tokens_per_turn": 256},
        rollout_engine=rollout_engine,
        n_parallel_tasks=1,
        retry_limit=1,
        raise_on_error=False,
    )
    try:
        [episode] = asyncio.run(engine.execute_tasks([flat_task()], task_ids=[TASK.task_id]))
        workflow = engine.workflow_queue.get_nowait()
    finally:
        engine.shutdown()
    assert episode.termination_reason is TerminationReason.ENV_DONE
    [trajectory] = episode.trajectories
    assert trajectory.reward == pytest.approx(1.0) and len(trajectory.steps) == 3
    assert isinstance(workflow.chat_parser, TemplateChatParser)  # built once, kept for the next episode
    prompts = [call[0] for call in rollout_engine.calls]
    assert [step.prompt_ids for step in trajectory.steps] == prompts  # what was sampled from is what trains
    for step, (_, kwargs) in zip(trajectory.steps, rollout_engine.calls):
        assert step.model_output is not None and step.logprobs == [-0.25] * len(step.response_ids)
        assert step_metadata(step)["finish_reason"] == "stop"
        assert kwargs["max_tokens"] == 256 and kwargs["enforce_max_prompt_length"] is False
        assert kwargs["application_id"] == episode.id
    # the agent's own chat, rendered fresh by the template, is exactly the last prompt the engine saw
    assert prompts[-1] == _render_ids(tokenizer, trajectory.steps[-1].chat_completions[:-1])
    response, mask = assistant_tokens_only(prompts, [step.response_ids for step in trajectory.steps], tokenizer)
    assert masked_text(response, mask, tokenizer) == "".join(reply + "<|im_end|>" for reply in replies)


def test_a_chat_parser_named_in_workflow_args_is_built_for_the_engines_tokenizer(tokenizer):
    from concurrent.futures import ThreadPoolExecutor

    from terminal_agent.errors import ConfigError
    from terminal_agent.training.verl.rllm_workflow import TerminalTaskWorkflow

    engine = ScriptedTokenEngine(tokenizer, [])
    with ThreadPoolExecutor(1) as executor:
        named = TerminalTaskWorkflow(engine, executor, chat_parser="terminal_agent.training.verl.rllm_chat_parser:TemplateChatParser")
        parser = named._configured_chat_parser()
        assert isinstance(parser, TemplateChatParser) and parser.tokenizer is tokenizer
        assert TerminalTaskWorkflow(engine, executor)._configured_chat_parser() is None  # the client picks one
        with pytest.raises(ConfigError, match="package.module:Name"):
            TerminalTaskWorkflow(engine, executor, chat_parser="no_such_module:Parser")._configured_chat_parser()
