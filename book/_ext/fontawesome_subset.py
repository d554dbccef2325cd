"""Serve only the Font Awesome icons the built pages use.

pydata-sphinx-theme makes every page load ``_static/scripts/fontawesome.js``: Font Awesome 6's SVG core with every
free icon, 1.5 MB, for about twenty icons (the header's buttons, the search box, the theme switch). After the
build, this extension finds the icons the pages and the theme's scripts name (``fa-<icon>`` classes) and writes
that file again as Font Awesome's own core plus its solid, regular and brands packs cut down to those icons,
from the same release the theme vendors (``fontawesome-6`` in package.json, from npm). The icons are the same
SVG paths, drawn by the same code, so the pages look the same (the browser test's screenshots show it).

Where the npm copy is missing (a build without ``make widgets-js``), the theme's full file stays and the build
says so in one line.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from sphinx.util import logging

logger = logging.getLogger(__name__)

FONTAWESOME = Path(__file__).resolve().parents[2] / "node_modules" / "fontawesome-6"
THEME_FILE = Path("_static") / "scripts" / "fontawesome.js"
# the classes that name a pack (Font Awesome 6's and 5's spellings); an icon with none is drawn from solid
STYLES = {"fa-solid": "solid", "fas": "solid", "fa-regular": "regular", "far": "regular", "fa-brands": "brands",
          "fab": "brands"}
PACKS = ("solid", "regular", "brands")
ICON = re.compile(r"^fa-([a-z0-9]+(?:-[a-z0-9]+)*)$")
NOT_ICONS = {"solid", "regular", "brands", "lg", "sm", "xs", "xl", "2x", "3x", "fw", "spin", "pulse", "beat",
             "fade", "flip", "shake", "rotate-90", "rotate-180", "rotate-270", "flip-horizontal", "flip-vertical",
             "inverse", "stack", "stack-1x", "stack-2x", "border", "pull-left", "pull-right", "li", "ul"}
# a class attribute in a page, or a class list a theme script sets ("fa-solid fa-xmark")
CLASSES = re.compile(r'class="([^"]*\bfa[sbr]?\b[^"]*|[^"]*\bfa-[^"]*)"|classList="([^"]*)"')
# a widget's icon in a page's saved widget state (a Button's ``icon="scissors"``): the widget manager draws it as
# "fa fa-scissors" only when the page loads, so no class attribute in the built HTML names it
WIDGET_ICON = re.compile(r'"icon":\s*"([a-z0-9]+(?:-[a-z0-9]+)*)"')


def _icons_of(classes: str) -> tuple[str, set[str]]:
    words = classes.split()
    style = next((STYLES[w] for w in words if w in STYLES), "solid")
    return style, {m.group(1) for w in words if (m := ICON.match(w))} - NOT_ICONS


def used_icons(outdir: Path) -> dict[str, set[str]]:
    """{pack: the icon names asked for from it}, from every built page's class attributes, its widgets' icons (drawn
    from the solid pack, as the widget manager does) and the class lists the theme's own scripts set (the search
    box's close button)."""
    names: dict[str, set[str]] = {pack: set() for pack in PACKS}
    texts = [p.read_text(errors="ignore") for p in outdir.rglob("*.html")]
    texts += [s.read_text(errors="ignore") for s in (outdir / "_static" / "scripts").glob("*.js")
              if s.name != THEME_FILE.name]
    for text in texts:
        for found in CLASSES.findall(text):
            style, icons = _icons_of(found[0] or found[1])
            names[style] |= icons
        names["solid"] |= set(WIDGET_ICON.findall(text))
    return names


def subset_pack(source: str, names: set[str]) -> tuple[str, list[str]]:
    """A pack file (``js/solid.js``) with its icon table cut down to ``names`` (an icon is kept where its name or
    one of its aliases is asked for), and the icons kept."""
    start = source.index("  var icons = {\n") + len("  var icons = {\n")
    end = source.index("\n  };\n", start)
    kept, lines = [], []
    for line in source[start:end].splitlines():
        name, value = line.strip().rstrip(",").split(": ", 1)
        name = json.loads(name)
        aliases = {a for a in json.loads(value)[2] if isinstance(a, str)}
        if name in names or aliases & names:
            kept.append(name)
            lines.append(line.rstrip(","))
    return source[:start] + ",\n".join(lines) + source[end:], kept


def write_subset(outdir: Path, fontawesome: Path = FONTAWESOME) -> tuple[int, int, list[str]] | None:
    """Rewrite the theme's Font Awesome file with the used icons only: (bytes before, after, icons kept), or
    None where the npm copy is missing."""
    target = outdir / THEME_FILE
    if not (fontawesome / "js" / "fontawesome.min.js").is_file() or not target.is_file():
        return None
    names = used_icons(outdir)
    before = target.stat().st_size
    parts, kept = [], []
    for pack in PACKS:  # the packs first, then the core, in the order Font Awesome's own all.js has them
        if not names[pack]:
            continue
        text, icons = subset_pack((fontawesome / "js" / f"{pack}.js").read_text(), names[pack])
        if icons:
            parts.append(text)
            kept += icons
    parts.append((fontawesome / "js" / "fontawesome.min.js").read_text())
    target.write_text("\n".join(parts))
    (target.parent / (THEME_FILE.name + ".map")).unlink(missing_ok=True)  # the theme's map describes the old file
    return before, target.stat().st_size, sorted(kept)


def _build_finished(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    done = write_subset(Path(app.outdir))
    if done is None:
        logger.info("fontawesome_subset: node_modules/fontawesome-6 is missing (make widgets-js): every page "
                    "keeps the theme's full 1.5 MB Font Awesome")
        return
    before, after, kept = done
    logger.info(f"fontawesome_subset: {THEME_FILE} {before / 1e6:.2f} MB -> {after / 1e3:.0f} kB, "
                f"{len(kept)} icons ({', '.join(kept)})")


def setup(app):
    app.connect("build-finished", _build_finished)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
