"""Statuses are str enums everywhere, and each reads as the plain string it replaced: in files
(JSON), messages (f-strings, str) and lookups, so every file format stays as it was."""

from __future__ import annotations

import json

import pytest

from issuebench.agent import AGENT_STATUSES, INFRA_STATUSES, ExitStatus, Trajectory
from issuebench.collect import Rejection, validate
from issuebench.collect import pipeline as P
from issuebench.models import StrStatus, Task
from issuebench.sandbox import RunResult, RunStatus
from issuebench.synth.validate import STATUSES, CandidateStatus

VOCABULARIES = {
    RunStatus: ["ok", "timeout", "memory_limit", "process_limit", "output_limit", "file_limit", "sandbox_failed"],
    Rejection: ["no linked issue", "issue lookup failed", "no test change", "no code change",
                "test change is only comments", "diff failed",
                "install failed", "gold does not apply", "test patch does not apply", "no fail-to-pass test",
                "gold breaks tests", "timeout", "test run failed"],
    CandidateStatus: ["kept", "syntax_error", "equivalent", "duplicate", "not_covered", "nothing_fails",
                      "timeout", "not_confirmed", "error"],
    ExitStatus: ["submitted", "step_limit", "cost_limit", "wall_limit", "api_error", "env_failed",
                 "not_started", "error", "worker_lost"],
}


@pytest.mark.parametrize("enum", list(VOCABULARIES), ids=lambda e: e.__name__)
def test_each_vocabulary_is_a_str_enum_with_its_old_values(enum):
    assert issubclass(enum, StrStatus) and issubclass(enum, str)
    assert [m.value for m in enum] == VOCABULARIES[enum]
    for member in enum:  # text made from a member is its value, on every Python this supports
        assert f"{member}" == str(member) == "{}".format(member) == member.value  # noqa: UP032
        assert json.dumps({member: [member]}) == json.dumps({member.value: [member.value]})
        assert {member.value: 1}[member] == 1 and member == member.value


def test_the_module_names_are_the_members():
    assert P.NO_TEST_CHANGE is Rejection.NO_TEST_CHANGE
    assert tuple(CandidateStatus) == STATUSES
    assert tuple(ExitStatus) == AGENT_STATUSES + INFRA_STATUSES
    assert RunResult(0, "", "ok", "", 0.0).status is RunStatus.OK  # a plain string becomes its member
    assert Trajectory("i", "m").exit_status is ExitStatus.ERROR


def test_a_verdicts_reason_is_a_rejection_and_its_table_reads_as_before():
    task = Task(instance_id="o__r-1", repo="o/r", base_commit="0" * 40, patch="", test_patch="x",
                problem_statement="p")
    result = validate([task], lambda *_: None)
    assert result.verdicts[0].reason is Rejection.NO_CODE_CHANGE
    assert json.dumps(result.table.to_dict()["rejected"]) == '{"no code change": 1}'
    assert "rejected: no code change | 1 |" in result.table.markdown()  # made by an f-string
