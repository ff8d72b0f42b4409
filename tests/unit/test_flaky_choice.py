"""Which of a patch's repeated runs gives the verdict (harness.flaky.with_reruns)."""

from __future__ import annotations

from issuebench.harness.flaky import only_pass_to_pass_fail, with_reruns
from issuebench.harness.runlog import InstanceLog
from issuebench.harness.test_run import TestRun
from issuebench.models import InstanceReport, InstanceStatus, ListResult, TestsStatus


def _attempt(status: InstanceStatus, p2p_failing: list[str], f2p_failing: tuple[str, ...] = ()):
    tests = TestsStatus(FAIL_TO_PASS=ListResult(success=["t_fix"] if not f2p_failing else [],
                                                failure=list(f2p_failing)),
                        PASS_TO_PASS=ListResult(success=["t_ok"], failure=p2p_failing))
    report = InstanceReport(instance_id="a__b-1", model_name_or_path="m", status=status,
                            resolved=status is InstanceStatus.RESOLVED, tests_status=tests)
    return TestRun(status=status, output=f"{status.value} {p2p_failing}"), report


def _runs(*attempts, reruns: int = 3):
    first, *rest = attempts
    queue = list(rest)
    calls = []

    def again():
        calls.append(1)
        return queue.pop(0)

    (_run, report), others = with_reruns(first, again, reruns, InstanceLog(None))
    return report, others, len(calls)


def test_a_later_resolved_run_wins_and_names_only_the_tests_that_healed() -> None:
    report, others, calls = _runs(_attempt(InstanceStatus.UNRESOLVED, ["t_flaky", "t_net"]),
                                  _attempt(InstanceStatus.RESOLVED, []))
    assert calls == 1 and report.status is InstanceStatus.RESOLVED
    assert report.notes == ["flaky: 2 PASS_TO_PASS test(s) failed in an earlier run of this patch and "
                            "passed when run again: t_flaky, t_net"]
    assert list(others) == [1]


def test_needs_network_beats_a_later_unresolved_run_and_is_not_repeated() -> None:
    # Run 1 fails a flaky test and an internet test; run 2 only the internet test (needs_network),
    # which no repeat heals, so there is no run 3 and run 2 gives the verdict.
    report, others, calls = _runs(_attempt(InstanceStatus.UNRESOLVED, ["t_flaky", "t_net"]),
                                  _attempt(InstanceStatus.NEEDS_NETWORK, ["t_net"]),
                                  _attempt(InstanceStatus.RESOLVED, []))
    assert calls == 1
    assert report.status is InstanceStatus.NEEDS_NETWORK
    assert any("t_flaky" in n and "t_net" not in n.split(": ", 2)[-1] for n in report.notes), report.notes
    assert list(others) == [1]


def test_when_no_run_is_better_the_first_stands_and_the_rest_are_kept() -> None:
    report, others, calls = _runs(_attempt(InstanceStatus.UNRESOLVED, ["t_a"]),
                                  _attempt(InstanceStatus.UNRESOLVED, ["t_b"]), reruns=1)
    assert calls == 1
    assert report.tests_status.PASS_TO_PASS.failure == ["t_a"] and report.notes == []
    assert list(others) == [2]


def test_a_run_failing_a_fail_to_pass_test_or_only_internet_tests_is_not_repeated() -> None:
    assert not only_pass_to_pass_fail(_attempt(InstanceStatus.UNRESOLVED, ["t_ok"], ("t_fix",))[1])
    assert not only_pass_to_pass_fail(_attempt(InstanceStatus.NEEDS_NETWORK, ["t_net"])[1])
    assert only_pass_to_pass_fail(_attempt(InstanceStatus.UNRESOLVED, ["t_ok"])[1])
    _, _, calls = _runs(_attempt(InstanceStatus.UNRESOLVED, ["t_ok"], ("t_fix",)),
                        _attempt(InstanceStatus.RESOLVED, []))
    assert calls == 0
