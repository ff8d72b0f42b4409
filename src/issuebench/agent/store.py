"""An agent run's folder: DIR/preds.jsonl (what `eval` takes) and DIR/trajectories/<id>.json.

Both are written as each instance ends, so a killed run loses nothing and `resume` knows what is
done: an instance is done when its trajectory ended in one of the agent's own statuses.
Instances stopped by an infrastructure fault have a trajectory but no prediction.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from issuebench.errors import InputError
from issuebench.harness.artifacts import write_json

PREDICTIONS = "preds.jsonl"
TRAJECTORIES = "trajectories"


class RunFolder:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.preds_path = self.root / PREDICTIONS
        self.traj_dir = self.root / TRAJECTORIES
        self._lock = threading.Lock()

    def trajectory_path(self, instance_id: str) -> Path:
        return self.traj_dir / f"{instance_id.replace('/', '__')}.json"

    def read_trajectory(self, instance_id: str) -> dict[str, Any] | None:
        path = self.trajectory_path(instance_id)
        if not path.is_file():
            return None
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise InputError(path, f"not valid JSON: {exc.msg}", line=exc.lineno,
                             hint="delete the file to rerun that instance") from None

    def predicted_ids(self) -> set[str]:
        if not self.preds_path.is_file():
            return set()
        ids = set()
        for line in self.preds_path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                try:
                    ids.add(json.loads(line)["instance_id"])
                except (json.JSONDecodeError, KeyError, TypeError):
                    continue  # a line cut by a kill: the instance simply runs again
        return ids

    def write_trajectory(self, traj: dict[str, Any]) -> None:
        self.traj_dir.mkdir(parents=True, exist_ok=True)
        write_json(self.trajectory_path(traj["instance_id"]), traj)

    def append_prediction(self, record: dict[str, Any]) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        line = json.dumps(record, ensure_ascii=False) + "\n"
        with self._lock, self.preds_path.open("a", encoding="utf-8") as fh:
            fh.write(line)

    def total_cost(self) -> float:
        """What the trajectories already in the folder cost: a resumed run counts it against the total."""
        total = 0.0
        if self.traj_dir.is_dir():
            for path in self.traj_dir.glob("*.json"):
                try:
                    total += float(json.loads(path.read_text(encoding="utf-8")).get("cost") or 0.0)
                except (OSError, ValueError, AttributeError):
                    continue
        return total
