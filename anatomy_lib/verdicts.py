"""The "paper vs this book" tables: each claim, the paper's value, ours, and a verdict computed from ours."""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

VERDICTS = ("reproduced", "partly reproduced", "not reproduced", "not comparable")


@dataclass
class Claim:
    claim: str
    paper: str
    ours: str
    verdict: str
    note: str = ""

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"unknown verdict {self.verdict!r}; choose one of {list(VERDICTS)}")


def verdict(ok: bool | None, partly: bool = False) -> str:
    """``ok`` True: reproduced; False: partly (when ``partly``) or not reproduced; None: not comparable."""
    if ok is None:
        return "not comparable"
    if ok:
        return "reproduced"
    return "partly reproduced" if partly else "not reproduced"


def claims_table(claims: list[Claim]) -> pd.DataFrame:
    return pd.DataFrame([c.__dict__ for c in claims]).rename(columns=str.capitalize)


def show_claims(claims: list[Claim]):
    """A styled table for notebooks: verdicts coloured (with text, so colour is never the only cue)."""
    colours = {"reproduced": "#d9f0d3", "partly reproduced": "#fee8c8", "not reproduced": "#f4cccc",
               "not comparable": "#e8e8e8"}
    table = claims_table(claims)
    return (table.style.hide(axis="index")
            .map(lambda v: f"background-color: {colours.get(v, '')}", subset=["Verdict"])
            .set_properties(**{"text-align": "left", "white-space": "normal"}))
