"""The seminar's slide decks (``anatomy_lib.seminar.slides``, written by ``book/_ext/slides.py``): a deck's slides
run in the session's order, nothing that answers a prediction comes before it, every image resolves from the deck,
and every text is escaped. Read from a small fake built page, so no build is needed; the browser walks and prints
the real decks (tests/browser/check_slides.mjs)."""
from __future__ import annotations

import re
import sys
from dataclasses import replace
from pathlib import Path

from anatomy_lib.seminar import PLANS, Question, chapter_outputs, deck, deck_index, session_slides

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "book" / "_ext"))

PAGE = """<!DOCTYPE html><html><head><title>x</title></head><body>
<div class="sidebar"><h2>Contents</h2><img src="../_static/logo.png"></div>
<article class="bd-article"><section><h1>2. The importance map<a class="headerlink" href="#a">#</a></h1>
<div class="cell_output docutils container"><pre>loading</pre></div>
<h2>The first &amp; only map<a class="headerlink" href="#b">#</a></h2>
<div class="cell_output docutils container"><img alt="the map" src="../_images/first.png" /></div>
<details><summary>Solution</summary><div class="cell_output"><img src="../_images/folded.png"></div></details>
<h2>The operators</h2><p>Prose, then a figure.</p>
<div class="cell_output docutils container"><div class="output"><img src="../_images/second.png"><br></div></div>
<div class="cell_output"><div class="anatomy-static"><img src="../_images/explorer.png"></div></div>
<div class="cell_output"><table><tr><th>a</th></tr><tr><td>1</td></tr></table></div>
</section></article></body></html>"""


def _site(tmp_path: Path) -> tuple[Path, str]:
    """A fake built site: one chapter page and its two images; (the site's root, the page's path in it)."""
    (tmp_path / "book").mkdir()
    (tmp_path / "_images").mkdir()
    for name in ("first.png", "second.png", "folded.png", "explorer.png"):
        (tmp_path / "_images" / name).write_bytes(b"\x89PNG")
    (tmp_path / "book" / "02_importance.html").write_text(PAGE)
    return tmp_path, "book/02_importance.html"


def test_the_page_gives_its_figures_in_order_under_their_headings(tmp_path):
    outputs = chapter_outputs(PAGE)
    assert outputs.title == "2. The importance map"
    assert [(f.heading, f.src) for f in outputs.figures] == [("The first & only map", "../_images/first.png"),
                                                              ("The operators", "../_images/second.png")]
    assert [t.rows for t in outputs.tables] == [(("a",), ("1",))]


def test_a_deck_runs_in_the_sessions_order(tmp_path):
    site, page = _site(tmp_path)
    plan = PLANS[2]
    slides = session_slides(plan, chapter_outputs(PAGE), page, "slides/session-2.html")
    kinds = [s.kind for s in slides]
    assert kinds == (["title", "introduce"] + ["predict"] * len(plan.predictions) + ["figure", "figure"]
                     + ["discussion", "homework"])
    assert [s.title for s in slides if s.kind == "figure"] == ["The first & only map", "The operators"]
    # nothing that answers a prediction before (or on) the prediction slides: no figure, no table, no answer
    last_prediction = max(i for i, k in enumerate(kinds) if k == "predict")
    assert min(i for i, k in enumerate(kinds) if k == "figure") > last_prediction
    for slide, question in zip([s for s in slides if s.kind == "predict"], plan.predictions):
        assert "<img" not in slide.body and "<table" not in slide.body
        assert question.answered_by not in slide.body
    assert "<img" not in slides[0].body + slides[1].body


def test_every_image_resolves_from_the_deck(tmp_path):
    site, page = _site(tmp_path)
    text = deck(PLANS[2], chapter_outputs(PAGE), page)
    (site / "slides").mkdir()
    written = site / "slides" / "session-2.html"
    written.write_text(text)
    sources = re.findall(r'<img[^>]*src="([^"]+)"', text)
    assert sources == ["../_images/first.png", "../_images/second.png"]
    assert all((written.parent / s).resolve().is_file() for s in sources)
    links = re.findall(r'href="([^"#]+)"', text)
    assert "../book/02_importance.html" in links and (written.parent / "../book/02_importance.html").is_file()
    assert "http" not in text and "<script src" not in text and "<link" not in text  # nothing from a network


def test_a_deck_escapes_its_text():
    plan = replace(PLANS[1], title="<b>bold</b> & co",
                   predictions=(Question("Is 1 < 2 <script>?", "the `budget` table", lambda e: ""),),
                   discussion=(Question("A & B", "x", lambda e: ""),))
    outputs = chapter_outputs(PAGE.replace("The operators", "x&lt;y &amp; &quot;z&quot;"))
    text = deck(plan, outputs, "book/02_importance.html")
    assert "<b>bold</b>" not in text and "&lt;b&gt;bold&lt;/b&gt; &amp; co" in text
    assert "<script>?" not in text and "Is 1 &lt; 2 &lt;script&gt;?" in text
    assert "x&lt;y &amp; &quot;z&quot;" in text
    assert text.count("<script>") == 1  # the deck's own


def test_session_zero_has_no_chapter_slides():
    kinds = [s.kind for s in session_slides(PLANS[0])]
    assert kinds == ["title", "introduce", "predict", "discussion", "homework"]


def test_a_chapter_with_no_figure_shows_its_short_tables():
    page = PAGE.replace("<img", "<span").replace(
        '<div class="cell_output"><table>',
        '<div class="cell_output"><table>' + "<tr><td>r</td></tr>" * 20 + "</table></div>"
        '<div class="cell_output"><table>')
    outputs = chapter_outputs(page)
    assert not outputs.figures and len(outputs.tables) == 1  # the long table stays on the page
    kinds = [s.kind for s in session_slides(PLANS[9], outputs, "book/09_verdicts.html", "slides/session-9.html")]
    assert kinds.count("table") == 1 and kinds.index("table") > kinds.index("predict")


def test_the_extension_writes_every_deck_and_the_index(tmp_path):
    import slides as extension  # book/_ext/slides.py, on the path above

    site, _ = _site(tmp_path)
    lines = extension.write_decks(site)
    assert len(lines) == len(PLANS)
    for number in PLANS:
        assert (site / "slides" / f"session-{number}.html").is_file()
    index = (site / "slides" / "index.html").read_text()
    assert re.findall(r'href="(session-\d+\.html)"', index) == [f"session-{n}.html" for n in sorted(PLANS)]
    assert deck_index([PLANS[0]]).count("<li>") == 1
