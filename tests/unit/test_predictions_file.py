"""A run's predictions file keeps one row per instance id, whatever the reruns and kills."""

from __future__ import annotations

import json

from issuebench.predictions_file import PredictionsFile


def test_rows_of_instances_run_again_and_cut_lines_make_room(tmp_path):
    path = tmp_path / "preds.jsonl"
    rows = [{"instance_id": "a", "model_patch": "1"}, {"instance_id": "b", "model_patch": "2"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + '{"instance_id": "c", "model_pa')  # a kill
    preds = PredictionsFile(path)
    assert preds.ids() == {"a", "b"}  # c's cut line counts as no row: c runs again
    preds.make_room(["a", "c"])
    assert path.read_text() == json.dumps(rows[1]) + "\n"
    for row in ({"instance_id": "a", "model_patch": "3"}, {"instance_id": "c", "model_patch": "4"}):
        preds.append(row)
    assert [json.loads(line)["instance_id"] for line in path.read_text().splitlines()] == ["b", "a", "c"]


def test_nothing_to_drop_leaves_the_file_untouched(tmp_path):
    path = tmp_path / "preds.jsonl"
    PredictionsFile(path).make_room(["a"])  # no file yet: none is made
    assert not path.exists()
    path.write_text('{"instance_id": "b"}\n')
    before = path.stat().st_mtime_ns
    PredictionsFile(path).make_room(["a"])
    assert path.stat().st_mtime_ns == before
