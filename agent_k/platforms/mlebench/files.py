"""Where MLE-bench keeps a competition, and what its files say (openai/mle-bench, `mlebench/registry.py`).

Two folders, both configured, nothing downloaded: the data folder that `mlebench prepare` fills
(`<data>/<id>/prepared/public` is what an agent sees, `…/private` holds the answers), and a checkout of the
repository (`<repo>/mlebench/competitions/<id>/` holds `config.yaml`, `description.md` and `leaderboard.csv`, the
competition's real Kaggle private leaderboard).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from agent_k.competition.metric_names import metric_from_name, metrics_in_description, other_family, top_k_from_name
from agent_k.platforms.base import CompetitionNotFound, PlatformError

COMPETITIONS = Path("mlebench", "competitions")
"""Where a checkout of the repository keeps each competition's folder."""


@dataclass(frozen=True)
class CompetitionFiles:
    id: str
    public: Path
    answers: Path
    config: dict[str, Any]
    description: str
    leaderboard: Path

    @property
    def grader(self) -> str:
        return str((self.config.get("grader") or {}).get("name") or "")

    @property
    def title(self) -> str:
        return str(self.config.get("name") or self.id)

    def metric(self) -> tuple[str, int | None]:
        """Our metric for the competition's grader, and a map@k's k; `PlatformError` when none of ours scores it the
        same way (the description's Evaluation section decides where the config names no grader)."""
        if self.grader:
            metric = metric_from_name(self.grader)
            if metric is not None and (family := other_family(self.description)) is not None:
                raise PlatformError(f"'{self.id}' is graded by '{self.grader}' over {family}, not by {metric}")
            if metric is None:
                raise PlatformError(
                    f"'{self.id}' is graded by '{self.grader}', which AGENT-K cannot compute the same way"
                )
            return metric, top_k_from_name(self.grader)
        named = metrics_in_description(self.description)
        if len(named) != 1:
            raise PlatformError(
                f"'{self.id}' names no grader, and its description names {named or 'no metric of ours'}"
            )
        return named[0], None

    def board(self) -> pd.DataFrame:
        """The Kaggle private leaderboard MLE-bench grades against: a `score` per team, best first."""
        board = pd.read_csv(self.leaderboard)
        if "score" not in board.columns or board["score"].isna().all():
            raise PlatformError(f"'{self.id}': {self.leaderboard} holds no `score` column (a Git LFS pointer?)")
        return board


def known_ids(data: Path) -> list[str]:
    """The competitions `mlebench prepare` has prepared in `data`."""
    return sorted(p.parent.parent.name for p in data.glob("*/prepared/public") if p.is_dir())


def competition_files(data: Path, repo: Path, competition_id: str) -> CompetitionFiles:
    """The files of one prepared competition; `CompetitionNotFound` or a `PlatformError` naming what is missing."""
    import yaml

    public = data / competition_id / "prepared" / "public"
    if not public.is_dir():
        import difflib

        raise CompetitionNotFound(competition_id, difflib.get_close_matches(competition_id, known_ids(data), n=3))
    folder = repo / COMPETITIONS / competition_id
    config_path = folder / "config.yaml"
    if not config_path.is_file():
        raise PlatformError(f"'{competition_id}': no {config_path} (is AGENT_K_MLEBENCH_REPO a checkout of mle-bench?)")
    try:
        config = yaml.safe_load(config_path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise PlatformError(
            f"'{competition_id}': {config_path} is not YAML ({' '.join(str(exc).split())[:200]})"
        ) from None
    answers = data / str((config.get("dataset") or {}).get("answers") or f"{competition_id}/prepared/private/test.csv")
    for needed in (answers, folder / "leaderboard.csv"):
        if not needed.is_file():
            raise PlatformError(f"'{competition_id}': no {needed}")
    description = folder / "description.md"
    return CompetitionFiles(
        id=competition_id,
        public=public,
        answers=answers,
        config=config,
        description=description.read_text() if description.is_file() else "",
        leaderboard=folder / "leaderboard.csv",
    )


def competition_of(folder: Path, data: Path) -> str | None:
    """The competition whose public folder `folder` is, when it is one in `data`."""
    try:
        relative = folder.resolve().relative_to(data.resolve())
    except ValueError:
        return None
    parts = relative.parts
    return parts[0] if len(parts) == 3 and parts[1:] == ("prepared", "public") else None
