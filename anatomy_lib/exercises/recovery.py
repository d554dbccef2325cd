"""Chapter 6's exercises: when a damaged run counts as recovered (sham-corrected, judged by an interval), and
how to find the noise level that does a given damage in few forward passes."""
from __future__ import annotations

import numpy as np

from ..recovery.analysis import Criterion, judge_curve
from ..recovery.training import bracket_and_bisect
from .checking import Case, Exercise, differs

# ---- the recovery criterion ---------------------------------------------------------------------------------
CRITERION_STUB = '''def steps_to_recover(steps, damaged, sham, baseline, share=0.9, n_boot=2000, seed=0):
    """The first evaluation step (after step 0) at which a damaged run counts as recovered, or NaN if it never
    does. damaged and sham: (evaluations, blocks) NLLs of the damaged run and of its sham (the same fine-tuning,
    no damage) at the same steps; baseline: (blocks,) NLLs of the intact model. Recovered: the lower end of a
    95% paired bootstrap interval (over blocks) of the share of the initial damage undone reaches `share`."""
    raise NotImplementedError  # your code here
'''


def steps_to_recover(steps, damaged, sham, baseline, share: float = 0.9, n_boot: int = 2000, seed: int = 0):
    """The library's answer: chapter 6's main criterion (``recovery.analysis.judge_curve``, sham-corrected)."""
    recovered_at = judge_curve(steps, damaged, sham, Criterion("sham", share), n_boot, seed)["recovered_at"]
    return float(recovered_at[0]) if len(recovered_at) else float("nan")


def recovery_curves(sham_drift: float, damage: float = 0.3, seed: int = 0, n_blocks: int = 16):
    """(steps, damaged, sham, baseline) of a synthetic run: blocks recover at different rates (so the interval
    is wider than the mean suggests) and fine-tuning alone lowers every block's NLL by up to ``sham_drift``."""
    rng = np.random.default_rng(seed)
    steps = np.arange(0, 201, 20)
    baseline = rng.normal(3.0, 0.5, n_blocks)
    rates = 36 * np.exp(rng.normal(0.0, 0.5, n_blocks))
    sham = baseline[None] - sham_drift * (1 - np.exp(-steps / 60))[:, None]
    damaged = sham + damage * np.exp(-steps[:, None] / rates[None])
    return steps, damaged, sham, baseline


def _criterion_cases() -> tuple[Case, ...]:
    def case(curves):
        expected = steps_to_recover(*curves)
        return lambda fn: differs(fn(*curves), expected, what="step (or NaN)")

    never = recovery_curves(0.0)
    never = (never[0], never[2] + 0.3 * np.linspace(1.0, 0.5, 11)[:, None], never[2], never[3])
    return (Case("a run whose blocks recover at different rates", "judge by the lower end of the paired interval "
                 "of the share undone, not by its mean: at step 100 the mean is past 90% but not the interval",
                 case(recovery_curves(0.0))),
            Case("a sham that drifts down", "measure the excess over the sham at the same step, not over the intact "
                 "model: fine-tuning alone lowers the loss, and that is not recovery", case(recovery_curves(0.05))),
            Case("a run that never recovers", "return NaN when no evaluation meets the criterion (never the budget: "
                 "a censored run has not recovered)", case(never)))


def _by_the_mean(steps, damaged, sham, baseline, share=0.9, n_boot=2000, seed=0):
    excess = (np.asarray(damaged) - np.asarray(sham)).mean(axis=1)
    met = np.nonzero(1 - excess[1:] / excess[0] >= share)[0]
    return float(steps[1 + met[0]]) if len(met) else float("nan")


def _against_the_intact_model(steps, damaged, sham, baseline, share=0.9, n_boot=2000, seed=0):
    reference = np.broadcast_to(np.asarray(baseline), np.asarray(damaged).shape)
    recovered_at = judge_curve(steps, damaged, reference, Criterion("sham", share), n_boot, seed)["recovered_at"]
    return float(recovered_at[0]) if len(recovered_at) else float("nan")


def _budget_when_censored(steps, damaged, sham, baseline, share=0.9, n_boot=2000, seed=0):
    found = steps_to_recover(steps, damaged, sham, baseline, share, n_boot, seed)
    return float(steps[-1]) if np.isnan(found) else found


# ---- matched damage ----------------------------------------------------------------------------------------
MATCH_STUB = '''def match_sigma(excess, target):
    """A noise level sigma whose damage excess(sigma) (in nats, increasing in sigma) is within 2% of target.
    Each call of excess is a forward pass over the evaluation text: use at most 20."""
    raise NotImplementedError  # your code here
'''


def match_sigma(excess, target: float) -> float:
    """The library's answer: ``recovery.training.bracket_and_bisect`` (chapter 6's matched damage), with enough
    bisection steps for 2%."""
    return bracket_and_bisect(excess, target, bisection_steps=9)[0]


MAX_CALLS, TOLERANCE = 20, 0.02


def _match_cases() -> tuple[Case, ...]:
    def case(damage, target):
        def test(fn):
            calls = []

            def excess(sigma):
                calls.append(sigma)
                if len(calls) > MAX_CALLS:
                    raise RuntimeError(f"more than {MAX_CALLS} forward passes")
                return damage(float(sigma))

            sigma = fn(excess, target)
            if sigma is None:
                return "returned None; expected a noise level"
            got = damage(float(sigma))
            if abs(got / target - 1) > TOLERANCE:
                return f"sigma {float(sigma):.4g} does {got:.4g} nats of damage; the target is {target:g}"
            return None
        return test

    return (Case("damage that grows with the square of sigma", "damage is not proportional to sigma (it grows "
                 "roughly with its square at small noise): bracket the target, then bisect",
                 case(lambda s: 0.08 * s ** 2 + 0.01 * s ** 4, 0.3)),
            Case("damage that saturates at large sigma", "double sigma until the damage passes the target, then "
                 "bisect between the last two; a grid of sigmas costs a forward pass per point",
                 case(lambda s: 2.0 * np.tanh(0.05 * s ** 2), 1.5)),
            Case("a small target (the first guess overshoots)", "if the first sigma already overshoots, halve it "
                 "until the damage falls short, then bisect", case(lambda s: 0.5 * s ** 2, 0.002)))


def _proportional(excess, target):
    return target / excess(1.0)


def _only_doubles(excess, target):
    """Doubles from sigma 1 until the target is passed and bisects the last step: an overshooting first guess is
    taken as the bracket's lower end."""
    high = 1.0
    while excess(high) < target:
        high *= 2
    low = high / 2
    for _ in range(9):
        middle = (low + high) / 2
        low, high = (middle, high) if excess(middle) < target else (low, middle)
    return (low + high) / 2


def _grid(excess, target):
    grid = np.linspace(0.05, 10.0, 200)
    return float(grid[np.argmin([abs(excess(s) - target) for s in grid])])


EXERCISES = (
    Exercise("recovery-criterion", 6, "When a damaged run has recovered",
             "Write chapter 6's main criterion: sham-corrected, judged by the interval's lower end.", CRITERION_STUB,
             steps_to_recover, _criterion_cases,
             mistakes={"judged by the mean": (_by_the_mean, "a run whose blocks"),
                       "excess over the intact model (raw)": (_against_the_intact_model, "a sham that drifts"),
                       "the budget returned for a run that never recovers": (_budget_when_censored,
                                                                             "a run that never recovers")},
             shows=(judge_curve,)),
    Exercise("matched-damage", 6, "Matching the damage in nats",
             "Find the noise level that does a target damage, in few forward passes.", MATCH_STUB, match_sigma,
             _match_cases,
             mistakes={"damage assumed proportional to sigma": (_proportional, "damage that grows"),
                       "a grid of sigmas": (_grid, "damage that grows"),
                       "only doubling (an overshooting first guess kept)": (_only_doubles, "a small target")},
             shows=(bracket_and_bisect,)),
)
