"""A folder's own sample submission, kept so that a mission's submission can be written back in it: its columns
in its order, its rows in its order, its id or key columns exactly as the file spells them. What a grader
(MLE-bench's `grade.py`, Kaggle's scorer) reads is that file's shape, not the tables a mission works on."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from agent_k.competition.metric_kernels import chosen_labels
from agent_k.platforms.layouts.records import read_as_written

_FILE = "format.json"


@dataclass(frozen=True)
class SubmissionFormat:
    sample: Path
    """The folder's sample submission file."""
    ids: tuple[str, ...]
    """Our id of each of its rows, in its order (as text)."""
    id_column: str
    """Our id column, as a mission's submission names it."""
    row_keys: tuple[str, ...] = ()
    """The test columns the sample's rows repeat instead of an id (else its first column is its id)."""
    classes: tuple[str, ...] = ()
    """The classes of a sample that wants one 0/1 column each, where a mission predicts one label column."""
    target: str | None = None
    sets: tuple[str, str] | None = None
    """The sample's column that holds a set of labels a row, and their separator; a mission predicts a score per
    label (its other columns), and a row's set is chosen from them as its metric scores it."""

    def written_back(self, ours: pd.DataFrame) -> pd.DataFrame:
        """`ours` (a mission's submission: our id column and what it predicts) as the sample lays it out. A
        `ValueError` names what the sample wants and `ours` lacks."""
        if self.id_column not in ours.columns:
            raise ValueError(f"the submission has no '{self.id_column}' column")
        by_id = ours.set_index(ours[self.id_column].astype(str))
        missing = [i for i in self.ids if i not in by_id.index]
        if missing:
            raise ValueError(f"the submission lacks {len(missing):,} of the sample's rows (e.g. id {missing[0]!r})")
        rows = by_id.loc[list(self.ids)]
        out = read_as_written(self.sample)
        kept = set(self.row_keys) if self.row_keys else {str(out.columns[0])}  # the rows' names, as written
        for column in (str(c) for c in out.columns):
            if column in kept:
                continue
            if self.sets is not None and column == self.sets[0]:
                labels = [c for c in rows.columns if c != self.id_column]
                chosen = chosen_labels(rows[labels].to_numpy(dtype=float))
                out[column] = [self.sets[1].join(np.array(labels)[row]) for row in chosen]
            elif column in rows.columns:
                out[column] = rows[column].to_numpy()
            elif column in self.classes and self.target in rows.columns:
                out[column] = (rows[self.target].astype(str) == column).astype(int).to_numpy()
            else:
                raise ValueError(f"the submission has no column '{column}', which the sample submission wants")
        return out

    def save(self, folder: Path) -> None:
        """Into `folder` (made here): a copy of the sample, and what this format says of it."""
        folder.mkdir(parents=True)
        copied = folder / f"sample{self.sample.suffix.lower()}"
        shutil.copyfile(self.sample, copied)
        fields = {**self.__dict__, "sample": copied.name}
        (folder / _FILE).write_text(json.dumps(fields))

    @classmethod
    def load(cls, folder: Path) -> SubmissionFormat | None:
        """The format saved in `folder`, or None when there is none."""
        path = folder / _FILE
        if not path.exists():
            return None
        fields = json.loads(path.read_text())
        return cls(
            sample=folder / fields["sample"],
            ids=tuple(fields["ids"]),
            id_column=fields["id_column"],
            row_keys=tuple(fields["row_keys"]),
            classes=tuple(fields["classes"]),
            target=fields["target"],
            sets=(fields["sets"][0], fields["sets"][1]) if fields.get("sets") else None,
        )
