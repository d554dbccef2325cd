"""Greedy continuations of fixed prompts, and how coherent they are: what a reader sees of a model, intact or
edited.

An instruct specimen gets its chat template (it was trained to answer in that format); a base model gets the
raw prompt. Greedy decoding keeps every continuation reproducible. Coherence is measured, not only shown: the
continuations' perplexity under the intact model, distinct-2 and distinct-3, a repetition rate, and correct
answers to fixed factual questions (string match).
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import torch

DEFAULT_PROMPTS = (
    "What is the capital of France?",
    "Explain in one sentence why the sky is blue.",
    "Write the next sentence: The history of the United States began",
)
FACTS = (
    ("What is the capital of France?", ("paris",)),
    ("What is the capital of Japan?", ("tokyo",)),
    ("What is the capital of Italy?", ("rome",)),
    ("How many days are in a week?", ("seven", "7")),
    ("What is the largest planet in our solar system?", ("jupiter",)),
    ("Who wrote Romeo and Juliet?", ("shakespeare",)),
    ("What is the chemical formula of water?", ("h2o", "h₂o")),
    ("What is two plus two?", ("four", "4")),
    ("What language is mainly spoken in Brazil?", ("portuguese",)),
    ("What color is the sky on a clear day?", ("blue",)),
)


def format_prompt(specimen, prompt: str, chat: bool | None = None) -> str:
    chat = specimen.is_chat_model if chat is None else chat
    template = getattr(specimen.tokenizer, "chat_template", None)
    if chat and template:
        return specimen.tokenizer.apply_chat_template([{"role": "user", "content": prompt}], tokenize=False,
                                                      add_generation_prompt=True)
    return prompt


def generate(specimen, prompt: str, max_new_tokens: int = 40, chat: bool | None = None) -> str:
    """Greedy continuation of ``prompt`` by the model as it is now (edits included)."""
    if max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be >= 1, got {max_new_tokens}")
    tokenizer, model = specimen.tokenizer, specimen.model
    text = format_prompt(specimen, prompt, chat)
    encoded = tokenizer(text, return_tensors="pt", add_special_tokens=False).to(model.device)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    with torch.inference_mode():
        out = model.generate(**encoded, max_new_tokens=max_new_tokens, do_sample=False, pad_token_id=pad,
                             temperature=None, top_p=None, top_k=None)
    return tokenizer.decode(out[0, encoded["input_ids"].shape[1]:], skip_special_tokens=True).strip()


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
    context = tokenizer(format_prompt(specimen, prompt), add_special_tokens=False)["input_ids"]
    answer = tokenizer(continuation, add_special_tokens=False)["input_ids"]
    if not answer:
        return float("nan")
    ids = torch.tensor([context + answer], device=model.device)
    with torch.inference_mode():
        logits = model(input_ids=ids).logits[0, len(context) - 1:-1].float()
    return float(torch.nn.functional.cross_entropy(logits, ids[0, len(context):]))


def coherence(lab, edit=None, prompts=DEFAULT_PROMPTS, facts=FACTS,
              max_new_tokens: int | None = None) -> tuple[dict, pd.DataFrame]:
    """Generate under ``edit`` (see ``Lab.measure``; None: the intact model), then score the continuations under
    the intact model: (metrics, generations table)."""
    from .surgery import surgery

    spec = lab.specimen
    tokens = max_new_tokens or lab.profile.gen_tokens
    with surgery(lab.adapter) as editor:
        if edit is not None:
            edit(editor)
        texts = [generate(spec, p, tokens) for p in prompts]
        answers = [generate(spec, q, 16) for q, _ in facts]
    correct = [any(a in answer.lower() for a in accepted) for answer, (_, accepted) in zip(answers, facts)]
    nll = [continuation_nll(spec, p, t) for p, t in zip(prompts, texts)]
    joined = " ".join(texts)
    metrics = {"generated_ppl": float(np.exp(np.nanmean(nll))) if not all(np.isnan(nll)) else float("nan"),
               "distinct_2": distinct_n(joined, 2), "distinct_3": distinct_n(joined, 3),
               "repetition_rate": float(np.mean([repetition_rate(t) for t in texts])),
               "facts_correct": int(sum(correct)), "facts_total": len(facts)}
    table = pd.DataFrame({"prompt": list(prompts) + [q for q, _ in facts], "kind": ["prompt"] * len(prompts) +
                          ["fact"] * len(facts), "continuation": texts + answers,
                          "correct": [None] * len(prompts) + correct})
    return metrics, table
