"""What a reader sees: result tables (headers, intervals, numbers without inf/nan/-0.0, the scroll wrapper) and
figures drawn for the content column (natural width, smallest text, legends and labels that do not collide)."""
import io

import matplotlib
import numpy as np
import pandas as pd
import pytest
from PIL import Image

from anatomy_lib.core import style
from anatomy_lib.core.display import estimate_text, readable, show_table

matplotlib.use("Agg")
import matplotlib.pyplot as plt


@pytest.mark.parametrize("value, spec, text", [
    (-0.0001, "+.1f", "0.0"), (0.0, "+.1%", "0.0%"), (-1e-5, ".1%", "0.0%"), (np.float64(-0.0), "+.2f", "0.00"),
    (float("inf"), ".2f", "unbounded"), (float("-inf"), ".2f", "-unbounded"), (np.nan, ".2f", "n/a"),
    (None, ".2f", "n/a"), (12345.6, "+,.0f", "+12,346"), (-0.26, "+.1f", "-0.3"), (3, "d", "3")])
def test_readable_numbers(value, spec, text):
    assert readable(value, spec) == text


def test_an_interval_that_excludes_zero_never_reads_as_touching_it():
    # chapter 5's alpha 0.9: the upper end -0.021 would print as "-0.0", which reads as an interval reaching zero
    assert estimate_text(-0.478, -0.923, -0.0214, unit="%") == "-0.5% [-0.9, -0.02]"
    assert estimate_text(-0.0004, -0.0012, 0.0003, decimals=3) == "-0.0004 [-0.001, +0.0003]"
    assert estimate_text(1107.2, 856.6, 1430.1, unit="%") == "+1,107.2% [+856.6, +1,430.1]"
    assert estimate_text(0.0, 0.0, 0.0) == "0.0 [0.0, 0.0]"  # an exact zero stays one, unsigned


def test_show_table_joins_intervals_and_names_columns():
    table = pd.DataFrame({"layer": [0, 1], "change_pct": [12.34, -0.001], "ci_low": [1.0, -2.0],
                          "ci_high": [20.0, np.inf], "class": ["input processor", None],
                          "block_influence": [0.1234, np.nan], "custom_name": [1.5, 2.5]})
    html = show_table(table, {"change_pct": "+,.1f"}).data
    assert html.startswith('<div class="anatomy-table">')
    assert "perplexity change (%) [95% interval]" in html and "ci_low" not in html and "ci_high" not in html
    # a nonzero estimate that would round to zero keeps its digits, as in a claim's text (estimate_text)
    assert "+12.3 [+1.0, +20.0]" in html and "-0.001 [-2.0, unbounded]" in html
    assert "custom name" in html and "block influence" in html and "anatomy class" not in html
    for bad in ("inf<", "nan", ">-0.0<", "-0.0 [", "None", "change_pct"):
        assert bad not in html, bad
    # a chapter's own words come from its vocabulary, not from the shared headers
    from anatomy_lib.importance import show_table as importance_table
    chapter = importance_table(table, {"change_pct": "+,.1f"}).data
    assert "anatomy class" in chapter and "Block Influence" in chapter and "custom name" in chapter


def test_show_table_custom_intervals_headers_and_index():
    table = pd.DataFrame({"speed": [1.5], "lo": [1.2], "hi": [1.9]}, index=pd.Index(["arm a"], name="arm"))
    html = show_table(table, {"speed": ".2f"}, headers={"speed": "speed-up (x)"}, intervals={"speed": ("lo", "hi")},
                      index=True, caption="a caption").data
    assert "speed-up (x)" in html and "1.50 [1.20, 1.90]" in html and "arm a" in html and "a caption" in html


def _png_width(fig) -> int:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", bbox_inches="tight")
    plt.close(fig)
    return Image.open(buffer).size[0]


def test_a_figure_with_a_long_legend_keeps_the_column_width():
    style.use_book_style()
    fig, ax = plt.subplots(figsize=(style.COLUMN, 3.5))
    for i in range(6):
        ax.plot(range(30), np.arange(30) * i, label=f"a fairly long series label number {i}")
    style.layer_ticks(ax, range(30))
    style.legend_below(ax, "", ncol=2)
    fig = style.finish_figure(fig, "title", "specimen")
    width = ax.get_position().width * fig.get_figwidth()
    assert width > 0.75 * style.COLUMN, "the legend must not squeeze the axes"
    assert _png_width(fig) <= 688, "wider than the book's content column at 1280 px"
    assert len(ax.get_xticks()) <= 26


def test_point_labels_never_overlap():
    style.use_book_style()
    fig, ax = plt.subplots(figsize=(style.COLUMN, 3.5))
    rng = np.random.default_rng(0)
    xs, ys = rng.normal(size=40) * 0.05, rng.normal(size=40) * 0.05  # a crowded cluster
    ax.scatter(xs, ys)
    style.label_points(ax, xs, ys, [f"L{i}" for i in range(40)])
    style.finish_figure(fig, "", None)
    renderer = fig.canvas.get_renderer()
    boxes = [t.get_window_extent(renderer) for t in ax.texts]
    assert 0 < len(boxes) < 40  # some labels placed, the crowded rest left out
    assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])
    assert ax.texts[0].get_text() == "L0", "labels are placed in the order given (most important first)"
    plt.close(fig)


def test_show_table_refuses_a_column_the_table_lacks():
    from anatomy_lib.core.display import show_table

    table = pd.DataFrame({"quantity": ["width"], "value": ["64"]})
    with pytest.raises(ValueError, match=r"no column 'parameter', 'meaning' in this table; its columns are "
                                         r"'quantity', 'value'"):
        show_table(table, left=("parameter", "value", "meaning"))
    with pytest.raises(ValueError, match="no column 'ppl'"):
        show_table(table, {"ppl": ".2f"})


def test_each_chapter_names_its_own_columns():
    """'steps' are steps to recover in chapter 6 and optimiser steps in chapter 7; the core's shared headers carry
    no chapter's word."""
    from anatomy_lib import growth, recovery
    from anatomy_lib.core.display import HEADERS, show_table

    table = pd.DataFrame({"layer": [1], "steps": [40]})
    assert "steps to recover" in recovery.show_table(table).data
    assert "optimiser steps" in growth.show_table(table).data and "recover" not in growth.show_table(table).data
    assert "steps" not in HEADERS and ">steps<" in show_table(table).data.replace(" ", "")


def test_a_parameter_table_lists_every_field_with_its_help():
    from dataclasses import fields

    from anatomy_lib.recovery import RecoveryParams

    params = RecoveryParams()
    table = params.table()
    assert list(table.columns) == ["parameter", "value", "meaning"]
    assert list(table["parameter"]) == [f.name for f in fields(params)]
    assert table.set_index("parameter").loc["steps", "value"] == str(params.steps)
    assert table["meaning"].str.len().gt(0).all()
