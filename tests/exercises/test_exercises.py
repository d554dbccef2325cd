"""Every exercise's checker, held both ways: the library's answer passes every case, the untouched stub is
reported as not written yet (not as a traceback), and each plausible wrong answer fails at the case whose hint
names its mistake. Each checker runs in seconds on a CPU (the issue's limit is a minute)."""
import math

import pytest

from anatomy_lib import exercises
from anatomy_lib.core.adapter import GEMMA_SUPPORTED

KEYS = list(exercises.EXERCISES)


def test_two_exercises_for_every_dissection_chapter_and_one_for_atlas_and_verdicts():
    counts = {chapter: len(exercises.of_chapter(chapter)) for chapter in range(1, 10)}
    assert all(counts[c] >= 2 for c in range(1, 8)), counts
    assert counts[8] >= 1 and counts[9] >= 1, counts


@pytest.mark.parametrize("key", KEYS)
def test_the_library_answer_passes(key):
    report = exercises.check(key, exercises.get(key).reference)
    assert report.passed, str(report)
    assert report.cases_run == report.cases_total >= 2
    assert report.seconds < 60


@pytest.mark.parametrize("key", KEYS)
def test_the_stub_says_not_written_yet(key):
    exercise = exercises.get(key)
    namespace = {}
    exec(exercise.stub, namespace)
    report = exercises.check(key, namespace[exercise.function_name])
    assert not report.passed and report.cases_run == 1
    assert "not written yet" in report.detail
    assert "hint:" in str(report)


@pytest.mark.parametrize("key,mistake", [(k, m) for k in KEYS for m in exercises.get(k).mistakes])
def test_a_plausible_mistake_fails_with_its_hint(key, mistake):
    exercise = exercises.get(key)
    wrong, case = exercise.mistakes[mistake]
    if case.startswith("Gemma 3") and not GEMMA_SUPPORTED:
        pytest.skip("the case that catches it needs Gemma 3 (transformers >= 5)")
    report = exercises.check(key, wrong)
    assert not report.passed, f"{mistake!r} passes the checker of {key}"
    assert report.case.startswith(case), f"{mistake!r} fails at {report.case!r}, expected {case!r}"
    assert report.hint and report.detail


def test_every_checker_catches_at_least_three_mistakes():
    counts = {e.key: len(e.mistakes) for e in exercises.EXERCISES.values()}
    assert all(n >= 3 for n in counts.values()), counts


def test_a_function_that_raises_is_a_failed_case_in_one_line():
    def broken(*args):
        return 1 / 0

    report = exercises.check("r2", broken)
    assert not report.passed and "ZeroDivisionError" in report.detail and "\n" not in report.detail


def test_bad_input_names_the_choices():
    with pytest.raises(ValueError, match="choose one of .*neighbour-mean"):
        exercises.check("neighbour_mean", print)
    with pytest.raises(TypeError, match="pass the function you wrote"):
        exercises.check("r2", 0.5)


def test_exact_restore_checker_leaves_its_model_intact_after_a_wrong_answer():
    # a wrong answer changes the tiny model; the checker puts it back before the next case runs
    exercise = exercises.get("exact-restore")
    wrong, _ = exercise.mistakes["dividing by alpha on the way out"]
    assert not exercises.check("exact-restore", wrong).passed
    assert exercises.check("exact-restore", exercise.reference).passed


def test_the_ar1_derivation_matches_a_simulation():
    from anatomy_lib.exercises.structure import ar1_delta_correlation, simulated_ar1_delta_correlation

    for a in (0.0, 0.5, 0.9):
        assert math.isclose(simulated_ar1_delta_correlation(a, n_layers=200, n=1000), ar1_delta_correlation(a),
                            abs_tol=0.02)


def test_solution_shows_the_library_code_and_its_check():
    text = exercises.solution("neighbour-mean").data
    assert "passed all" in text and "def ablate" in text


def test_step_flops_reference_matches_torch_flop_counter():
    # the FLOP exercises' answer is the library's convention; hold it to torch's own count once more here
    import torch
    from torch.utils.flop_counter import FlopCounterMode
    from transformers import LlamaForCausalLM

    from anatomy_lib.core.flops import Shape
    from anatomy_lib.exercises.growth import finetune_step_flops

    shape = Shape(width=64, heads=4, kv_heads=2, mlp_width=128, vocab_size=256, context=32)
    torch.manual_seed(0)
    model = LlamaForCausalLM(shape.config(3, attention="eager"))
    for p in list(model.model.embed_tokens.parameters()) + list(model.model.layers[0].parameters()):
        p.requires_grad_(False)
    ids = torch.randint(0, 256, (2, 32))
    with FlopCounterMode(display=False) as counter:
        model(ids, labels=ids).loss.backward()
    # transformers 4.x takes the rotary angles as a small batched product of positions and frequencies:
    # position encoding, which the convention (the layers' and the head's products) leaves out
    rotary = sum(sum(ops.values()) for module, ops in counter.get_flop_counts().items()
                 if module.endswith("rotary_emb"))
    assert counter.get_total_flops() - rotary == finetune_step_flops(shape, 3, 2, 2)
