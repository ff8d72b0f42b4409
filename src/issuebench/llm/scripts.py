"""Replay scripts made from tasks: a model that "solves" each task with its gold patch.

Used by the tests and by `issuebench demo` to drive `infer` and `agent` end to end without a
real model. Each conversation is recognised by the start of the task's problem statement, which
every prompt carries verbatim.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from issuebench.models import Task

SUBMIT_SENTINEL = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
MATCH_CHARS = 200


def conversation_key(task: Task) -> str:
    return task.problem_statement.strip()[:MATCH_CHARS]


def _bash(thought: str, command: str) -> str:
    return f"THOUGHT: {thought}\n\n```bash\n{command}\n```"


def agent_answers(task: Task, *, test_command: str = "python -m unittest 2>&1 | tail -n 3") -> list[str]:
    patch = task.patch if task.patch.endswith("\n") else task.patch + "\n"
    return [
        _bash("Let me see what the repository holds.", "git ls-files | head -n 20"),
        _bash("I will write the fix as a patch and apply it.",
              f"cat > /tmp/fix.diff <<'ISSUEBENCH_EOF'\n{patch}ISSUEBENCH_EOF\ngit apply /tmp/fix.diff && git status --short"),
        _bash("The existing tests should still pass.", test_command),
        _bash("The fix is in place; submitting.", f"echo {SUBMIT_SENTINEL}"),
    ]


def infer_answer(task: Task) -> str:
    return f"The problem is fixed by the following change.\n\n<patch>\n{task.patch.rstrip()}\n</patch>\n"


def solve_script(tasks: Iterable[Task], *, mode: str = "agent", model: str = "replay") -> dict[str, Any]:
    """A replay script answering each task's conversation with its gold patch (mode: agent | infer)."""
    conversations = []
    for task in tasks:
        answers = agent_answers(task) if mode == "agent" else [infer_answer(task)]
        conversations.append({"match": conversation_key(task), "answers": answers})
    return {"model": model, "conversations": conversations,
            "default": [_bash("I do not know this task; submitting nothing.", f"echo {SUBMIT_SENTINEL}")]
            if mode == "agent" else ["I cannot solve this."]}
