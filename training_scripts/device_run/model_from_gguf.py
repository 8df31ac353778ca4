#!/usr/bin/env python3
"""The embedded SmolLM2 as a bf16 transformers directory, rebuilt from its GGUF, checked tensor by tensor.

    python training_scripts/device_run/model_from_gguf.py manifest DIR -o MODEL_MANIFEST.json    # where it exists
    python training_scripts/device_run/model_from_gguf.py build GGUF FILES_DIR MODEL_MANIFEST.json -o OUT_DIR

The converted directory is 538 MB in float32 and 269 MB in bf16; the GGUF it comes from is 98 MB. So
the GGUF travels and the directory is rebuilt where it is needed: ``build`` converts it with the project's
own ``convert_gguf_to_transformers`` (needs the ``gguf`` package), casts to bf16 (the dtype the GPU preset
trains in; the cast is the one ``from_pretrained(dtype=bfloat16)`` makes of the float32 directory), copies
the reference's config, tokenizer and template files over, and compares every tensor's sha256 with
``manifest``'s record of the reference bf16 weights. Exit 0 when all agree, 3 when any differs.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import shutil
import sys
import tempfile
from pathlib import Path

if importlib.util.find_spec("terminal_agent") is None:  # a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))

# the files of a converted directory that are not weights (taken from the reference, not re-derived)
META_FILES = ("config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json", "chat_template.jinja",
              "terminal_agent_source.json")


def tensor_digests(safetensors_file: Path) -> dict[str, str]:
    """sha256 of each stored tensor's bytes (dtype and shape included)."""
    from safetensors import safe_open

    digests = {}
    with safe_open(str(safetensors_file), framework="pt") as handle:
        for name in sorted(handle.keys()):
            tensor = handle.get_tensor(name).contiguous()
            raw = tensor.view(-1).view(dtype=__import__("torch").uint8).numpy().tobytes()
            digests[name] = hashlib.sha256(f"{tensor.dtype}|{tuple(tensor.shape)}|".encode() + raw).hexdigest()
    return digests


def save_bf16(source_dir: Path, out_dir: Path) -> None:
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(source_dir, dtype=torch.bfloat16)
    model.save_pretrained(out_dir)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    record = sub.add_parser("manifest", help="record the reference: its bf16 tensor digests and its meta files")
    record.add_argument("model_dir", help="the converted reference directory (float32)")
    record.add_argument("-o", "--output", required=True, help="manifest JSON to write; the meta files go beside it")
    build = sub.add_parser("build", help="rebuild the bf16 directory from the GGUF and check it")
    build.add_argument("gguf")
    build.add_argument("files_dir", help="the reference's meta files (config, tokenizer, template)")
    build.add_argument("manifest")
    build.add_argument("-o", "--output", required=True, help="the bf16 model directory to write")
    args = parser.parse_args(argv)

    if args.command == "manifest":
        out = Path(args.output)
        files = out.parent / "model_files"
        files.mkdir(parents=True, exist_ok=True)
        for name in META_FILES:
            if (Path(args.model_dir) / name).is_file():
                shutil.copy2(Path(args.model_dir) / name, files / name)
        with tempfile.TemporaryDirectory() as scratch:
            save_bf16(Path(args.model_dir), Path(scratch))
            digests = tensor_digests(Path(scratch) / "model.safetensors")
        out.write_text(json.dumps({"dtype": "bfloat16", "tensors": digests}, indent=1, sort_keys=True) + "\n")
        print(f"{len(digests)} tensors recorded in {out}; meta files in {files}")
        return 0

    from terminal_agent.models.embedded import convert_gguf_to_transformers

    out = Path(args.output)
    expected = json.loads(Path(args.manifest).read_text())["tensors"]
    with tempfile.TemporaryDirectory(dir=out.parent if out.parent.exists() else None) as scratch:
        converted = convert_gguf_to_transformers(Path(args.gguf), Path(scratch) / "fp32")
        if out.exists():
            shutil.rmtree(out)
        save_bf16(converted, out)
    for name in META_FILES:
        if (Path(args.files_dir) / name).is_file():
            shutil.copy2(Path(args.files_dir) / name, out / name)
    got = tensor_digests(out / "model.safetensors")
    differ = sorted(name for name in set(expected) | set(got) if expected.get(name) != got.get(name))
    if differ:
        print(f"WARNING: {len(differ)} of {len(expected)} tensors differ from the reference: {differ[:8]}")
        return 3
    print(f"model directory {out}: all {len(got)} bf16 tensors identical to the reference")
    return 0


if __name__ == "__main__":
    sys.exit(main())
