"""verl's fused log-prob forward (``use_fused_kernels``, torch backend) on the embedded model with packed rows.

Run by ``test_verl_fused_logprobs.py`` in an interpreter where verl imports (the verl launch venv). The model
(SmolLM2-135M, float32, CPU) gets the project's packed attention; the rows are packed as verl's padding-free
forward packs them. First the plain forward: logits, then each next token's log-softmax. Then verl's own
``apply_monkey_patch`` with the arguments its FSDP engine passes for ``model.fused_kernels: torch``, and the
call the engine makes (``temperature``, ``return_dict``, ``shift_labels``). Prints one JSON line: the largest
differences of the log-probs and of two weights' gradients, and the fused path's entropy range.
"""

from __future__ import annotations

import json
import sys

import torch

ROW_LENGTHS = [17, 40, 9, 26]


def main() -> int:
    import terminal_agent.training.verl.packed_attention  # noqa: F401  (registers the attention, as external_lib does)
    from transformers import AutoModelForCausalLM
    from verl.models.transformers.monkey_patch import apply_monkey_patch

    from terminal_agent.models.embedded import ensure_embedded_model_cached
    from terminal_agent.training.verl.attention_checks import PACKED_ATTENTION_NAME

    model = AutoModelForCausalLM.from_pretrained(ensure_embedded_model_cached(), dtype=torch.float32,
                                                 attn_implementation=PACKED_ATTENTION_NAME)
    generator = torch.Generator().manual_seed(7)
    rows = [torch.randint(0, model.config.vocab_size, (length,), generator=generator) for length in ROW_LENGTHS]
    input_ids = torch.cat(rows)[None]
    position_ids = torch.cat([torch.arange(length) for length in ROW_LENGTHS])[None]
    rolled = torch.roll(input_ids, shifts=-1, dims=1)
    weights = ["model.layers.3.self_attn.q_proj.weight", "model.layers.20.mlp.up_proj.weight"]

    def gradients() -> list[torch.Tensor]:
        parameters = dict(model.named_parameters())
        found = [parameters[name].grad.clone() for name in weights]
        model.zero_grad(set_to_none=True)
        return found

    logits = model(input_ids=input_ids, attention_mask=None, position_ids=position_ids, use_cache=False).logits[0]
    plain = torch.log_softmax(logits.float(), dim=-1).gather(-1, rolled[0, :, None])[:, 0]
    plain.sum().backward()
    plain_gradients = gradients()

    apply_monkey_patch(model=model, ulysses_sp_size=1, use_remove_padding=True, use_fused_kernels=True,
                       fused_kernels_backend="torch")
    output = model(input_ids=input_ids, attention_mask=None, position_ids=position_ids, use_cache=False,
                   temperature=1.0, return_dict=True, shift_labels=rolled)
    fused = output.log_probs[0] if output.log_probs.dim() == 2 else output.log_probs
    fused.sum().backward()
    fused_gradients = gradients()
    # each row's last token predicts the next row's first: neither path trains on it, so compare within rows
    keep = torch.ones(len(plain), dtype=torch.bool)
    keep[torch.tensor(ROW_LENGTHS).cumsum(0) - 1] = False
    result = {
        "log_prob_gap": float((plain - fused.detach())[keep].abs().max()),
        "gradient_relative_gaps": [float((a - b).norm() / a.norm()) for a, b in zip(plain_gradients, fused_gradients)],
        "entropy_min": float(output.entropy.min()), "entropy_max": float(output.entropy.max()),
        "forward_class": type(model).forward.__module__,
    }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
