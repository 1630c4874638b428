"""Which of MLE-bench's competitions AGENT-K enters, read off a checkout of openai/mle-bench: for each competition of
`experiments/splits/split75.txt` (and whether it is in the Lite split, `low.txt`), the metric its grader uses
and ours for it (`competition/metric_names.py`, the same the mlebench platform uses), and, where the tests have a
folder shaped like its prepared public folder (`tests/support/mlebench*.py`), whether that folder is entered as
`agent-k run --data` enters one. A competition counts as entered when both hold: its layout is entered and its
grader's metric is one of ours.

    python benchmarks/mlebench_coverage.py CHECKOUT [--json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from agent_k.competition.metric_names import metric_from_name, other_family
from agent_k.competition.registry import metric_named
from agent_k.platforms.local.platform import LocalPlatform
from agent_k.platforms.local.user_files import from_folder
from agent_k.platforms.targets import CompetitionInputError
from tests.support import mlebench, mlebench_media


def _split(checkout: Path, name: str) -> list[str]:
    """A split file of the checkout (read from git where the checkout is a bare mirror)."""
    path = Path("experiments", "splits", f"{name}.txt")
    if (checkout / path).is_file():
        text = (checkout / path).read_text()
    else:
        text = subprocess.run(["git", "-C", str(checkout), "show", f"HEAD:{path}"], capture_output=True, text=True,
                              check=True).stdout  # fmt: skip
    return [line.strip() for line in text.splitlines() if line.strip()]


def _text(checkout: Path, competition: str, name: str) -> str:
    """A file of the competition's folder in the checkout (read from git where it is a bare mirror)."""
    path = Path("mlebench", "competitions", competition, name)
    if (checkout / path).is_file():
        return (checkout / path).read_text()
    return subprocess.run(["git", "-C", str(checkout), "show", f"HEAD:{path}"], capture_output=True, text=True,
                          check=False).stdout  # fmt: skip


def _config(checkout: Path, competition: str) -> dict[str, object]:
    return yaml.safe_load(_text(checkout, competition, "config.yaml")) or {}


def _layout(competition: str, metric: str | None, scratch: Path) -> str:
    """Whether the tests' folder shaped like the competition's is entered ("" when there is none)."""
    makers = {**mlebench.MAKERS, **mlebench_media.MAKERS}
    if competition not in makers:
        return ""
    folder = scratch / competition
    shape = makers[competition](folder, np.random.default_rng(0))
    platform = LocalPlatform(scratch / "home" / "competitions")
    try:
        tables = from_folder(folder, competition, list(getattr(shape, "target_option", ())), solution=None,
                             scratch=scratch / f"{competition}-unzipped")  # fmt: skip
        platform.add(competition, tables, metric=metric or shape.metric, references=False)
    except CompetitionInputError as exc:
        return f"refused: {exc}"
    there, cap = getattr(shape, "classes_there", None), metric_named(metric or shape.metric).max_classes
    if there is not None and there > cap:  # the folder is small; the real one has more classes than a head takes
        return f"refused: the real competition's {there:,} classes are over {metric or shape.metric}'s cap of {cap:,}"
    return "entered"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", type=Path)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    lite = set(_split(args.checkout, "low"))
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for competition in sorted(set(_split(args.checkout, "split75")) | lite):
            grader = str((_config(args.checkout, competition).get("grader") or {}).get("name") or "")  # type: ignore[union-attr]
            metric = metric_from_name(grader) if grader else None
            if metric is not None and other_family(_text(args.checkout, competition, "description.md")):
                metric = None  # a "mean average precision" over IoU
            layout = _layout(competition, metric, Path(scratch))
            rows.append({"competition": competition, "lite": competition in lite, "grader": grader, "metric": metric,
                         "layout": layout, "entered": layout == "entered" and metric is not None})  # fmt: skip
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    for row in rows:
        print(
            f"{'ENTERED' if row['entered'] else '-':8} {'lite' if row['lite'] else '':5} {row['competition']:55} "
            f"{row['grader']:45} {row['metric'] or '(not ours)':12} {row['layout'] or '(no folder shaped like it)'}"
        )
    entered = [r for r in rows if r["entered"]]
    print(
        f"{len(entered)} of {len(rows)} entered ({sum(r['lite'] for r in entered)} of {len(lite)} Lite); "
        f"a metric of ours: {sum(r['metric'] is not None for r in rows)}; a layout tried: "
        f"{sum(bool(r['layout']) for r in rows)}, entered: {sum(r['layout'] == 'entered' for r in rows)}"
    )


if __name__ == "__main__":
    main()
