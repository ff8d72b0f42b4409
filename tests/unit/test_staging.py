"""An instance folder is written aside and replaces the earlier one whole, or not at all."""

from __future__ import annotations

from pathlib import Path

from issuebench.harness import staging
from issuebench.interrupts import StopFlag, working_for


def finished(folder: Path, verdict: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "result.json").write_text(verdict)
    (folder / "run_instance.log").write_text(f"{verdict} log\n")
    return folder


def test_publish_replaces_the_earlier_folder_whole_and_carries_its_log_on(tmp_path):
    final = finished(tmp_path / "m" / "a__b-1", "old")
    (final / "wider_tests.log").write_text("of the old verdict")
    work = staging.open_staging(final)
    assert work.name == ".a__b-1.partial" and (work / "run_instance.log").read_text() == "old log\n"
    (work / "result.json").write_text("new")
    assert staging.publish(work, final)
    assert sorted(p.name for p in final.iterdir()) == ["result.json", "run_instance.log"]
    assert (final / "result.json").read_text() == "new"
    assert [p.name for p in final.parent.iterdir()] == ["a__b-1"]


def test_once_the_run_is_interrupted_nothing_is_published_and_the_earlier_folder_stays(tmp_path):
    final = finished(tmp_path / "m" / "a__b-1", "old")
    flag = StopFlag()
    with working_for(flag):
        work = staging.open_staging(final)
        (work / "result.json").write_text("cut short by the interrupt")
        flag.stop()
        assert not staging.publish(work, final)
        staging.drop_staging(final)
    assert (final / "result.json").read_text() == "old"
    assert [p.name for p in final.parent.iterdir()] == ["a__b-1"]


def test_a_stop_between_the_two_renames_brings_the_earlier_folder_back(tmp_path):
    final = finished(tmp_path / "m" / "a__b-1", "old")
    work = staging.open_staging(final)
    final.rename(final.with_name(".a__b-1.previous"))  # where publish was when the signal came
    staging.drop_staging(final)
    assert (final / "result.json").read_text() == "old" and not work.exists()


def test_sweep_removes_what_a_crash_left_and_keeps_finished_folders(tmp_path):
    model = tmp_path / "m"
    finished(model / "a__b-1", "kept")
    staging.open_staging(model / "a__b-2")  # crashed while its first run was in flight
    old = finished(model / "a__b-3", "old")
    staging.open_staging(old)
    old.rename(old.with_name(".a__b-3.previous"))  # crashed mid-swap
    assert staging.sweep(model) == 2
    assert sorted(p.name for p in model.iterdir()) == ["a__b-1", "a__b-3"]
    assert (model / "a__b-3" / "result.json").read_text() == "old"


def test_unfinished_tells_our_interrupted_folders_from_results_and_reference_folders(tmp_path):
    ours = tmp_path / "x"
    ours.mkdir()
    (ours / "run_instance.log").write_text("2024-05-01 12:00:00 [+   0.01s] evaluating x\n")
    assert staging.unfinished(ours)
    (ours / "result.json").write_text("{}")
    assert not staging.unfinished(ours)
    reference = tmp_path / "y"
    reference.mkdir()
    (reference / "run_instance.log").write_text("2024-05-01 12:00:00,123 - INFO - Patch Apply Failed\n")
    assert not staging.unfinished(reference)
