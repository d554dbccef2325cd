"""The ``book-citation`` directive: BibTeX entries for the paper and for this book, the book's entry carrying
the library's version and the commit the pages were built from, so that a citation names what was read."""
import subprocess
from pathlib import Path

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

PAPER = """@misc{wietrzykowski2026anatomical,
  title         = {Anatomical Heterogeneity in Transformer Language Models},
  author        = {Wietrzykowski, T.},
  year          = {2026},
  eprint        = {2603.19348},
  archivePrefix = {arXiv}
}"""


def _version(root: Path) -> str:
    scope = {}
    exec((root / "anatomy_lib" / "core" / "version.py").read_text(), scope)  # no import: the page needs no torch
    return scope["__version__"]


def _commit(root: Path) -> str:
    done = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else "unknown (not built from a git checkout)"


def book_entry(config, version: str, commit: str) -> str:
    """The book's BibTeX entry from the Sphinx ``config``. Jupyter Book puts the book's title in ``html_title``
    (Sphinx's ``project`` stays "Project name not set")."""
    url = config.html_theme_options.get("repository_url", "")
    return (f"@software{{anatomy_book,\n  title   = {{{config.html_title}: an open replication of "
            f"arXiv:2603.19348}},\n  author  = {{{{{config.author}}}}},\n"
            f"  year    = {{{config.copyright}}},\n  version = {{{version}}},\n"
            f"  note    = {{commit {commit}}},\n  url     = {{{url}}}\n}}")


class BookCitation(SphinxDirective):
    def run(self):
        root = Path(self.env.srcdir)
        book = book_entry(self.config, _version(root), _commit(root))
        block = nodes.literal_block(text=f"{PAPER}\n\n{book}", language="bibtex")
        return [block]


def setup(app):
    app.add_directive("book-citation", BookCitation)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
