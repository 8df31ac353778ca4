"""Secrets kept out of what a launch shows and saves.

:func:`is_secret_name` says which variable or key names hold a secret (``HF_TOKEN``, ``LITE_LLM_API_KEY``; not
``max_tokens_per_turn``); :func:`redact` and :func:`redact_mapping` replace with :data:`REDACTED` the values under
such keys, the secret values of the environment wherever they appear, and the passwords of URLs. The launcher's
dry run and the composed rLLM/verl config it saves beside a run go through them.
"""

from __future__ import annotations

import os
import re
from typing import Any, TypeVar

REDACTED = "<redacted>"
#: A name is secret when its last word is one of these (HF_TOKEN, GITHUB_PAT) ...
_SECRET_LAST_WORDS = {"apikey", "token", "secret", "password", "passwd", "auth", "authorization", "cookie",
                      "credential", "credentials", "pat"}
#: ... or it ends in KEY after one of these (LITE_LLM_API_KEY; not verl's prompt_key) ...
_SECRET_KEY_QUALIFIERS = {"api", "access", "secret", "private", "auth", "signing", "encryption", "license"}
#: ... or any of its words is one of these (AWS_SECRET_ACCESS_KEY_ID).
_SECRET_ANY_WORDS = {"secret", "password", "passwd", "credential", "credentials", "apikey"}
_URL_USERINFO = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://)[^/\s:@]+:[^/\s@]+@", re.IGNORECASE)


def is_secret_name(name: str) -> bool:
    """Whether a variable or key called ``name`` holds a secret (``max_tokens_per_turn`` does not)."""
    words = [word for word in re.split(r"[^a-z0-9]+", name.lower()) if word]
    if not words:
        return False
    if words[-1] in _SECRET_LAST_WORDS or any(word in _SECRET_ANY_WORDS for word in words):
        return True
    return words[-1] == "key" and (len(words) == 1 or words[-2] in _SECRET_KEY_QUALIFIERS)


def _secret_values(environ: dict[str, str]) -> list[str]:
    return sorted({value for name, value in environ.items() if is_secret_name(name) and len(value) >= 6},
                  key=len, reverse=True)


_Key = TypeVar("_Key")


def redact(value: Any, secrets: list[str] | None = None) -> Any:
    """``value`` with secrets replaced: values under secret-looking keys, known secret values, URL passwords."""
    secrets = _secret_values(dict(os.environ)) if secrets is None else secrets
    if isinstance(value, dict):
        return redact_mapping(value, secrets)
    if isinstance(value, (list, tuple)):
        return [redact(item, secrets) for item in value]
    if isinstance(value, str):
        for secret in secrets:
            value = value.replace(secret, REDACTED)
        return _URL_USERINFO.sub(lambda match: match.group("scheme") + REDACTED + "@", value)
    return value


def redact_mapping(mapping: dict[_Key, Any], secrets: list[str] | None = None) -> dict[_Key, Any]:
    """:func:`redact` of a mapping, its keys kept (the value under a secret-looking key replaced whole)."""
    secrets = _secret_values(dict(os.environ)) if secrets is None else secrets
    return {key: (REDACTED if isinstance(key, str) and is_secret_name(key) and item not in (None, "", {}, [])
                  else redact(item, secrets)) for key, item in mapping.items()}


__all__ = ["REDACTED", "is_secret_name", "redact", "redact_mapping"]
