"""Model rewrite: a model re-implements a function from its signature and docstring alone.

The client is any object with `query(messages)` returning text or an object with `.content`
(the project's OpenAI-compatible client has that shape). What comes back replaces the function;
validation keeps it only when tests then fail, as for every other generator.
"""

from __future__ import annotations

import ast
import random
import re
from collections.abc import Iterator
from typing import Any, Protocol

from issuebench.synth.base import Candidate, Change, SynthContext
from issuebench.synth.source import Function, body_without_docstring

SYSTEM = ("You write Python. Implement the function you are given, keeping its exact signature "
          "and docstring. Reply with the whole function in one ```python code block and nothing else.")
_BLOCK = re.compile(r"```(?:python|py)?\s*\n(.*?)```", re.DOTALL)


class QueryClient(Protocol):
    def query(self, messages: list[dict[str, str]]) -> Any: ...


def stub(fn: Function) -> str:
    """The function's signature and docstring, with the body cut."""
    body = body_without_docstring(fn.node)
    first = fn.lines[0]
    text = "".join(fn.index.lines[first - 1:body[0].lineno - 1])
    return text + fn.index.indent_of(body[0].lineno) + "...\n"


def reply_text(reply: Any) -> str:
    return reply if isinstance(reply, str) else str(getattr(reply, "content", "") or "")


def extract_function(text: str, name: str, indent: str) -> str | None:
    """The function called `name` from a reply, re-indented to `indent`."""
    match = _BLOCK.search(text)
    code = match.group(1) if match else text
    lines = code.splitlines(keepends=True)
    import textwrap

    code = textwrap.dedent("".join(lines))
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            chunk = code.splitlines(keepends=True)[first - 1:node.end_lineno]
            out = "".join(indent + line if line.strip() else line for line in chunk)
            return out if out.endswith("\n") else out + "\n"
    return None


class ModelRewrite:
    name = "model"
    phase = "single"

    def candidates(self, ctx: SynthContext) -> Iterator[Candidate]:
        client: QueryClient | None = ctx.client
        if client is None:
            return
        pool = []
        for path, source in sorted(ctx.files.items()):
            pool += [(fn, source) for fn in ctx.functions(path) if ctx.wanted(fn)]
        rng = random.Random(ctx.seed)
        for fn, source in rng.sample(pool, min(len(pool), int(ctx.options.get("model_max", 20)))):
            try:
                reply = client.query([{"role": "system", "content": SYSTEM},
                                      {"role": "user", "content": stub(fn)}])
            except Exception:  # one failed call never stops the run
                continue
            first, last = fn.lines
            new = extract_function(reply_text(reply), fn.node.name, fn.index.indent_of(first))
            if new is None:
                continue
            lines = source.splitlines(keepends=True)
            after = "".join(lines[:first - 1]) + new + "".join(lines[last:])
            yield Candidate(self.name, [Change(fn.path, source, after)], [(fn.path, fn.qualname, *fn.body_lines)],
                            f"model rewrite of {fn.qualname}")
