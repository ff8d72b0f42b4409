"""The evaluation harness: one instance end to end, and many in parallel."""

from issuebench.harness.instance import EvalContext, TestRun, evaluate_instance, run_tests
from issuebench.harness.run import EvaluationResult, build_context, run_evaluation

__all__ = ["EvalContext", "EvaluationResult", "TestRun", "build_context", "evaluate_instance",
           "run_evaluation", "run_tests"]
