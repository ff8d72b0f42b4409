import json

import pytest

from issuebench.datasets import load_predictions, load_tasks
from issuebench.errors import InputError

ROW = {"instance_id": "o__r-1", "repo": "o/r", "base_commit": "a" * 40, "patch": "", "test_patch": "",
       "FAIL_TO_PASS": '["t1", "t2"]', "PASS_TO_PASS": ["t3"], "created_at": "2020-01-02T00:00:00Z",
       "version": 1.0}


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_loads_both_row_generations(tmp_path):
    newer = {**ROW, "instance_id": "o__r-2", "image": "img", "eval_type": "fail_only", "log_parser": "parse_log_pytest"}
    tasks = load_tasks(write_jsonl(tmp_path / "d.jsonl", [ROW, newer]))
    assert tasks[0].FAIL_TO_PASS == ["t1", "t2"] and tasks[0].PASS_TO_PASS == ["t3"]
    assert tasks[0].version == "1.0"
    assert tasks[1].eval_type == "fail_only" and tasks[1].image == "img"


def test_json_list_and_parquet(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    (tmp_path / "d.json").write_text(json.dumps([ROW]))
    assert load_tasks(tmp_path / "d.json")[0].instance_id == "o__r-1"
    pq.write_table(pa.Table.from_pylist([ROW]), tmp_path / "test.parquet")
    assert load_tasks(tmp_path / "test.parquet")[0].FAIL_TO_PASS == ["t1", "t2"]
    folder = tmp_path / "ds"
    folder.mkdir()
    pq.write_table(pa.Table.from_pylist([ROW]), folder / "test-00000.parquet")
    assert len(load_tasks(folder)) == 1


def test_missing_field_names_line_and_field(tmp_path):
    bad = {k: v for k, v in ROW.items() if k != "base_commit"}
    with pytest.raises(InputError) as err:
        load_tasks(write_jsonl(tmp_path / "d.jsonl", [ROW | {"instance_id": "x"}, bad]))
    assert "d.jsonl:2" in str(err.value) and "base_commit" in str(err.value)


def test_blank_and_broken_lines(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps(ROW) + "\n\n")  # a blank line at the end is how editors leave a file
    assert [t.instance_id for t in load_tasks(path)] == [ROW["instance_id"]]
    path.write_text(json.dumps(ROW) + "\n\n" + json.dumps({**ROW, "instance_id": "other__repo-2"}) + "\n")
    with pytest.raises(InputError, match=r"d.jsonl:2: blank line"):  # between rows: a broken file
        load_tasks(path)
    path.write_text(json.dumps(ROW) + "\n{not json\n")
    with pytest.raises(InputError, match=r"d.jsonl:2: not valid JSON"):
        load_tasks(path)


def test_duplicate_task_ids_are_an_error(tmp_path):
    with pytest.raises(InputError, match="duplicate instance_id"):
        load_tasks(write_jsonl(tmp_path / "d.jsonl", [ROW, ROW]))


def test_predictions_forms_and_errors(tmp_path):
    tasks = load_tasks(write_jsonl(tmp_path / "d.jsonl", [ROW]))
    gold = load_predictions("gold", tasks)
    assert gold.predictions[0].model_name_or_path == "gold"
    as_dict = tmp_path / "p.json"
    as_dict.write_text(json.dumps({"o__r-1": {"model_name_or_path": "m", "model_patch": "x"}}))
    assert load_predictions(as_dict, tasks).predictions[0].model_patch == "x"
    preds = tmp_path / "p.jsonl"
    line = {"instance_id": "o__r-1", "model_name_or_path": "m", "model_patch": "a"}
    write_jsonl(preds, [line, {**line, "instance_id": "nope"}])
    ps = load_predictions(preds, tasks)
    assert ps.unknown_ids == ["nope"] and len(ps.predictions) == 1
    write_jsonl(preds, [line, {**line, "model_patch": "b"}])
    with pytest.raises(InputError, match=r"p.jsonl:2: field 'instance_id': duplicate"):
        load_predictions(preds, tasks)
    ps = load_predictions(preds, tasks, allow_duplicates=True)
    assert ps.predictions[0].model_patch == "b" and ps.duplicates == ["o__r-1"]
    write_jsonl(preds, [{"instance_id": "o__r-1", "model_name_or_path": "m"}])
    with pytest.raises(InputError, match="field 'model_patch'"):
        load_predictions(preds, tasks)


def test_unknown_source_says_what_to_give(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        load_tasks(tmp_path / "missing.jsonl")
