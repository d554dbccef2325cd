"""Growth training: FLOPs against PyTorch's counter, operators, optimiser after growth, determinism, budget,
bad input, the tokenizer and the measures."""
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from anatomy_lib import growth as gx
from anatomy_lib.core.flops import forward_flops, step_flops
from anatomy_lib.core.stats import t_interval
from anatomy_lib.growth.config import Arm, Event, TextData, TrainConfig
from anatomy_lib.growth.models import Shape, build_model, parameter_counts
from anatomy_lib.growth.operators import Copy, apply_plan, clone_plan, middle_plan, remove_plan, stack_plan
from anatomy_lib.growth.trainer import _optimiser, train

SHAPE = Shape(width=32, heads=4, kv_heads=2, mlp_width=64, vocab_size=97, context=16)


def _counted(model, trainable, embedding, batch=3):
    for p in model.parameters():
        p.requires_grad_(False)
    model.model.embed_tokens.weight.requires_grad_(embedding)
    for trains, layer in zip(trainable, model.model.layers):
        for p in layer.parameters():
            p.requires_grad_(trains)
    ids = torch.randint(0, SHAPE.vocab_size, (batch, SHAPE.context))
    with FlopCounterMode(display=False) as counter:
        loss = model(input_ids=ids, labels=ids).loss
        if embedding or any(trainable):
            loss.backward()
    return counter.get_total_flops()


@pytest.mark.parametrize("trainable, embedding", [([True] * 4, True), ([False, True, False, True], False),
                                                  ([False] * 4, False), ([True, False, False, False], False)])
def test_flop_formula_matches_the_counter(trainable, embedding):
    model = build_model(SHAPE, 4, 0, attention="eager")  # eager attention: the counter sees its products
    assert _counted(model, trainable, embedding) == pytest.approx(step_flops(SHAPE, trainable, embedding, 3), rel=0.05)
    grown = build_model(SHAPE, 2, 0, attention="eager")
    apply_plan(grown, stack_plan(2, 6))  # a grown model counts like a model built at its depth
    assert _counted(grown, [True] * 6, True) == pytest.approx(step_flops(SHAPE, [True] * 6, True, 3), rel=0.05)
    assert forward_flops(SHAPE, 4, 3) < step_flops(SHAPE, [True] * 4, True, 3)


def test_operators_give_the_intended_order_and_no_shared_modules():
    assert stack_plan(3, 9)[3:] == [Copy(0), Copy(1), Copy(2), Copy(0), Copy(1), Copy(2)]
    assert middle_plan(6, 2) == [0, 1, 2, 3, Copy(2), Copy(3), 4, 5]
    assert clone_plan(3, [1, 1, 2]) == [0, 1, Copy(1), Copy(1), 2, Copy(2)]
    assert remove_plan(4, [1, 3]) == [0, 2]
    model = build_model(SHAPE, 3, 0)
    before = [layer for layer in model.model.layers]
    new = apply_plan(model, middle_plan(3, 1, noise=0.0))
    layers = model.model.layers
    assert new == [False, False, True, False] and len(layers) == 4 and model.config.num_hidden_layers == 4
    assert layers[0] is before[0] and layers[3] is before[2]  # kept layers are the same modules
    pointers = [p.data_ptr() for p in model.parameters()]
    assert len(pointers) == len(set(pointers))  # no module or tensor shared
    torch.testing.assert_close(layers[2].mlp.up_proj.weight, layers[1].mlp.up_proj.weight)
    assert [layer.self_attn.layer_idx for layer in layers] == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="at most once"):
        apply_plan(model, [0, 0])
    with pytest.raises(ValueError, match="outside"):
        apply_plan(model, [0, Copy(9)])


def test_the_optimiser_holds_every_trainable_parameter_after_growth():
    model = build_model(SHAPE, 2, 0)
    config = TrainConfig(SHAPE, 1e9, 2)
    old = _optimiser(model, config, None)
    model(input_ids=torch.randint(0, 97, (2, 16)), labels=torch.randint(0, 97, (2, 16))).loss.backward()
    old.step()
    kept = next(model.model.layers[0].parameters())
    apply_plan(model, stack_plan(2, 4))
    new = _optimiser(model, config, old)
    held = {id(p) for group in new.param_groups for p in group["params"]}
    assert held == {id(p) for p in model.parameters()}
    assert new.state[kept] is old.state[kept]  # old layers keep their moments
    copied = next(model.model.layers[2].parameters())
    assert copied not in new.state  # new layers start fresh
    assert not _optimiser(model, replace(config, reset_optimizer=True), old).state


def _data(seed=0):
    rng = np.random.default_rng(seed)
    return TextData(rng.integers(0, 97, 5000), torch.from_numpy(rng.integers(0, 97, (4, 16))),
                    torch.from_numpy(rng.integers(0, 97, (4, 16))))


@pytest.mark.integration
def test_a_seed_reproduces_its_curve_and_the_budget_holds():
    budget = 20 * step_flops(SHAPE, [True] * 4, True, 2)
    config = TrainConfig(SHAPE, budget, 2, importance_boot=50)
    arm = Arm("developmental", 2, (Event(0.3, "develop", 3), Event(0.6, "develop", 4)))
    first, events, model = train(arm, config, _data(), seed=3)
    again, _, _ = train(arm, config, _data(), seed=3)
    pd.testing.assert_frame_equal(first.drop(columns="wall_s"), again.drop(columns="wall_s"))
    other, _, _ = train(arm, config, _data(), seed=4)
    assert not np.allclose(first["val_loss"].iloc[1:], other["val_loss"].iloc[1:])
    used = first["flops"].iloc[-1]
    assert used <= budget and budget - used < step_flops(SHAPE, [True] * 4, True, 2)
    assert events["layers_after"].tolist() == [3, 4] and len(model.model.layers) == 4
    assert (events["cost_flops"] > 0).all()  # measuring importance is charged


def test_bad_input_names_the_valid_values():
    with pytest.raises(ValueError, match="choose one of"):
        gx.GrowthParams(arms=("uniform", "grown"))
    with pytest.raises(ValueError, match=r"in \(0, 1\)"):
        gx.GrowthParams(growth_time=1.0)
    with pytest.raises(ValueError, match="positive integer"):
        gx.GrowthParams(seeds=0)
    with pytest.raises(ValueError, match="budget too small for a phase"):
        gx.GrowthParams(budget_steps=3)
    with pytest.raises(ValueError, match="multiple"):
        gx.GrowthParams(start_layers=5)
    with pytest.raises(ValueError, match="choose one of"):
        Event(0.5, "shrink")
    with pytest.raises(ValueError, match=r"in \(0, 1\)"):
        Event(0.0, "stack", 4)
    with pytest.raises(ValueError, match="heads"):
        Shape(width=30, heads=4)


def test_the_arms_start_and_end_where_they_should():
    params = gx.GrowthParams()
    for name in gx.ARMS:
        arm = params.arm(name)
        depth = arm.start_layers
        for event in arm.events:
            depth = event.target if event.kind != "middle" else depth + event.block
        assert depth == (params.start_layers if name == "shallow" else params.target_layers), name
    counts = parameter_counts(params.shape, params.target_layers)
    model = build_model(params.shape, params.target_layers, 0)
    assert counts["total"] == sum(p.numel() for p in model.parameters())


def test_flops_to_target_interpolates_and_never_imputes():
    curve = pd.DataFrame({"flops": [0.0, 10.0, 100.0, 1000.0], "val_loss": [9.0, 6.0, 4.0, 3.0]})
    assert gx.flops_to_target(curve, 4.0) == pytest.approx(100.0)
    assert gx.flops_to_target(curve, 5.0) == pytest.approx(np.sqrt(10 * 100))  # halfway in log-FLOPs
    assert np.isnan(gx.flops_to_target(curve, 2.0))
    mean, low, high = t_interval([1.0, 2.0, 3.0])
    assert mean == 2.0 and low < 2.0 < high and np.isnan(t_interval([1.0])[1])


def test_the_committed_tokenizer_and_the_splits():
    from anatomy_lib.growth.text import load_text, ngram_overlap

    text = load_text(4096)
    assert text.tokenizer.get_vocab_size() == 4096
    train, validation = text.split("train"), text.split("validation")
    assert len(train) > 5 * len(validation) > 0
    assert 3 < text.bytes_per_token("validation") < 6
    assert text.bits_per_byte(np.log(2) * text.bytes_per_token("validation"), "validation") == pytest.approx(1.0)
    assert ngram_overlap(train[:1000], train[:1000], 8) == 1.0
    with pytest.raises(ValueError, match="choose one of"):
        text.split("dev")
    with pytest.raises(ValueError, match="no committed tokenizer"):
        load_text(123)


@pytest.mark.integration
def test_growth_runs_and_explorer_at_smoke_size(monkeypatch):
    from anatomy_lib.growth import explorers as growth_explorers
    from anatomy_lib.growth import growth_explorer

    drawn = []
    real = growth_explorers.growth_curves_figure
    monkeypatch.setattr(growth_explorers, "growth_curves_figure",
                        lambda curves, *a, **k: drawn.append(sorted(set(curves["arm"]))) or real(curves, *a, **k))

    params = gx.GrowthParams.for_profile("smoke", seeds=2)
    tables = gx.run_growth(params, progress=False)
    runs = tables["runs"]
    assert sorted(runs["arm"].unique()) == sorted(gx.ARMS) and len(runs) == 2 * len(gx.ARMS)
    assert (runs["flops"] <= params.budget).all()
    assert set(tables["anatomy"]["arm"]) == {"uniform", "developmental", "gstack"}
    reach = gx.compute_to_target(tables["curves"])
    assert set(reach["target"]) == set(gx.TARGETS) and (reach.loc[reach["arm"] == "uniform", "speedup"] == 1).all()
    claims = gx.paper_claims(tables, params)
    assert claims and all(c.verdict in ("reproduced", "partly reproduced", "not reproduced", "inconclusive")
                          for c in claims)
    assert gx.findings(tables, params)
    box = growth_explorer(tables, params, ("uniform", "shallow"))
    (left, right), output = box.children[0].children, box.children[1]
    pick, seed = left.children
    live, button, bar = right.children
    pick.value = "gstack"
    assert drawn[-2:] == [["random_source", "uniform"], ["gstack", "uniform"]]
    button.click()
    assert bar.description == "done" and bar.value == 2 and not button.disabled
    assert drawn[-1] == ["shallow", "uniform"] and output.outputs


def test_scale_table_follows_the_flop_formula():
    from anatomy_lib.core.gpu import FP32_TFLOPS, UTILISATION
    from anatomy_lib.growth import ARMS, GrowthParams, scale_table

    table = scale_table(seeds=5, gpu="A100").set_index("size")
    quick = GrowthParams.for_profile("quick")
    assert table.loc["quick profile", "FLOPs per run"] == pytest.approx(quick.budget)
    assert table.loc["SmolLM2-135M shape", "parameters (M)"] == pytest.approx(134.515008)  # the real model's count
    total = table.loc["paper profile", f"FLOPs ({len(ARMS)} arms x 5 seeds)"]
    peak = FP32_TFLOPS["A100"] * 1e12 * UTILISATION
    assert table.loc["paper profile", "hours on 8 A100s"] == pytest.approx(total / (8 * peak) / 3600)
    eight = table.loc["paper profile", "hours on 8 A100s"]
    assert table.loc["paper profile", "hours on 1 A100"] == pytest.approx(8 * eight)
    with pytest.raises(ValueError, match="choose one of"):
        scale_table(gpu="TPU")


def test_importance_map_is_charged_what_runs():
    """The developmental arm pays for its importance maps: the charge equals what FlopCounterMode counts around a
    real map (cache build, then each skipped layer l re-run from l, with the head)."""
    from anatomy_lib.growth.trainer import importance_cost, measure_importance

    shape = Shape(width=64, heads=4, kv_heads=4, mlp_width=256, vocab_size=16, context=16)
    model = build_model(shape, 4, seed=0, attention="eager")  # eager: the counter sees the attention products
    blocks = torch.randint(0, shape.vocab_size, (4, shape.context))
    with FlopCounterMode(display=False) as counter:
        measure_importance(model, blocks, n_boot=50, seed=0)
    assert counter.get_total_flops() == pytest.approx(importance_cost(shape, 4, blocks), rel=0.03)


def test_the_papers_losses_and_ours_on_one_scale():
    import math

    import pandas as pd

    from anatomy_lib.growth import PAPER, loss_scale_sentences

    sentences = loss_scale_sentences(pd.DataFrame({"final_val_loss": [5.0, 4.5]}), lambda nats: nats / 2, 0.0123)
    assert f"{math.exp(PAPER['dev_loss']):.2f}" in sentences[0] and "perplexity of 90.0" in sentences[1]
    assert "2.25 bits per byte" in sentences[1] and "1.2%" in sentences[2]


def test_an_arm_keeps_its_colour_in_every_figure():
    """Chapter 7's figures draw different subsets of the arms; each arm keeps one colour (uniform was blue in one
    figure and green in the next), and no two series of a figure share one."""
    from anatomy_lib.growth.figures import arm_colours

    every = arm_colours(["uniform", "shallow", "gstack", "developmental"])
    some = arm_colours(["gstack", "uniform"])
    assert some == {arm: every[arm] for arm in some}
    frontier = arm_colours(["depth2", "depth4", "depth8", "gstack", "developmental", "random_source", "midas"])
    assert len(set(frontier.values())) == 7 and frontier["gstack"] == every["gstack"]


def test_a_control_that_is_the_same_run_up_to_the_measurement_is_not_discriminating():
    """Where every seed reaches the target before its first growth, the grown arm and the shallow control are
    one run up to there: the gap is zero to the last bit, and the control says so rather than "+0.00 [+0.00,
    +0.00]"."""
    from anatomy_lib.core.rules import NOT_DISCRIMINATING
    from anatomy_lib.growth.report import _checks

    cost = pd.DataFrame({"developmental": [1.0, 2.0, 3.0], "shallow": [1.0, 2.0, 3.0],
                         "random_source": [1.5, 2.5, 3.5]})
    same, apart = _checks(cost, "developmental", {"shallow": "the shallow control saves as much",
                                                 "random_source": "random_source saves as much"})
    assert same.verdict == NOT_DISCRIMINATING and "the same value in every seed" in same.words
    assert apart.verdict != NOT_DISCRIMINATING and "(gap +0.500 [+0.500, +0.500])" in apart.words


def test_the_arms_are_held_to_a_bigram_counted_on_the_same_tokens():
    from anatomy_lib.growth.bytes import bigram_baselines
    from anatomy_lib.growth.report import bigram_floor

    # a stream that alternates two tokens: a bigram predicts it almost perfectly, a unigram cannot
    train = np.tile([1, 2], 500)
    blocks = torch.tensor(np.tile([1, 2], (3, 8)))
    table = bigram_baselines(train, blocks, vocab_size=4)["table"].set_index("model")["val_loss"]
    assert table["bigram"] < 0.05 and table["unigram (add-one)"] == pytest.approx(np.log(2), abs=0.01)
    losses = pd.DataFrame({"final_loss": [5.2, 6.1]}, index=["shallow", "uniform"])
    both = pd.DataFrame({"model": ["unigram (add-one)", "bigram"], "val_loss": [6.7, 5.06]})
    said = bigram_floor(losses, both)
    assert "scores 5.060 nats per token" in said and "2 of 2 arms end above it" in said and "no arm has learnt" in said
    one = bigram_floor(losses, both.assign(val_loss=[6.7, 5.5]))
    assert "1 of 2 arms end above it on average over seeds (uniform)." in one
    assert bigram_floor(losses, None) == ""


def test_the_random_source_control_says_how_close_its_draws_came():
    from anatomy_lib.growth.report import source_overlap_sentence

    columns = ["arm", "seed", "step", "layers_before", "layers_after", "sources"]
    events = pd.DataFrame([("developmental", 0, 10, 3, 8, "0,0,1,1,2"), ("random_source", 0, 10, 3, 8, "0,0,1,1,2"),
                           ("developmental", 1, 10, 3, 8, "0,0,1,1,2"), ("random_source", 1, 10, 3, 8, "0,1,1,2,2"),
                           ("developmental", 0, 20, 8, 12, "0,5,6,7"), ("random_source", 0, 20, 8, 12, "1,2,3,4"),
                           ("gstack", 0, 10, 3, 12, None)], columns=columns)
    said = source_overlap_sentence(events)
    assert "3 -> 8 layers (5 clones from 3 source layers): 90% of the clones shared on average, identical in 1 of " \
           "2 seeds" in said
    assert "8 -> 12 layers (4 clones from 8 source layers): 0% of the clones shared" in said
    assert source_overlap_sentence(events[events["arm"] != "random_source"]) == ""
