"""Chapter 7, Growth Transformer Training at matched compute: the training rooms, one module each.

``text`` (the tokenizer and the token splits), ``models`` (Llama models of any depth), ``flops`` (exact FLOP
accounting while depth and the trainable set change), ``operators`` (growth: stacking, middle duplication,
cloning, removal), ``trainer`` (one trainer for every arm, on a FLOP budget) and ``experiment`` (the arms,
the seeds, the measures and the results store).
"""
