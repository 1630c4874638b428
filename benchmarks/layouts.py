"""Which folders shaped like real downloads a mission can enter: every MLE-bench-shaped folder the tests build
(`tests/support/mlebench.py` for tables and text, `tests/support/mlebench_media.py` for images and audio),
added as a user adds one (`agent-k competitions add NAME --data FOLDER --metric M [--target T]`), each reported
as entered or refused with the one-line reason.

    python benchmarks/layouts.py [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.support import mlebench, mlebench_media


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    agent_k = str(Path(sys.executable).parent / "agent-k")
    makers = {**mlebench.MAKERS, **mlebench_media.MAKERS}
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        env = {**os.environ, "AGENT_K_HOME": str(Path(scratch) / "home")}
        for i, (slug, make) in enumerate(sorted(makers.items())):
            folder = Path(scratch) / slug
            shape = make(folder, np.random.default_rng(0))
            targets = [arg for t in getattr(shape, "target_option", ()) for arg in ("--target", t)]
            added = subprocess.run(
                [agent_k, "competitions", "add", f"c{i}", "--data", str(folder), "--metric", shape.metric, *targets],
                capture_output=True, text=True, env=env, check=False,
            )  # fmt: skip
            said = " ".join(added.stderr.split()) if added.returncode else " ".join(added.stdout.split())
            rows.append({"competition": slug, "entered": added.returncode == 0, "said": said[:160]})
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    for row in rows:
        print(f"{'entered' if row['entered'] else 'REFUSED':8} {row['competition']:52} {row['said']}")
    print(f"{sum(r['entered'] for r in rows)} of {len(rows)} entered")


if __name__ == "__main__":
    main()
