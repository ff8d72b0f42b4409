"""OPTIONAL MODEL: ask any OpenAI-compatible chat endpoint for a fix, as JSON.

Calls go through the project's one model client (issuebench.llm: the `openai` package, usage,
cost, retries with backoff). The API key comes from the environment (ISSUEBENCH_MODEL_API_KEY,
else OPENAI_API_KEY). The answer is parsed defensively: whatever the model says, only the known
fields are used and each is type-checked.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import Any

from issuebench.errors import InputError
from issuebench.llm import OpenAIModel, RetryPolicy

SYSTEM_PROMPT = (
    "You fix the installation and test commands of a Python repository at a past date. "
    "Installs use uv with an exclude-newer date cutoff; the repository is installed with the "
    "install commands; the tests run offline. Answer with ONE JSON object and nothing else, with "
    "any of these keys: packages_add (list of requirement strings), packages_remove (list of "
    "distribution names), python (a version like \"3.9\"), install (list of shell commands "
    "replacing the install commands), test_cmd (string), env_vars (object), reason (string)."
)


@dataclass
class ModelFix:
    packages_add: list[str] = field(default_factory=list)
    packages_remove: list[str] = field(default_factory=list)
    python: str | None = None
    install: list[str] | None = None
    test_cmd: str | None = None
    env_vars: dict[str, str] = field(default_factory=dict)
    reason: str = ""

    @property
    def empty(self) -> bool:
        return not (self.packages_add or self.packages_remove or self.python or self.install is not None
                    or self.test_cmd or self.env_vars)


class ModelClient:
    def __init__(self, base_url: str, model: str, api_key: str | None = None, timeout: float = 120.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key if api_key is not None else (
            os.environ.get("ISSUEBENCH_MODEL_API_KEY") or os.environ.get("OPENAI_API_KEY"))
        self.timeout = timeout
        self._llm = None  # the shared client (issuebench.llm.OpenAIModel), made on first use

    @classmethod
    def from_arg(cls, value: str) -> ModelClient:
        """`URL#NAME`, or `URL/NAME` (the model name is what follows /v1/, else the last segment)."""
        if "#" in value:
            base, name = value.split("#", 1)
        elif "/v1/" in value:
            base, name = value.split("/v1/", 1)
            base += "/v1"
        else:
            base, _, name = value.rstrip("/").rpartition("/")
        if not base.startswith(("http://", "https://")) or not name:
            raise InputError(None, f"--model {value!r} is not URL/NAME", field="model",
                             hint="e.g. --model http://127.0.0.1:8000/v1/my-model (or URL#NAME)")
        return cls(base, name)

    def chat(self, messages: list[dict[str, str]]) -> str:

        if self._llm is None:
            # Few, short retries: setup waits on each answer, and a later round can ask again.
            self._llm = OpenAIModel(self.model, base_url=self.base_url, api_key=self.api_key or "none",
                                    timeout=self.timeout, retry=RetryPolicy(retries=2, backoff=0.5))
        return self._llm.query(messages).content

    def propose_fix(self, *, error_excerpt: str, files: dict[str, str], spec_json: str,
                    history: list[str]) -> ModelFix | None:
        sections = [f"### {path}\n{text[:3000]}" for path, text in list(files.items())[:12]]
        user = (f"Current setup (EnvSpec JSON):\n{spec_json}\n\n"
                f"Fixes already tried:\n" + ("\n".join(history) or "none") + "\n\n"
                f"Error excerpt:\n{error_excerpt[-4000:]}\n\nRepository files:\n" + "\n\n".join(sections))
        answer = self.chat([{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}])
        return parse_fix(answer)


def parse_fix(answer: str) -> ModelFix | None:
    """The JSON object in a model's answer (fenced or bare), as a ModelFix; None if there is none."""
    data = _first_json_object(answer)
    if not isinstance(data, dict):
        return None
    fix = ModelFix(
        packages_add=_str_list(data.get("packages_add")),
        packages_remove=_str_list(data.get("packages_remove")),
        python=str(data["python"]) if isinstance(data.get("python"), (str, int, float)) else None,
        install=_str_list(data["install"]) if isinstance(data.get("install"), list) else None,
        test_cmd=data.get("test_cmd") if isinstance(data.get("test_cmd"), str) else None,
        env_vars={str(k): str(v) for k, v in data.get("env_vars", {}).items()}
        if isinstance(data.get("env_vars"), dict) else {},
        reason=str(data.get("reason", ""))[:300],
    )
    if fix.python and not re.fullmatch(r"[23]\.\d{1,2}", fix.python):
        fix.python = None
    return None if fix.empty else fix


def _first_json_object(text: str) -> Any:
    fenced = re.search(r"```(?:json)?\s*(\{.*?\})\s*```", text, re.DOTALL)
    candidates = [fenced.group(1)] if fenced else []
    start = text.find("{")
    if start >= 0:
        candidates.append(text[start:text.rfind("}") + 1])
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except json.JSONDecodeError:
            continue
    return None


def _str_list(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [str(v) for v in value if isinstance(v, (str, int, float))]
    return []
