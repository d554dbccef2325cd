"""The widget kit every chapter's explorers are built from.

Live explorers (a kernel behind them) update their Output widgets through widget state and show any exception in
the page; kernel-free explorers (the published page) precompute every answer into nested ``widgets.Stack``s that
``widgets.jslink`` ties to their controls, so the embedded widget manager answers in the reader's browser.
"""
from __future__ import annotations

import html
from io import BytesIO

import ipywidgets as widgets
import matplotlib.pyplot as plt
import pandas as pd
from PIL import Image

from .lab import NotStored
from .style import DPI


def show_in(output: widgets.Output, *objects) -> None:
    """Replace an Output widget's content through its state, never through an output-capture context: a
    notebook executed headless (papermill, Jupyter Book) then sees ordinary widget updates only, which avoids
    the client stalls that captured output can cause (jupyter/nbclient#312)."""
    output.outputs = ()
    for obj in objects:
        output.append_display_data(obj)


def show_error(output: widgets.Output, exc: Exception) -> None:
    output.outputs = ()
    output.append_stdout(f"error: {exc}\n")


def redraw(output: widgets.Output, make_figure) -> None:
    """Replace the figure; an exception is shown in the output area (a stale figure would hide it)."""
    try:
        fig = make_figure()
    except Exception as exc:  # whatever went wrong, the reader must see it
        show_error(output, exc)
        return
    show_in(output, fig)
    plt.close(fig)


def run_busy(button: widgets.Button, bar: widgets.IntProgress, output: widgets.Output, work) -> None:
    """Run ``work()`` with the button disabled; an exception is shown in the output area, never swallowed."""
    button.disabled = True
    try:
        work()
    except Exception as exc:  # whatever went wrong, the reader must see it
        show_error(output, exc)
        bar.description = "failed"
    finally:
        button.disabled = False


def layer_picker(adapter, layers, rows: int = 6) -> widgets.SelectMultiple:
    for layer in layers:
        adapter.check_layer(layer)
    return widgets.SelectMultiple(options=list(range(adapter.n_layers)), value=tuple(layers), rows=rows,
                                  description="layers", layout=widgets.Layout(width="210px"))


def edit_tables(result: dict, label: str, prompt: str, intact: str, edited: str, edited_name: str):
    """One summary row (perplexity change with its interval) and the two continuations side by side."""
    summary = pd.DataFrame([{"edit": label, "layers": ", ".join(map(str, result["layers"])),
                             "perplexity": f"{result['base_ppl']:.2f} -> {result['ppl']:.2f}",
                             "change": f"{result['change_pct']:+,.1f}%",
                             "95% interval": f"{result['ci_low']:+,.1f}% .. {result['ci_high']:+,.1f}%"}])
    texts = pd.DataFrame({"prompt": [prompt], "intact model": [intact], edited_name: [edited]})
    return (summary.style.hide(axis="index"),
            texts.style.hide(axis="index").set_properties(**{"text-align": "left"}))


def button_explorer(pick, controls: list, button: widgets.Button, tables) -> widgets.VBox:
    """Layer picker and controls on top, results below; ``tables()`` runs on every press (and once now), with
    the button disabled and saying so meanwhile; an error is shown where the results would be."""
    output = widgets.Output()
    label = button.description

    def run(_=None):
        if not pick.value:
            output.outputs = ()
            output.append_stdout("choose at least one layer\n")
            return
        button.disabled, button.description = True, "computing..."
        try:
            show_in(output, *tables())
        except Exception as exc:  # whatever went wrong, the reader must see it
            show_error(output, exc)
        finally:
            button.disabled, button.description = False, label

    button.on_click(run)
    run()
    return needs_kernel(widgets.VBox([widgets.HBox([pick, widgets.VBox(controls + [button])]), output]))


# The class of an explorer that needs a kernel: the book's stylesheet (loaded by the published pages only, never in
# Jupyter or Colab) greys its controls out under a line saying so, since without a kernel they would do nothing.
LIVE_CLASS = "anatomy-live"


def needs_kernel(explorer: widgets.Widget) -> widgets.Widget:
    """Mark an explorer as needing a kernel (``LIVE_CLASS``); returns it."""
    return explorer.add_class(LIVE_CLASS)


# ---- explorers that work in the published page, without a kernel ---------------------------------------------
# Every answer is computed here, from stored results, and put in a ``widgets.Stack``; ``widgets.jslink`` ties each
# control's index to the stack that shows the matching answer. The embedded widget manager runs those links in
# the reader's browser, so the built HTML responds to its controls with no kernel behind it.
STATIC_CLASS = "anatomy-static"  # how the browser test (tests/browser/check_pages.mjs) finds these explorers


def linked_stacks(controls: list, leaf) -> widgets.Widget:
    """Nested stacks, one level per control (a widget with ``options`` and ``index``); ``leaf(*indices)`` makes
    the answer for one choice of every control."""
    def build(depth: int, chosen: tuple):
        if depth == len(controls):
            return leaf(*chosen)
        control = controls[depth]
        stack = widgets.Stack([build(depth + 1, chosen + (i,)) for i in range(len(control.options))],
                              selected_index=control.index)
        widgets.jslink((control, "index"), (stack, "selected_index"))
        return stack

    return build(0, ())


def by_specimen(name: str, explorer: widgets.Widget, others, build) -> widgets.Widget:
    """A chapter's published ``explorer`` for its own specimen ``name`` and ``build(lab)`` for each read-only lab
    of ``others`` whose results the chapter has stored (one that raises ``NotStored`` is left out), behind a
    specimen picker (``specimen_choice``)."""
    explorers = {name: explorer}
    for lab in others:
        try:
            explorers[lab.specimen.name] = build(lab)
        except NotStored:
            continue
    return specimen_choice(explorers)


def specimen_choice(explorers: dict[str, widgets.Widget]) -> widgets.Widget:
    """One published explorer per specimen behind a specimen picker (a ``Stack`` jslinked to toggle buttons, so
    the choice works without a kernel); a single explorer comes back as it is. The wrapper carries the
    published-explorer class instead of its children, so a page check moves the visible specimen's controls."""
    if len(explorers) == 1:
        return next(iter(explorers.values()))
    for child in explorers.values():
        child.remove_class(STATIC_CLASS)
    pick = widgets.ToggleButtons(options=list(explorers), description="specimen", style={"button_width": "auto"})
    stack = widgets.Stack(list(explorers.values()), selected_index=0)
    widgets.jslink((pick, "index"), (stack, "selected_index"))
    return widgets.VBox([pick, stack]).add_class(STATIC_CLASS)


def answer_html(text: str) -> widgets.HTML:
    return widgets.HTML(f'<div class="anatomy-answer">{text}</div>')


def figure_widget(fig, dpi: int = DPI, colours: int | None = 128) -> widgets.Image:
    """A figure as an Image widget for a kernel-free explorer, at the book's DPI (so it shows at its natural size
    in the column, text readable), its palette cut to ``colours`` (a few times lighter than full colour, and a
    page holds many of them; ``None`` keeps every colour)."""
    buffer = BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    data = buffer.getvalue()
    if colours:
        image = Image.open(BytesIO(data)).convert("RGB").quantize(colors=colours, method=Image.Quantize.FASTOCTREE)
        buffer = BytesIO()
        image.save(buffer, format="png", optimize=True)
        data = buffer.getvalue()
    return widgets.Image(value=data, format="png", layout=widgets.Layout(max_width="100%"))


def escape_text(text) -> str:
    return html.escape(str(text)) if text == text else ""  # NaN (no text) shows as nothing
