"""The competition's public tables, written once per mission as Parquet beside the CSVs.

Parsing a CSV of a million rows takes seconds, and every candidate (and every fold of a screened one) would
parse it again; a Parquet file keeps the types Research read and loads in a fraction of that. Candidates read
the tables with `solution.py --tables`; without the flag the script reads the CSVs, as a user runs it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pandas as pd

TABLES = {"train.csv": "train.parquet", "test.csv": "test.parquet"}


def table_path(data_dir: Path, csv_name: str) -> Path:
    return data_dir / TABLES[csv_name]


def has_tables(data_dir: Path) -> bool:
    return all((data_dir / name).is_file() for name in TABLES.values())


def read_table(data_dir: Path, csv_name: str, columns: list[str] | None = None) -> pd.DataFrame:
    """A public table: its Parquet copy when there is one, else the CSV."""
    parquet = table_path(data_dir, csv_name)
    if parquet.is_file():
        return pd.read_parquet(parquet, columns=columns)
    return pd.read_csv(data_dir / csv_name, usecols=columns)


def write_tables(frames: dict[str, pd.DataFrame], data_dir: Path) -> str | None:
    """Write each CSV's frame as Parquet into the read-only data folder: all of them, or none (then candidates
    read the CSVs). Returns why it could not, or None.

    Text columns are stored as categories (smaller and faster to read); a reader turns them back into text."""
    import pyarrow as pa

    written: list[Path] = []
    with unlocked(data_dir):
        try:
            for csv_name, frame in frames.items():
                target = table_path(data_dir, csv_name)
                partial = target.with_name(target.name + ".partial")
                stored = frame.copy()
                for column in stored.columns:
                    if stored[column].dtype == object:
                        stored[column] = stored[column].astype("category")
                stored.to_parquet(partial, index=False)
                partial.chmod(0o444)
                partial.replace(target)
                written.append(target)
        except (pa.ArrowException, TypeError, ValueError, OSError) as exc:
            for path in (*written, *data_dir.glob("*.partial")):
                path.unlink(missing_ok=True)
            return f"{type(exc).__name__}: {exc}"
    return None


@contextlib.contextmanager
def unlocked(data_dir: Path) -> Iterator[None]:
    """The read-only data folder, writable for what the mission adds to it (never while candidates run)."""
    data_dir.chmod(0o755)
    try:
        yield
    finally:
        data_dir.chmod(0o555)
