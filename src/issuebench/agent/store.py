"""An agent run's folder: DIR/preds.jsonl (what `eval` takes) and DIR/trajectories/<id>.json.

Both are written as each instance ends, so a killed run loses nothing and `resume` knows what is
done: an instance is done when its trajectory ended in one of the agent's own statuses.
Instances stopped by an infrastructure fault have a trajectory but no prediction. Each instance
has one trajectory and at most one prediction row, however often it ran.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from issuebench.errors import InputError
from issuebench.files import write_json
from issuebench.predictions_file import PredictionsFile

PREDICTIONS = "preds.jsonl"
TRAJECTORIES = "trajectories"


class RunFolder:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.preds_path = self.root / PREDICTIONS
        self.traj_dir = self.root / TRAJECTORIES
        self._preds = PredictionsFile(self.preds_path)

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
        return self._preds.ids()  # a line cut by a kill counts as none: the instance simply runs again

    def make_room(self, rerun: Iterable[str]) -> None:
        """Before a run: the prediction rows of the instances it runs again go (one row per id)."""
        self._preds.make_room(rerun)

    def write_trajectory(self, traj: dict[str, Any]) -> None:
        self.traj_dir.mkdir(parents=True, exist_ok=True)
        write_json(self.trajectory_path(traj["instance_id"]), traj)

    def append_prediction(self, record: dict[str, Any]) -> None:
        self._preds.append(record)

    def total_cost(self, excluding: Iterable[str] = ()) -> float:
        """What the trajectories already in the folder cost, but those of `excluding` (the instances
        about to run again, whose new trajectories replace them): each instance counts once."""
        total = 0.0
        skip = {self.trajectory_path(i) for i in excluding}
        if self.traj_dir.is_dir():
            for path in self.traj_dir.glob("*.json"):
                if path in skip:
                    continue
                try:
                    total += float(json.loads(path.read_text(encoding="utf-8")).get("cost") or 0.0)
                except (OSError, ValueError, AttributeError):
                    continue
        return total
