"""The evaluation harness: one instance end to end, and many in parallel."""

from issuebench.harness.context import EvalContext, build_context
from issuebench.harness.instance import TestRun, evaluate_instance, run_tests
from issuebench.harness.options import EvalOptions
from issuebench.harness.run import EvaluationResult, run_evaluation

__all__ = ["EvalContext", "EvalOptions", "EvaluationResult", "TestRun", "build_context", "evaluate_instance",
           "run_evaluation", "run_tests"]
