

def test_the_substitution_sentence_says_when_r2_does_not_order_the_damage():
    """The chapter's closing prose is computed: where the predictor with the best held-out R^2 is not the one
    that costs least, the sentence says R^2 does not explain the damage."""
    import pandas as pd

    from anatomy_lib.predictability import substitution_sentences

    fits = pd.DataFrame({"model": "specimen", "fit": "out-of-sample", "component": "q",
                         "predictor": ["ridge", "previous layer", "mean layer"], "r2": [-0.75, -1.0, -0.04]})
    sub = pd.DataFrame({"layers": "10-19", "fit": "out-of-sample", "predictor": ["ridge", "previous layer",
                        "mean layer"], "change_pct": [97527.0, 125.0, 820.0]})
    (sentence,) = substitution_sentences({"fits": fits, "substitution": sub})
    assert "highest R^2 (mean layer) is not the one that costs least (previous layer)" in sentence
    sub["change_pct"] = [97527.0, 900.0, 820.0]
    (sentence,) = substitution_sentences({"fits": fits, "substitution": sub})
    assert "is also the one that costs least" in sentence
