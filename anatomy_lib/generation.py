"""Greedy continuations of fixed prompts: what a reader sees of a model, intact or edited.

An instruct specimen gets its chat template (it was trained to answer in that format); a base model gets the
raw prompt. Greedy decoding keeps every continuation reproducible.
"""
from __future__ import annotations

import torch

DEFAULT_PROMPTS = (
    "What is the capital of France?",
    "Explain in one sentence why the sky is blue.",
    "Write the next sentence: The history of the United States began",
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
