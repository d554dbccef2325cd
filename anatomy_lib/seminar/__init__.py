"""The seminar guide: a course a teacher can run with nothing else, read in this order.

- ``plans``: a 90-minute plan per session (a set-up session 0, then one per chapter): goals, what is introduced
  before the prediction, the pre-reading, the predictions (each naming the output that answers it), the
  segments by the minute, the groups, the fallback without a kernel, the discussion, the homework with its
  rubric; the final project; ``order_problems`` checks that nothing answers a prediction before it is written
- ``answers``: every prediction's and discussion question's answer, each homework's model answer and the answer
  to any task set in class, computed from the stored results (``Evidence`` reads them, read-only)
- ``groups``: the groups' verdicts side by side (``group_verdicts``: a cell names its group's own claim where it
  reads otherwise), from the store, and the table in a sentence (``group_agreement``)
- ``timing``: how long each chapter takes to recompute (measured, or estimated for the paper profile and GPUs)
  and each exercise's check, rehearsed on this machine
- ``sheets``: the students' handout (one printed sheet per session) and the guide's HTML: a session's plan,
  its pre-reading with where it stops (read from the page), the teacher's notes, the final project and the
  assessment
- ``slides``: one slide deck per session in its plan's order (title, a slide per segment with what it brings:
  the predictions, exercises, groups' tasks and the outputs it shows, found on the built chapter page;
  discussion, homework), one offline HTML file each, written by the book's build (``book/_ext/slides.py``)

Everything the guide (``book/seminar.md``), the handout (``book/handout.md``), the slides and the tests call is
re-exported here. The seminar sits on the top floor: it reads the chapters, chapter 9 and the exercises; nothing in the
library imports it but the paper run's timing.
"""
from .answers import Evidence
from .groups import (
    ANOTHER_MODEL,
    GROUP_KEYS,
    NOT_STATED,
    NOT_STORED,
    OWN_CLAIM,
    SUMMARY_SESSIONS,
    group_agreement,
    group_lab,
    group_verdicts,
    own_wording,
    verdict_word,
)
from .plans import (
    CELLS,
    FINAL_PROJECT,
    PLANS,
    PROJECT_RUBRIC,
    SESSION_MINUTES,
    Homework,
    Question,
    Segment,
    SessionPlan,
    misconceptions,
    order_problems,
    session_minutes,
    session_plan,
)
from .sheets import (
    assessment,
    bibliography_keys,
    final_project,
    group_advice,
    handout,
    handouts,
    inline,
    page_headings,
    reading,
    reading_html,
    reading_spans,
    reading_stop,
    session_exercises,
    session_title,
    show_plan,
    teacher_notes,
)
from .slides import ChapterOutputs, PageFigure, PageTable, Slide, chapter_outputs, deck, deck_index, session_slides
from .timing import CHAPTER_OF, GPUS, OWN_PACKAGES, PARAMS_OF, chapter_runs, chapter_times, rehearsal, work_ratio

__all__ = [
    "ANOTHER_MODEL", "CELLS", "CHAPTER_OF", "FINAL_PROJECT", "GPUS", "GROUP_KEYS", "NOT_STATED", "NOT_STORED",
    "OWN_CLAIM",
    "OWN_PACKAGES", "PARAMS_OF", "PLANS", "PROJECT_RUBRIC", "SESSION_MINUTES", "SUMMARY_SESSIONS", "ChapterOutputs",
    "Evidence", "Homework", "PageFigure", "PageTable", "Question", "Segment", "SessionPlan", "Slide", "assessment",
    "bibliography_keys", "chapter_outputs", "chapter_runs", "chapter_times", "deck", "deck_index", "final_project",
    "group_advice", "group_agreement", "group_lab", "group_verdicts", "handout", "handouts", "inline",
    "misconceptions", "order_problems", "own_wording", "page_headings", "reading", "reading_html", "reading_spans",
    "reading_stop", "rehearsal", "session_exercises", "session_minutes", "session_plan", "session_slides",
    "session_title", "show_plan", "teacher_notes", "verdict_word", "work_ratio",
]
