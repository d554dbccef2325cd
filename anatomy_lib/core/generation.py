"""Greedy continuations of fixed prompts, and how coherent they are: what a reader sees of a model, intact or
edited.

An instruct specimen gets its chat template (it was trained to answer in that format); a base model gets the
raw prompt, after its BOS where its family expects one (``corpus.sequence_prefix``). A base model answers by
completion, so a factual question is posed to it as ``Question: ...`` with ``Answer:`` on the next line, and
its answer is the continuation up to the first line break (it would otherwise go on to ask itself the next
question). Greedy decoding keeps every continuation reproducible. Coherence is measured, not only shown: the
continuations' perplexity under the intact model, distinct-2 and distinct-3, a repetition rate, and correct
answers to the short factual questions of ``facts.FACTS`` (whole-word string match), as a rate with a bootstrap
interval over questions. An empty continuation counts as incoherent: it answers nothing, and its share is
reported.
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import torch

from .bootstrap import mean_interval
from .corpus import sequence_prefix
from .facts import FACTS
from .nll import token_nll
from .surgery import surgery

DEFAULT_PROMPTS = (
    "What is the capital of France?",
    "Explain in one sentence why the sky is blue.",
    "Write the next sentence: The history of the United States began",
)


def uses_chat(specimen, chat: bool | None = None) -> bool:
    """Whether prompts go through the chat template: for an instruct specimen that has one, unless overridden."""
    chat = specimen.is_chat_model if chat is None else chat
    return bool(chat and getattr(specimen.tokenizer, "chat_template", None))


def format_prompt(specimen, prompt: str, chat: bool | None = None, question: bool = False) -> str:
    """The text a prompt is posed as: the chat template, or for a base model the prompt itself (a ``question``
    as ``Question: ...`` with ``Answer:`` on the next line)."""
    if uses_chat(specimen, chat):
        return specimen.tokenizer.apply_chat_template([{"role": "user", "content": prompt}], tokenize=False,
                                                      add_generation_prompt=True)
    return f"Question: {prompt}\nAnswer:" if question else prompt


def encode_prompt(specimen, text: str) -> list[int]:
    """Token ids of a formatted prompt, starting with the family's BOS where it has one (a chat template that
    already writes it out is not given a second)."""
    tokenizer = specimen.tokenizer
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    prefix = sequence_prefix(tokenizer, specimen.adapter.family)
    return ids if ids[:len(prefix)] == prefix else prefix + ids


def generate(specimen, prompt: str, max_new_tokens: int = 40, chat: bool | None = None,
             question: bool = False) -> str:
    """Greedy continuation of ``prompt`` by the model as it is now (edits included); a ``question`` put to a
    base model is answered by the continuation's first line."""
    if max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be >= 1, got {max_new_tokens}")
    tokenizer, model = specimen.tokenizer, specimen.model
    ids = torch.tensor([encode_prompt(specimen, format_prompt(specimen, prompt, chat, question))],
                      device=model.device)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    with torch.inference_mode():
        out = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=max_new_tokens,
                             do_sample=False, pad_token_id=pad, temperature=None, top_p=None, top_k=None)
    text = tokenizer.decode(out[0, ids.shape[1]:], skip_special_tokens=True).strip()
    if question and not uses_chat(specimen, chat):
        text = text.split("\n", 1)[0].strip()
    return text


# ---- coherence ---------------------------------------------------------------------------------------------------
def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def distinct_n(text: str, n: int) -> float:
    """Unique word n-grams over all word n-grams (1.0: no n-gram repeats; empty text: 0)."""
    words = _words(text)
    grams = [tuple(words[i:i + n]) for i in range(len(words) - n + 1)]
    return len(set(grams)) / len(grams) if grams else 0.0


def repetition_rate(text: str, n: int = 3) -> float:
    """Share of word n-grams that already occurred earlier in the same text."""
    words = _words(text)
    seen, repeats, total = set(), 0, 0
    for i in range(len(words) - n + 1):
        gram = tuple(words[i:i + n])
        repeats += gram in seen
        total += 1
        seen.add(gram)
    return repeats / total if total else 0.0


def continuation_nll(specimen, prompt: str, continuation: str) -> float:
    """Mean NLL (nats) of ``continuation`` after the formatted ``prompt``, under the model as it is now."""
    tokenizer, model = specimen.tokenizer, specimen.model
    context = encode_prompt(specimen, format_prompt(specimen, prompt))
    answer = tokenizer(continuation, add_special_tokens=False)["input_ids"]
    if not answer:
        return float("nan")
    ids = torch.tensor([context + answer], device=model.device)
    with torch.inference_mode():
        logits = model(input_ids=ids).logits[0, len(context) - 1:-1]
    return float(token_nll(logits, ids[0, len(context):]).mean())


def answers_correctly(answer: str, accepted) -> bool:
    """Whether ``answer`` contains one of the ``accepted`` strings as a whole word (case-insensitive)."""
    text = answer.lower()
    return any(re.search(rf"(?<!\w){re.escape(a)}(?!\w)", text) for a in accepted)


SMOKE_FACTS = 8  # the smoke profile (the test suite) asks only the first questions; every other profile all


def facts_for(profile) -> tuple:
    """The factual questions a profile asks."""
    return FACTS[:SMOKE_FACTS] if profile.name == "smoke" else FACTS


def coherence_metrics(texts, answers, facts, nll, n_boot: int = 2000, seed: int = 0) -> tuple[dict, list[bool]]:
    """Score continuations of the prompts (``texts``, with their NLL under the intact model, NaN where empty) and
    answers to ``facts``: (metrics, which answers are correct). An empty continuation is incoherent: it answers
    nothing, counts in ``empty_share``, and a set of only empty continuations has repetition 1 and an infinite
    perplexity rather than NaN."""
    correct = [answers_correctly(answer, accepted) for answer, (_, accepted) in zip(answers, facts)]
    said = [t for t in texts if t]
    nll = [v for v, t in zip(nll, texts) if t]
    rate, low, high = mean_interval(correct, n_boot, seed)
    metrics = {"generated_ppl": float(np.exp(np.mean(nll))) if nll else float("inf"),
               "distinct_2": distinct_n(" ".join(texts), 2), "distinct_3": distinct_n(" ".join(texts), 3),
               "repetition_rate": float(np.mean([repetition_rate(t) for t in said])) if said else 1.0,
               "empty_share": float(np.mean([not t for t in list(texts) + list(answers)])),
               "facts_correct": int(sum(correct)), "facts_total": len(facts),
               "fact_rate": rate, "fact_rate_low": low, "fact_rate_high": high}
    return metrics, correct


def coherence(lab, edit=None, prompts=DEFAULT_PROMPTS, facts=None,
              max_new_tokens: int | None = None, seed: int = 0) -> tuple[dict, pd.DataFrame]:
    """Generate under ``edit`` (see ``Lab.measure``; None: the intact model), then score the continuations under
    the intact model: (metrics, generations table). The fact rate carries a bootstrap interval over questions;
    the table's ``correct`` column (1/0 per question) lets a caller pair two conditions."""
    spec = lab.specimen
    facts = facts_for(lab.profile) if facts is None else facts
    tokens = max_new_tokens or lab.profile.gen_tokens
    with surgery(lab.adapter) as editor:
        if edit is not None:
            edit(editor)
        texts = [generate(spec, p, tokens) for p in prompts]
        answers = [generate(spec, q, 16, question=True) for q, _ in facts]
    nll = [continuation_nll(spec, p, t) if t else float("nan") for p, t in zip(prompts, texts)]
    metrics, correct = coherence_metrics(texts, answers, facts, nll, lab.profile.n_boot, seed)
    table = pd.DataFrame({"prompt": list(prompts) + [q for q, _ in facts], "kind": ["prompt"] * len(prompts) +
                          ["fact"] * len(facts), "continuation": texts + answers,
                          "correct": [np.nan] * len(prompts) + [float(c) for c in correct]})
    return metrics, table
