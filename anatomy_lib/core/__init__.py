"""The core every chapter stands on; it never imports a chapter.

Read in this order: ``version`` and ``checks`` (the import guard, input checks), ``runtime`` and ``profiles``
(device, sizes), ``distributed`` (torchrun), ``locks`` (file locks and shared-mode writes: two processes filling
one cache or store), ``specimens`` (loading), ``adapter`` (one view of every model family), ``corpus`` (text and
token blocks), ``surgery`` (reversible weight edits), ``nll`` (the one loss), ``engine`` (perplexity with a prefix
cache), ``bootstrap`` and ``stats`` (intervals, rank correlations), ``weightspace``, ``gguf_weights`` and
``dissection`` (chapters 3 and 4's weight statistics in numpy alone, a GGUF reader, and both on any GGUF file:
what the in-browser page runs), ``flops`` (the one FLOP convention), ``gpu``
(the one GPU-time convention), ``quantise`` (GGUF-style quantisers for the quantisation null), ``params`` and
``results`` (parameters, the store), ``estimate`` (the time a computation will take), ``lab`` (``Lab.measure``,
the one way to measure an edit), ``generation`` and ``facts`` (continuations and their coherence), ``rules``
(how a claim is judged), ``chapter`` (the chapter protocol), ``lazy`` (figures and explorers imported on first
use). Presentation apart from all of these: ``display`` (claims, findings and tables in a page, each chapter's
column names passed in as a ``Vocabulary``), ``style`` (the figure style) and ``widgets`` (the explorer kit).

The book's words, each with one meaning:

- **specimen**: a loaded model under study (a ``Specimen``: model, tokenizer, name, weights hash). A function
  that needs only its name takes ``specimen_name``; ``open_lab`` accepts a name or a specimen.
- **lab**: one specimen at one profile on fixed evaluation blocks (``Lab``); immutable.
- **profile**: a named set of sizes (``smoke``, ``quick``, ``paper``; ``profiles``).
- **edit**: a function that changes weights through the editor ``surgery`` hands it, undone on exit.
- **measurement**: an edited model against the intact one on the lab's blocks, with a paired interval
  (``Measurement``, from ``Lab.measure``).
- **diagnostic**: a computation whose tables the results store keeps, named by its parameters' ``DIAGNOSTIC``.
- **arm**: one way of training in chapter 7 (uniform, shallow, a growth schedule); a **run** is one arm (or one
  damaged layer, in chapter 6) with one seed.
- **control**: what a claim crediting an intervention must also beat to stand (the shallow model at the same
  FLOPs, random layer choice, the sham of the same layer; ``rules.controlled``).
- **sham**: chapter 6's fine-tuning of an undamaged layer, the reference recovery is judged against.
- **branch**: in chapter 7's budget sweep, a smaller budget's decay forked from the longest run's trajectory.
- **undetermined**: a class (or verdict) whose interval straddles the threshold that decides it.
"""
