"""The seminar's slide decks (``anatomy_lib.seminar.slides``, written by ``book/_ext/slides.py``): a deck follows its
session's plan segment by segment; each output a segment shows is found on the chapter's page by the name the plan
gives it (or a slide sends to the page); nothing answers a prediction before it, session 7 keeps the small-budget
study for the groups, no answer is ever on a slide; every image resolves from the deck, and every text is escaped.
Read from fake built pages (``CHAPTERS``: each chapter's sections, cells and outputs as its built page has them,
cut to what the matching reads), so no build is needed; the browser walks and prints the real decks
(tests/browser/check_slides.mjs)."""
from __future__ import annotations

import contextlib
import html
import io
import re
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from anatomy_lib.seminar import PLANS, Question, chapter_outputs, deck, deck_index, inline, session_slides
from anatomy_lib.seminar.plans import (
    FINAL_LOSS_TABLE,
    FRONTIER_SECTION,
    SMALL_BUDGET_SECTION,
    SPEEDUP_CAPTION,
    SPEEDUP_COLUMN,
    SPEEDUP_TABLE,
)
from anatomy_lib.seminar.slides import PageFigure, PageTable, find_outputs, is_discussion, is_exercises, is_groups

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "book" / "_ext"))

PAGE = """<!DOCTYPE html><html><head><title>x</title></head><body>
<div class="sidebar"><h2>Contents</h2><img src="../_static/logo.png"></div>
<article class="bd-article"><section><h1>2. The importance map<a class="headerlink" href="#a">#</a></h1>
<div class="cell_output docutils container"><pre>loading</pre></div>
<h2>The first &amp; only map<a class="headerlink" href="#b">#</a></h2>
<div class="cell docutils container"><details><div class="cell_input"><pre>fig = imp.map_figure(x)</pre></div>
</details><div class="cell_output docutils container"><img alt="the map" src="../_images/first.png" /></div></div>
<details><summary>Solution</summary><div class="cell_output"><img src="../_images/folded.png"></div></details>
<h2>The operators</h2><p>Prose, then a figure.</p>
<div class="cell_output docutils container"><div class="output"><img src="../_images/second.png"><br></div></div>
<div class="cell_output"><div class="anatomy-static"><img src="../_images/explorer.png"></div></div>
<div class="cell_output"><table><tr><th>a</th></tr><tr><td>1</td></tr></table></div>
</section></article></body></html>"""


# ---- fake built pages ------------------------------------------------------------------------------------------
CLAIMS = ("Claim", "Paper", "Ours", "Verdict", "Note", "Rule", "Kind")  # a "Paper vs this book" table's columns


def fig(name: str) -> tuple:
    return ("figure", f"../_images/{name}.png")


def table(columns, rows: int = 4, caption: str = "", cell: int = 8) -> tuple:
    """A table of ``rows`` rows under its header, each cell ``cell`` characters long."""
    return ("table", tuple(columns), rows, caption, cell)


def claims(cell: int = 40, rows: int = 5) -> tuple:
    return table(CLAIMS, rows, cell=cell)


# {chapter: (title, [(level, heading, [(code, [outputs])])])}
FITS_CAPTION = "the fits: R² of each predictor, in-sample and held out, mean over layers"  # as chapter 3 shows it
CHAPTERS = {
    1: ("1. The specimen", [
        (2, "Anatomy at a glance", [('display(show_table(arch, left=("property", "value")))',
                                     [table(("property", "value"), 14)])]),
        (2, "Paper vs this book", [("show_claims(ch.paper_claims(tables))", [claims(15, 8)])]),
        (2, "Where the parameters are", [('display(show_table(budget, {"parameters": ",.0f"}))',
                                          [table(("part", "shape", "parameters", "share of the model (%)"), 14)])]),
        (2, "Baseline perplexity, with its uncertainty", [
            ('baseline = pd.DataFrame([{"perplexity": f"{ppl:.2f}", "95% interval": f"{low:.2f} .. {high:.2f}"}])\n'
             "display(show_table(baseline))", [table(("corpus", "blocks", "perplexity", "95% interval"), 1)])]),
        (2, "The weights, layer by layer", [("fig = ch.weight_norms_figure(norms, spec.name)", [fig("norms")])]),
    ]),
    2: ("2. The importance map", [
        (2, "The anatomy strip", [("fig = imp.anatomy_strip(paper_mode, imp.PAPER, lab.specimen.name)",
                                   [fig("strip")]),
                                  ("display(show_table(shown))", [table(("layer", "perplexity change (%)"), 30)])]),
        (2, "Paper vs this book", [("show_claims(imp.paper_claims(tables))", [claims(128)])]),
        (2, "Ablation modes compared", [("fig = imp.modes_figure(tables, MODES)", [fig("modes")])]),
        (2, "The operator panel: which removal did the paper measure?", [
            ("fig = imp.operators_figure(panel, thresholds)\ndisplay(show_table(imp.operator_table(panel)))",
             [fig("operators"), table(("specimen", "operator", "largest change"), 14)])]),
    ]),
    3: ("3. Weight predictability and the R²-perplexity paradox", [
        (2, "Ridge, its baselines and its null models", [
            ("fig = pred.r2_figure(fits, lab.specimen.name)", [fig("r2")]),
            ('means = fits.pivot_table(index=["model", "predictor", "fit"], columns="component", values="r2")\n'
             'display(show_table(means, caption=FITS_CAPTION, index=True))',
             [table(("model", "predictor", "fit", "q", "k", "v", "o"), 12, FITS_CAPTION)])]),
        (2, "The ridge sweep", [
            ('fig = pred.ridge_sweep_figure(tables["sweep"], levels, lab.specimen.name)\n'
             "display(show_table(sweep, caption=\"mean held-out R² of ridge over components and layers\"))",
             [fig("ridge-sweep"), table(("context", "16", "64"), 3,
                                        "mean held-out R² of ridge over components and layers")])]),
        (2, "The paradox, measured", [('sub = tables["substitution"]\ndisplay(show_table(sub))',
                                       [table(("layers", "predictor", "fit", "perplexity"), 8)])]),
        (2, "Could quantisation have erased predictability?", [("fig = qn.deltas_figure(qn.deltas(null), 3)",
                                                                [fig("quantisation")])]),
        (2, "Paper vs this book", [("show_claims(pred.paper_claims(tables, params))", [claims(57)])]),
    ]),
    4: ("4. Weight structure: the -0.50 and its null models", [
        (2, "The specimen beside its nulls", [
            ("fig = st.delta_correlation_figure(tables, lab.specimen.name)", [fig("delta-correlation")]),
            ('display(show_table(means, caption="mean delta correlation over layers"))',
             [table(("model", "lag", "q", "k"), 9, "mean delta correlation over layers")])]),
        (2, "Quantisation noise", [("display(show_table(noise))", [table(("component", "lag-1 correlation"), 7)])]),
        (3, "The quantisation null: fp32 models, quantised", [("fig = qn.deltas_figure(qn.deltas(null), 4)",
                                                               [fig("quantisation-null")])]),
        (2, "The functional view: do layers compensate?", [("fig = st.functional_figure(functional)",
                                                            [fig("functional")])]),
        (2, "Paper vs this book", [("show_claims(st.paper_claims(tables))", [claims(108)])]),
    ]),
    5: ("5. Manipulation strategies: zero, clone, mix, low-rank mix, scale", [
        (2, "One layer at a time: strategy by layer", [("fig = man.strategy_heatmap_figure(tables)",
                                                        [fig("strategy")])]),
        (2, "Alpha, t and rank", [(f'fig = man.knob_figure(tables["sweeps"], "{knob}", lab.specimen.name)',
                                   [fig(f"knob-{knob}")]) for knob in ("alpha", "t", "rank")]),
        (2, "The compression experiment", [
            ('fig = man.compression_figure(comp, (man.PAPER["alpha"], man.PAPER["scale_change_pct"]))',
             [fig("compression")]),
            ('text = ["label", "change_pct"]\n'
             'display(show_table(comp[text], caption="perplexity on the evaluation blocks"))\n'
             'facts = ["label", "fact_rate", "fact_change"]\n'
             "display(show_table(comp[facts],\n"
             '                   caption="the book\'s factual questions answered correctly"))',
             [table(("edit", "perplexity change (%)"), 15, "perplexity on the evaluation blocks"),
              table(("edit", "facts right", "facts right, change"), 15,
                    "the book's factual questions answered correctly")])]),
        (2, "What the manipulated models say", [
            ('for kind, rows in (("prompt", None), ("fact", 8)):\n    display(show_table(wide))',
             [table(("prompt", "intact", "zero"), 3, cell=60), table(("prompt", "intact", "zero"), 8)])]),
        (2, "Paper vs this book", [("show_claims(man.paper_claims(tables, params, thresholds))", [claims(214)])]),
    ]),
    6: ("6. Recovery speed", [
        (2, "Recovery curves", [("fig = rec.recovery_curves_figure(tables, lab.specimen.name)", [fig("curves")]),
                                ("display(show_table(runs))", [table(("layer", "class", "steps to recover"), 30)])]),
        (2, "The sham: what fine-tuning does by itself", [("display(show_table(rec.sham_drift(tables)))",
                                                           [table(("layer", "largest |move| (nats)"), 9)])]),
        (2, "Does recovery follow importance?", [
            ("fig = rec.recovery_vs_importance_figure(tables, importance)\n"
             "display(show_table(rec.rank_correlations(tables, importance)))",
             [fig("recovery-importance"), table(("recovery measure", "Spearman ρ [95% interval]"), 4)])]),
        (2, "Paper vs this book", [("show_claims(rec.paper_claims(tables))", [claims(208)])]),
    ]),
    7: ("7. Growth Transformer Training, at matched compute", [
        (2, FRONTIER_SECTION, [
            ("if gx.frontier_complete(frontier_tables):\n"
             "    fig = gx.frontier_figure(frontier_tables, frontier_params.c_star)\n"
             "    fig = gx.speedup_figure(gx.frontier_speedups(frontier_tables), gx.PAPER_SPEEDUP,\n"
             '                            specimen_name="byte-level models (sotu)")\n'
             "    display(show_table(gx.frontier_speedup_summary(frontier_tables, frontier_params),\n"
             f'                       caption="{SPEEDUP_CAPTION}"))\n'
             "    display(show_claims(gx.frontier_claims(frontier_tables, frontier_params)))\n"
             "else:\n"
             '    print("The figures and verdicts appear once the sweep is complete.")',
             [fig("frontier"), fig("speedup-against-best-depth"),
              table(("arm", "budget", SPEEDUP_COLUMN, "vs the frontier", "frontier depth"), 12, SPEEDUP_CAPTION),
              claims(209, 3)])]),
        (3, "Does the speed-up grow with size?", [("fig = gx.size_figure(sizes)", [fig("sizes")])]),
        (2, SMALL_BUDGET_SECTION.replace("'", "’"), [
            ('display(show_table(gx.parameter_table(params, len(data.train)), left=("quantity", "value")))\n'
             'tables = gx.growth(params)\ncurves, runs = tables["curves"], tables["runs"]',
             [table(("quantity", "value"), 5)])]),
        (2, "Loss against compute", [
            ("fig = gx.growth_curves_figure(curves, specimen_name=name)", [fig("growth-curves")]),
            ("display(show_table(gx.final_losses(runs)))\n"
             'display(show_table(per_seed, caption="final validation loss of every seed"))',
             [table(("arm", "final loss (nats/token)", "minus uniform (nats/token)", "seeds"), 6),
              table(("seed", "uniform", "shallow"), 3, "final validation loss of every seed")])]),
        (2, "Compute to reach a target", [
            ("fig = gx.compute_to_target_figure(targets)\ndisplay(show_table(targets))",
             [fig("compute-to-target"), table(("target", "arm", "speed-up [95% interval]"), 9)])]),
        (2, "Paper vs this book", [("show_claims(gx.paper_claims(tables, params))", [claims(168)])]),
        (2, "Along the compute axis", [("fig = gx.budget_sweep_figure(sweep, gx.fits(sweep), cross)",
                                        [fig("budget-sweep")])]),
    ]),
    8: ("8. Atlas: which findings are SmolLM2’s, and which are transformers’", [
        (2, "The two real specimens", [("display(show_table(pd.concat(facts, axis=1), index=True))",
                                         [table(("property", "smollm2", "gemma3"), 14)])]),
        (2, "Every headline measure on one depth axis", [("fig = figures.atlas_figure(atlas)", [fig("atlas")])]),
        (2, "Which of the paper’s claims hold on which model", [
            ("display(HTML(figures.claims_table_html(claims, names)))",
             [table(("Chapter", "Claim", "Paper", "smollm2", "gemma3"), 39)])]),
    ]),
    9: ("9. Verdicts: the paper, claim by claim", [
        (1, None, [("table = verdicts.claims_by_specimen([lab] + others)\n"
                    "show_findings(verdicts.headline(table))", [])]),
        (2, "Every claim", [("display(HTML(verdicts.book_table(table).to_html(escape=False)))",
                             [table(("Section", "Claim", "Paper", "Ours", "Verdict (smollm2, quick)"), 39)])]),
        (2, "Experiments, counted once", [("display(show_table(verdicts.experiments(table)))",
                                           [table(("chapter", "experiment", "claims", "standing"), 9)])]),
        (3, "Claims by chapter and measurement verdict", [
            ("display(show_table(verdicts.verdict_counts(table), index=True))",
             [table(("chapter", "reproduced", "not reproduced", "inconclusive"), 8)])]),
        (2, "How verdicts are computed", [("display(show_table(rules_table()))",
                                           [table(("rule", "reproduced", "inconclusive"), 7)])]),
    ]),
}


def anchor(heading: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", heading.lower()).strip("-")


def _cell(code: str, outputs) -> str:
    """A code cell as the built book writes it: the source folded (hide-input), the outputs after it."""
    shown = []
    for output in outputs:
        if output[0] == "figure":
            shown.append(f'<img alt="{output[1]}" src="{output[1]}" />')
        else:
            _, columns, rows, caption, width = output
            head = "".join(f'<th class="col_heading">{html.escape(c)}</th>' for c in columns)
            body = "".join("<tr>" + "".join(f"<td>{'x' * width}</td>" for _ in columns) + "</tr>"
                           for _ in range(rows))
            cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
            shown.append(f'<div class="output text_html"><div class="anatomy-table"><style>td{{}}</style>'
                         f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div></div>")
    if not outputs:  # findings: a list, neither a figure nor a table
        shown.append('<ul class="simple"><li><p>Of the paper’s 9 experiments, 2 not reproduced.</p></li></ul>')
    return ('<div class="cell tag_hide-input docutils container"><details class="admonition hide above-input">'
            "<summary>Show code cell source</summary>"
            '<div class="cell_input docutils container"><div class="highlight-ipython3 notranslate">'
            f'<div class="highlight"><pre><span></span>{html.escape(code)}\n</pre></div></div></div></details>'
            f'<div class="cell_output docutils container">{"".join(shown)}</div></div>')


def chapter_page(chapter: int) -> str:
    """A chapter's fake built page: the theme's sidebar, then the article with its sections and cells, an
    explorer and a folded solution (neither of which a deck shows)."""
    return built_page(*CHAPTERS[chapter])


# the seminar guide's fake built page: course-wide tables, then per session its plan and its groups' verdicts
GUIDE_PAGE_SECTIONS = ("Seminar guide", [
    (2, "How long each chapter takes", [("display(show_table(seminar.execution_times()))",
                                         [table(("chapter", "specimen", "minutes"), 10,
                                                "minutes to recompute a chapter's stored results")])]),
    (2, "Sessions", []),
    *[(3, f"Session {n}: {PLANS[n].title} (chapter {n})", [
        ("display(seminar.session_table(number))", [table(("minutes", "activity"), 6, f"Session {n}, 90 minutes")]),
        ("display(show_table(table, caption=...))",
         [table(("claim", "the book's specimen", "Gemma-3-270M"), 4,
                f"session {n}: {PLANS[n].title.lower()}: the groups' verdicts, side by side")])])
      for n in range(1, 8)],
])


def guide_outputs():
    return chapter_outputs(built_page(*GUIDE_PAGE_SECTIONS))


def built_page(title: str, sections) -> str:
    """A fake built page of the book: ``title`` and its ``sections`` ([(level, heading, [(code, [outputs])])])."""
    parts = [f'<section id="{anchor(title)}"><h1>{html.escape(title)}<a class="headerlink" '
             f'href="#{anchor(title)}">#</a></h1><p>The chapter opens.</p>']
    depth = 1
    for level, heading, cells in sections:
        if heading is not None:
            while depth >= level:
                parts.append("</section>")
                depth -= 1
            parts.append(f'<section id="{anchor(heading)}"><h{level}>{html.escape(heading)}<a class="headerlink" '
                         f'href="#{anchor(heading)}" title="Link to this heading">#</a></h{level}><p>Prose.</p>')
            depth = level
        parts.extend(_cell(code, outputs) for code, outputs in cells)
    parts.append('<div class="cell_output"><div class="anatomy-static"><img src="../_images/explorer.png"></div></div>'
                 '<details><summary>Solution</summary><div class="cell docutils container">'
                 '<div class="cell_output"><img src="../_images/solution.png"></div></div></details>')
    parts.append("</section>" * depth)
    return ('<!DOCTYPE html><html><head><title>x</title></head><body><div class="sidebar"><h2>Contents</h2>'
            '<img src="../_images/logo.png"></div><article class="bd-article">' + "".join(parts)
            + "</article></body></html>")


def chapter_file(chapter: int) -> str:
    """Where the book writes the chapter's page, relative to the site's root (the extension globs ``0N_*``)."""
    return f"book/{chapter:02d}_chapter.html"


def images(chapter: int) -> list[str]:
    """The images a chapter's page shows, relative to the site's root."""
    return [o[1].replace("../", "") for _, _, cells in CHAPTERS[chapter][1] for _, outputs in cells
            for o in outputs if o[0] == "figure"]


def outputs_of(chapter: int):
    return chapter_outputs(chapter_page(chapter))


def slides_of(number: int):
    plan = PLANS[number]
    if not plan.chapter:
        return session_slides(plan, None, "", f"slides/session-{number}.html", guide_outputs())
    return session_slides(plan, outputs_of(plan.chapter), chapter_file(plan.chapter), f"slides/session-{number}.html",
                          guide_outputs())


def _site(tmp_path: Path, chapters=(2,)) -> Path:
    """A fake built site: the chapters' pages and their images, under ``tmp_path``."""
    (tmp_path / "book").mkdir(exist_ok=True)
    (tmp_path / "_images").mkdir(exist_ok=True)
    for chapter in chapters:
        (tmp_path / chapter_file(chapter)).write_text(chapter_page(chapter))
        for image in images(chapter):
            (tmp_path / image).write_bytes(b"\x89PNG")
    (tmp_path / "book" / "seminar.html").write_text(built_page(*GUIDE_PAGE_SECTIONS))
    return tmp_path


def _sources(slides) -> list[str]:
    return [src for s in slides for src in re.findall(r'<img[^>]*src="([^"]+)"', s.body)]


# ---- the page ----------------------------------------------------------------------------------------------------
def test_the_page_gives_its_outputs_in_order_under_their_headings():
    outputs = chapter_outputs(PAGE)
    assert outputs.title == "2. The importance map"
    assert [(f.heading, f.src, f.anchor) for f in outputs.figures] == [
        ("The first & only map", "../_images/first.png", "b"), ("The operators", "../_images/second.png", "")]
    assert outputs.figures[0].code == "fig = imp.map_figure(x)" and outputs.figures[0].maker == "map_figure"
    assert outputs.figures[0].path == ("2. The importance map", "The first & only map")
    assert [t.rows for t in outputs.tables] == [(("a",), ("1",))]
    assert [(s.heading, s.level) for s in outputs.sections] == [
        ("2. The importance map", 1), ("The first & only map", 2), ("The operators", 2)]


def test_long_tables_are_read_and_marked_too_big_for_a_slide():
    outputs = outputs_of(8)
    sizes = {t.heading: t.too_big for t in outputs.tables}
    assert sizes == {"The two real specimens": "", "Which of the paper’s claims hold on which model": "39 rows"}
    wide = [t for t in outputs_of(5).tables if t.heading == "Paper vs this book"]
    assert wide[0].too_big == "a cell of 214 characters"


def test_a_table_whose_rows_wrap_past_a_slide_is_too_big():
    short = PageTable("h", "", (("a", "b"),) + (("1", "2"),) * 12)
    wide = PageTable("h", "", (("a" * 60, "b" * 60),) + (("1" * 60, "2" * 60),) * 12)  # each row on two lines
    assert short.too_big == "" and wide.too_big == "12 rows, wrapped onto about 26 lines"


def test_a_cell_that_draws_several_outputs_gives_each_its_own_statement():
    outputs = outputs_of(7)
    frontier = [o for o in outputs.outputs if o.heading == FRONTIER_SECTION]
    assert [o.maker for o in frontier] == ["frontier_figure", "speedup_figure", "frontier_speedup_summary",
                                           "frontier_claims"]
    assert "speedup" not in frontier[0].code and "frontier_figure" not in frontier[1].code
    # folded solutions and explorers are not outputs; the sidebar is outside the article
    assert not {"../_images/explorer.png", "../_images/solution.png", "../_images/logo.png"} \
        & {f.src for f in outputs.figures}


# ---- a name on the page ------------------------------------------------------------------------------------------
def _found(chapter: int, name: str) -> list[str]:
    """What a name finds: each output as its maker or caption (a figure as its image's name)."""
    return [o.src.rsplit("/", 1)[-1][:-4] if isinstance(o, PageFigure) else o.caption or o.maker
            for o in find_outputs(name, outputs_of(chapter)).outputs]


@pytest.mark.parametrize("chapter, name, expected", [
    (1, "the budget table", [""]),  # the table the cell shows from ``budget``
    (1, "the perplexity interval", [""]),
    (2, "the operators figure", ["operators"]),
    (2, "the figure in 'The anatomy strip'", ["strip"]),  # a section, quoted
    (3, "the in-sample against held-out R² figure", ["r2"]),
    # not the paradox's table, which has a fit column too
    (3, "the fits table", [FITS_CAPTION]),
    (4, "the delta-correlation figure", ["delta-correlation"]),
    (5, "the alpha curves", ["knob-alpha"]),
    (5, "the facts table", ["the book's factual questions answered correctly"]),
    (6, "the recovery curves with their shams", ["curves"]),
    (6, "the recovery-against-importance figure", ["recovery-importance"]),
    (7, "the frontier figure", ["frontier"]),  # not the speed-up figure drawn in the same cell
    (7, SPEEDUP_TABLE, [SPEEDUP_CAPTION]),
    (7, FINAL_LOSS_TABLE, ["final_losses"]),  # not the per-seed table beside it
    (7, f"the table in '{SMALL_BUDGET_SECTION}'", ["parameter_table"]),  # a straight quote for the page's curly one
    (7, "the claims table", ["frontier_claims", "paper_claims"]),  # a tie: both, in page order
    (8, "the atlas's claims table", ["claims_table_html"]),
])
def test_a_name_finds_the_output_the_plan_means(chapter, name, expected):
    assert _found(chapter, name) == expected


def test_a_name_the_page_does_not_have_finds_nothing_and_says_where_to_look():
    outputs = outputs_of(2)
    found = find_outputs("the importance map", outputs)
    assert not found.outputs and "no figure" in found.reason
    quoted = find_outputs("the figure in 'A section the page lost'", outputs)
    assert not quoted.outputs and "'A section the page lost'" in quoted.reason
    headline = find_outputs("the headline", outputs_of(9))  # findings: a list in a cell under the title
    assert not headline.outputs and [s.heading for s in headline.where] == ["9. Verdicts: the paper, claim by claim"]
    columns = find_outputs("the final-loss table in 'Loss against compute' (its columns final_loss and lost)",
                           outputs_of(7))
    assert not columns.outputs and [s.heading for s in columns.where] == ["Loss against compute"]


# ---- the deck follows the plan ---------------------------------------------------------------------------------
def test_every_plan_has_the_segments_a_deck_marks():
    for number, plan in PLANS.items():
        segments = plan.segments
        assert sum(s.predict for s in segments) == 1, number
        assert sum(map(is_groups, segments)) == 1, number
        assert sum(map(is_discussion, segments)) == 1, number
        assert sum(is_exercises(plan, s) for s in segments) == (1 if plan.chapter else 0), number


@pytest.mark.parametrize("number", sorted(PLANS))
def test_a_deck_runs_in_the_order_of_its_plan(number):
    plan = PLANS[number]
    slides = slides_of(number)
    assert slides[0].kind == "title" and slides[-1].kind == "homework"
    middle = slides[1:-1]
    assert all(s.segment is not None for s in middle)
    assert [s.segment for s in middle] == sorted(s.segment for s in middle)  # never back to an earlier segment
    openers = [s for s in middle if s.kind == "segment"]
    assert [s.segment for s in openers] == list(range(len(plan.segments)))
    assert all(middle[i].kind == "segment" for i in range(len(middle))
               if i == 0 or middle[i].segment != middle[i - 1].segment)  # each segment opens with its slide
    start = 0
    for index, (segment, opener) in enumerate(zip(plan.segments, openers)):
        assert f"Minutes {start} to {start + segment.minutes} ({segment.minutes} min)" in opener.body
        assert inline(segment.activity) in opener.body
        start += segment.minutes
        kinds = [s.kind for s in middle if s.segment == index][1:]
        if index == 0:
            assert kinds[0] == "introduce"
        if segment.predict:
            assert kinds[:len(plan.predictions)] == ["predict"] * len(plan.predictions)
        if is_discussion(segment):
            assert kinds[-1] == "discussion"
        if is_exercises(plan, segment):
            assert all(f"<code>{k}</code>" in opener.body for k in plan.exercise_keys)
        if is_groups(segment):
            for group in plan.groups:
                assert f"<b>{inline(group)}</b>" in opener.body
                if group in plan.group_tasks:
                    assert inline(plan.group_tasks[group]) in opener.body
        # every output the segment shows: a slide with it, or one that sends to the page, in the plan's order
        shown = [s for s in middle if s.segment == index and s.kind in ("figure", "table", "missing")]
        named = []
        for slide in shown:
            names = [n for n in segment.shows if slide.title == n[:1].upper() + n[1:]
                     or f'<p class="shows">{inline(n)} ·' in slide.body]
            assert len(names) == 1, (number, index, slide.title)
            named.append(names[0])
        assert list(dict.fromkeys(named)) == list(segment.shows), (number, index)
    for kind in ("discussion", "homework", "title"):
        assert [s.kind for s in slides].count(kind) == 1
    assert [s.kind for s in slides].count("predict") == len(plan.predictions)


@pytest.mark.parametrize("number", sorted(PLANS))
def test_nothing_answers_a_prediction_before_it_is_written(number):
    plan = PLANS[number]
    slides = slides_of(number)
    last_prediction = max(i for i, s in enumerate(slides) if s.kind == "predict")
    assert not any(s.kind in ("figure", "table") for s in slides[:last_prediction])
    for slide, question in zip([s for s in slides if s.kind == "predict"], plan.predictions):
        assert "<img" not in slide.body and "<table" not in slide.body
        assert inline(question.text) in slide.body and question.answered_by not in slide.body


def test_an_output_shown_before_the_predictions_is_held_back():
    plan = PLANS[3]
    early = replace(plan.segments[0], shows=("the fits table",))
    slides = session_slides(replace(plan, segments=(early,) + plan.segments[1:]), outputs_of(3),
                            chapter_file(3), "slides/session-3.html")
    first = [s for s in slides if s.segment == 0]
    assert not any(s.kind in ("figure", "table") for s in first)
    assert any(s.kind == "missing" and "Held back" in s.body for s in first)


def test_session_three_shows_the_fits_and_claims_its_plan_names_and_nothing_else():
    slides = slides_of(3)
    live = next(i for i, s in enumerate(PLANS[3].segments) if "the fits table" in s.shows)
    shown = [(s.kind, s.title) for s in slides if s.segment == live and s.kind != "segment"]
    assert shown == [("figure", "Ridge, its baselines and its null models"),
                     ("table", "Ridge, its baselines and its null models")]
    assert FITS_CAPTION in slides[[s.segment for s in slides].index(live) + 2].body
    assert _sources(slides) == ["../_images/r2.png"]  # no ridge sweep, no quantisation figure
    groups = [s for s in slides if s.kind == "table" and s.segment == live + 2]
    # the groups' verdicts side by side, from the guide (under session 3, not another session's), linked there
    assert [s.title for s in groups] == [f"Session 3: {PLANS[3].title} (chapter 3)"]
    assert "session 3: weight predictability: the groups&#x27; verdicts, side by side" in groups[0].body
    assert f'href="../book/seminar.html#{anchor(groups[0].title)}"' in groups[0].body


def test_a_deck_without_the_guide_sends_its_tables_to_the_guide():
    plan = PLANS[3]
    slides = session_slides(plan, outputs_of(3), chapter_file(3), "slides/session-3.html")
    groups = next(i for i, s in enumerate(plan.segments) if is_groups(s))
    (missing,) = [s for s in slides if s.segment == groups and s.kind == "missing"]
    assert "the seminar guide was not read" in missing.body and "../book/seminar.html" in missing.body


def test_session_zero_shows_the_guide_s_course_wide_table():
    shown = [s for s in slides_of(0) if s.kind == "table"]
    assert [s.title for s in shown] == ["How long each chapter takes"]


def test_session_seven_shows_the_frontier_live_and_keeps_the_small_budget_study_for_the_groups():
    plan = PLANS[7]
    slides = slides_of(7)
    groups = next(i for i, s in enumerate(plan.segments) if is_groups(s))
    live = next(i for i, s in enumerate(plan.segments) if SPEEDUP_TABLE in s.shows)
    before = [s for s in slides if s.segment is not None and s.segment < groups]
    # before the groups: the frontier figure and the speed-up table, from the frontier's section only
    outputs = [s for s in before if s.kind in ("figure", "table", "missing")]
    assert [(s.kind, s.segment, s.title) for s in outputs] == [("figure", live, FRONTIER_SECTION),
                                                               ("table", live, FRONTIER_SECTION)]
    assert _sources(before) == ["../../_images/frontier.png"] or _sources(before) == ["../_images/frontier.png"]
    table = outputs[1].body
    assert SPEEDUP_CAPTION.replace("'", "&#x27;") in table
    assert f"<th class=named>{SPEEDUP_COLUMN}</th>" in table  # the column the notes answer from, marked
    assert "speedup-against-best-depth" not in "".join(s.body for s in slides)  # a figure the plan never shows
    for small in ("growth-curves", "compute-to-target", "budget-sweep"):
        assert small not in "".join(s.body for s in before)
    # the groups: both named with their tasks; then the final-loss table; the claims tables sent to the page
    opener = next(s for s in slides if s.kind == "segment" and s.segment == groups)
    assert all(f"<b>{inline(g)}</b>: {inline(t)}" in opener.body for g, t in plan.group_tasks.items())
    after = [s for s in slides if s.segment == groups and s.kind != "segment"]
    assert [s.kind for s in after] == ["table", "missing"]
    assert after[0].title == "Loss against compute" and "final loss (nats/token)" in after[0].body
    assert "final validation loss of every seed" not in after[0].body
    assert "#growth-where-the-question-has-an-answer" in after[1].body and "#paper-vs-this-book" in after[1].body


def test_an_output_not_on_a_slide_sends_to_its_place_on_the_page():
    plan = PLANS[2]
    groups = next(i for i, seg in enumerate(plan.segments) if is_groups(seg))
    segments = list(plan.segments)
    segments[groups] = replace(segments[groups], shows=("the claims table",))  # too big for a slide
    slides = session_slides(replace(plan, segments=tuple(segments)), outputs_of(2), chapter_file(2),
                            "slides/session-2.html", guide_outputs())
    missing = {s.title: s.body for s in slides if s.kind == "missing"}
    assert set(missing) == {"The claims table"}  # the anatomy strip and the modes figure are found by their sections
    assert "Too big for a slide (a cell of 128 characters)" in missing["The claims table"]
    assert not [s for s in slides_of(2) if s.kind == "missing"]  # the plan's own: all on slides
    live = next(i for i, seg in enumerate(plan.segments) if seg.shows)
    segments = list(plan.segments)
    segments[live] = replace(segments[live], shows=("the figure in 'No such section'",))
    elsewhere = session_slides(replace(plan, segments=tuple(segments)), outputs_of(2), chapter_file(2),
                               "slides/session-2.html")
    lost = {s.title: s.body for s in elsewhere if s.kind == "missing"}["The figure in 'No such section'"]
    assert "Not found on the chapter's page" in lost and 'href="../book/02_chapter.html"' in lost
    assert 'href="../book/02_chapter.html#paper-vs-this-book"' in missing["The claims table"]
    zero = session_slides(PLANS[0], None, "", "slides/session-0.html")  # the guide not read: sent there
    zero = [s for s in zero if s.kind == "missing"]
    assert len(zero) == 1 and 'href="../book/seminar.html"' in zero[0].body


# ---- no answer on a slide --------------------------------------------------------------------------------------
def _refuses(*_):
    raise AssertionError("a deck computed an answer")


@pytest.mark.parametrize("number", sorted(PLANS))
def test_a_deck_computes_no_answer(number):
    """Every answer the plan holds (predictions, discussion, tasks set in class, the homework's model answer) is
    a function of the stored results: a deck that calls none shows none."""
    plan = PLANS[number]
    plan = replace(plan, predictions=tuple(replace(q, answer=_refuses) for q in plan.predictions),
                   discussion=tuple(replace(q, answer=_refuses) for q in plan.discussion),
                   segments=tuple(replace(s, answer=_refuses if s.answer else None) for s in plan.segments),
                   homework=replace(plan.homework, model_answer=_refuses))
    outputs = outputs_of(plan.chapter) if plan.chapter else None
    text = deck(plan, outputs, chapter_file(plan.chapter) if plan.chapter else "")
    assert inline(plan.homework.question) in text


@pytest.fixture(scope="module")
def evidence():
    """The answers' evidence over the committed store (``ANATOMY_DATA`` set for the module)."""
    from anatomy_lib import open_lab
    from anatomy_lib.seminar import Evidence

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ANATOMY_DATA", str(ROOT / "data"))
        with contextlib.redirect_stdout(io.StringIO()):
            yield Evidence(open_lab("default", "quick", progress=False).read_only())


def test_no_model_answer_is_in_any_deck(evidence, monkeypatch):
    from anatomy_lib.core.adapter import GEMMA_SUPPORTED

    monkeypatch.setenv("ANATOMY_DATA", str(ROOT / "data"))
    decks = {n: html.unescape(re.sub(r"<[^>]+>", "", "".join(s.title + " " + s.body for s in slides_of(n))))
             for n in PLANS}
    for number, plan in PLANS.items():
        if number in (1, 8) and not GEMMA_SUPPORTED:
            continue  # the model answer reads Gemma 3, which needs transformers >= 5
        answers = [plan.homework.model_answer(evidence)] + [s.answer(evidence) for s in plan.segments if s.answer]
        for answer in answers:
            text = html.unescape(re.sub(r"<[^>]+>", "", inline(answer)))
            sentences = [p.strip() for p in re.split(r"(?<=[.;:])\s", text) if len(p.strip()) > 40]
            for other, shown in decks.items():
                assert not [p for p in sentences if p in shown], (number, other)


# ---- the deck as a file ----------------------------------------------------------------------------------------
def test_every_image_and_link_resolves_from_the_deck(tmp_path):
    site = _site(tmp_path, chapters=range(1, 10))
    (site / "slides").mkdir()
    (site / "slides" / "index.html").write_text(deck_index(PLANS.values()))
    for number, plan in PLANS.items():
        page = chapter_file(plan.chapter) if plan.chapter else ""
        outputs = outputs_of(plan.chapter) if plan.chapter else None
        text = deck(plan, outputs, page, guide=guide_outputs())
        written = site / "slides" / f"session-{number}.html"
        written.write_text(text)
        for src in re.findall(r'<img[^>]*src="([^"]+)"', text):
            assert (written.parent / src).resolve().is_file(), (number, src)
        for href in re.findall(r'href="([^"#]+)', text):
            assert (written.parent / href).resolve().is_file(), (number, href)
        assert "http" not in text and "<script src" not in text and "<link" not in text  # nothing from a network
        segments = [int(s) for s in re.findall(r'data-segment="(\d+)"', text)]
        assert segments == sorted(segments) and set(segments) == set(range(1, len(plan.segments) + 1))


def test_a_deck_escapes_its_text():
    plan = replace(PLANS[1], title="<b>bold</b> & co",
                   predictions=(Question("Is 1 < 2 <script>?", "the `budget` table", lambda e: ""),),
                   discussion=(Question("A & B", "x", lambda e: ""),))
    page = PAGE.replace("The operators", "x&lt;y &amp; &quot;z&quot;")
    plan = replace(plan, segments=tuple(replace(s, shows=("the table in 'x<y & \"z\"'",)) if s.shows else s
                                        for s in plan.segments))
    text = deck(plan, chapter_outputs(page), "book/02_importance.html")
    assert "<b>bold</b>" not in text and "&lt;b&gt;bold&lt;/b&gt; &amp; co" in text
    assert "<script>?" not in text and "Is 1 &lt; 2 &lt;script&gt;?" in text
    assert "<h1>x&lt;y &amp; &quot;z&quot;</h1>" in text  # the section's heading as a table slide's title
    assert text.count("<script>") == 1  # the deck's own


def test_the_extension_writes_every_deck_and_the_index(tmp_path):
    import slides as extension  # book/_ext/slides.py, on the path above

    site = _site(tmp_path, chapters=range(1, 10))
    lines = extension.write_decks(site)
    assert len(lines) == len(PLANS)
    for number in PLANS:
        assert (site / "slides" / f"session-{number}.html").is_file()
    assert lines[7].startswith(f"session 7 ({len(slides_of(7))} slides: 1 figure, 2 tables, 1 to the page)")
    index = (site / "slides" / "index.html").read_text()
    assert re.findall(r'href="(session-\d+\.html)"', index) == [f"session-{n}.html" for n in sorted(PLANS)]
    assert deck_index([PLANS[0]]).count("<li>") == 1


def test_a_missing_chapter_page_sends_every_output_to_the_page(tmp_path):
    import slides as extension

    site = _site(tmp_path, chapters=())
    (site / "book" / "seminar.html").unlink()
    lines = extension.write_decks(site)
    assert all("0 figures, 0 tables" in line for line in lines)
    assert "<img" not in (site / "slides" / "session-7.html").read_text()


def test_a_table_slide_is_a_page_table():
    assert all(isinstance(t, PageTable) for t in outputs_of(9).tables)
