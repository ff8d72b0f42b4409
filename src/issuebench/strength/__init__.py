"""How much a "resolved" verdict says: tests beyond the graded lists, and the strength of a task's tests.

- `wider`: after a run, every resolved prediction's wider tests under gold and under the candidate
  ("resolved, breaks N other tests"); the official rate stays, a stricter one stands beside it.
- `test_strength`: mutants of the gold fix, and the share the task's own tests reject.
"""

from issuebench.strength.post import after_eval, lines
from issuebench.strength.read import wider_counts
from issuebench.strength.select import SCOPES, Scope
from issuebench.strength.strength_report import run_test_strength, strength_json, strength_text
from issuebench.strength.wider import WiderResult, summary_section, wider_tests_pass

__all__ = [
    "SCOPES",
    "Scope",
    "WiderResult",
    "after_eval",
    "lines",
    "run_test_strength",
    "strength_json",
    "strength_text",
    "summary_section",
    "wider_counts",
    "wider_tests_pass",
]
