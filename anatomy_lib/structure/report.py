"""Chapter 4 in sentences and verdicts."""
from __future__ import annotations

import pandas as pd

from ..core import rules as v


def paper_claims(tables: dict[str, pd.DataFrame], params=None, tolerance: float = 0.05):
    """-0.50 in every component, and whether it says anything beyond independent layers; verdicts computed."""
    weights = tables["weights"].query("lag == 1")
    mean = weights.groupby(["model", "component"], sort=False)["corr"].mean()
    specimen = mean["specimen"]
    near = (specimen + 0.5).abs() < tolerance
    shuffled = weights[weights["model"] == "layer-shuffled"].groupby("component")["corr"]
    lo, hi = shuffled.min(), shuffled.max()
    inside = [(lo[c] - tolerance / 5) <= specimen[c] <= (hi[c] + tolerance / 5) for c in specimen.index]
    # the measurement, held to its null: where the layer-shuffled model gives the same value, -0.5 says nothing
    # about this model's layers
    null_check = v.ControlCheck(
        "layer-shuffled null", v.NOT_DISCRIMINATING if all(inside) else v.share(len(inside) - sum(inside),
                                                                                  len(inside)),
        f"the layer-shuffled null gives the same value in {sum(inside)} of {len(inside)} components")
    claims = [v.Claim.held_to("lag-1 delta correlation in every component", "~ -0.50",
                              ", ".join(f"{c} {r:+.3f}" for c, r in specimen.items()),
                              v.share(int(near.sum()), len(near)),
                              f"{int(near.sum())} of {len(near)} components within +-{tolerance} of -0.5", "share",
                              [null_check], kind=v.MAGNITUDE)]
    claims.append(v.Claim("-0.50 reveals an oscillatory structure", "yes (standing wave)",
                          f"specimen inside the layer-shuffled range in {sum(inside)} of {len(inside)} components; "
                          f"random init {mean['random init'].mean():+.3f}",
                          v.share(len(inside) - sum(inside), len(inside)),
                          "holds for a component whose value lies outside its layer-shuffled null; independent "
                          "layers give exactly -0.5", "share", kind=v.INTERPRETATION))
    claims = v.in_experiment("lag-1 correlation of consecutive layers' weight deltas", claims)
    functional = tables["functional"]
    negative = int((functional["corr"] < 0).sum())
    claims_functional = [v.Claim("consecutive layers compensate each other", "yes",
                                 f"updates to the residual stream correlate {functional['corr'].mean():+.3f} on "
                                 f"average; negative at {negative} of {len(functional)} layer pairs",
                                 v.share(negative, len(functional)),
                                 "holds for a pair of layers whose updates to the residual stream correlate "
                                 "negatively", "share")]
    return claims + v.in_experiment("consecutive layers' updates to the residual stream", claims_functional,
                                    kind=v.INTERPRETATION)


def findings(tables: dict[str, pd.DataFrame], params=None, specimen_name: str = "the specimen") -> list[str]:
    """What chapter 4 finds, in sentences computed from its tables."""
    lag1 = tables["weights"].query("lag == 1").groupby(["model", "component"])["corr"].mean()
    by_model = lag1.groupby(level="model")
    spec = lag1["specimen"]
    out = [f"On {specimen_name}, the lag-1 correlation of consecutive weight deltas lies between {spec.min():+.3f} and "
           f"{spec.max():+.3f} over the {len(spec)} components; the layer-shuffled copy gives "
           f"{by_model.min()['layer-shuffled']:+.3f} to {by_model.max()['layer-shuffled']:+.3f} and a randomly "
           f"initialised model {by_model.min()['random init']:+.3f} to {by_model.max()['random init']:+.3f}"
           + (": the value the paper reads as an oscillation is what independent layers give." if
              spec.min() <= by_model.max()["layer-shuffled"] + 0.01 and spec.max() >= by_model.min()["layer-shuffled"]
              - 0.01 else ".")]
    later = tables["weights"].query("lag > 1 and model == 'specimen'")
    if not later.empty:
        out.append(f"At lags beyond one the specimen's delta correlations average {later['corr'].mean():+.3f} "
                   "(independent layers: zero).")
    quant = tables.get("quantisation")
    if quant is not None and not quant.empty:
        out.append(f"Quantisation rounding makes up {quant['noise_share'].mean():.1%} of the delta variance on "
                   "average; "
                   f"without it the lag-1 correlation would be {quant['corr_without_noise'].mean():+.3f}.")
    functional = tables["functional"]
    negative = int((functional["corr"] < 0).sum())
    out.append(f"On the residual stream, consecutive layers' updates correlate {functional['corr'].mean():+.3f} on "
               f"average, negatively at {negative} of {len(functional)} layer pairs"
               + (": no general compensation." if 2 * negative < len(functional) else "."))
    return out
