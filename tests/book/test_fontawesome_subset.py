"""The Font Awesome subset the build serves (book/_ext/fontawesome_subset.py): the icons the pages name, from the
pack each names, aliases honoured, nothing else; the browser test checks that every icon on the built pages is
drawn."""
import sys
from pathlib import Path

import pytest

# a Sphinx extension, imported from its folder as Sphinx does; the library's dependency floor has no book tools
pytest.importorskip("sphinx", reason="needs the book's dependencies (Sphinx)")
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "book" / "_ext"))
import fontawesome_subset as fa

PACK = """(function () {
  function defineIcons(prefix, icons) {}
  var icons = {
    "0": [320, 512, [], "30", "M0 0"],
    "magnifying-glass": [512, 512, [128269, "search"], "f002", "M1 1"],
    "moon": [384, 512, [127769, 9214], "f186", "M2 2"],
    "house": [576, 512, [127968, 63498, "home", "home-alt"], "f015", "M3 3"]
  };

  bunker(function () {
    defineIcons('fas', icons);
  });
}());
"""


def test_a_pack_keeps_the_icons_asked_for_by_name_or_alias():
    text, kept = fa.subset_pack(PACK, {"moon", "home"})
    assert kept == ["moon", "house"]
    assert '"moon"' in text and '"house"' in text and "magnifying-glass" not in text and '"0"' not in text
    assert text.endswith("  bunker(function () {\n    defineIcons('fas', icons);\n  });\n}());\n")


def test_icons_are_read_from_pages_and_scripts_with_their_pack(tmp_path):
    (tmp_path / "_static" / "scripts").mkdir(parents=True)
    (tmp_path / "page.html").write_text('<i class="fa-solid fa-moon fa-lg"></i><i class="fab fa-github"></i>'
                                        '<span class="fa-regular fa-file"></span>'
                                        '<script type="application/vnd.jupyter.widget-state+json">'
                                        '{"state": {"b": {"state": {"icon": "scissors"}}}}</script>')
    (tmp_path / "_static" / "scripts" / "theme.js").write_text('e.classList="fa-solid fa-xmark"')
    (tmp_path / "_static" / "scripts" / "fontawesome.js").write_text('class="fa-solid fa-house"')  # the old bundle
    assert fa.used_icons(tmp_path) == {"solid": {"moon", "xmark", "scissors"}, "regular": {"file"},
                                       "brands": {"github"}}


@pytest.mark.skipif(not (fa.FONTAWESOME / "js" / "solid.js").is_file(), reason="needs npm ci (make widgets-js)")
def test_the_real_packs_cut_down(tmp_path):
    scripts = tmp_path / "_static" / "scripts"
    scripts.mkdir(parents=True)
    (scripts / "fontawesome.js").write_text("x" * 1_000_000)
    (tmp_path / "page.html").write_text('<i class="fa-solid fa-magnifying-glass"></i><i class="fab fa-github"></i>')
    before, after, kept = fa.write_subset(tmp_path)
    assert kept == ["github", "magnifying-glass"] and after < 100_000
    text = (scripts / "fontawesome.js").read_text()
    assert text.count("defineIcons('fa-solid', icons)") == 1 and "___FONT_AWESOME___" in text
