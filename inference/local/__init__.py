"""The local engine and its llama.cpp context: loading, generation, sampling and its trace,
speculative decoding, scoring, comparison, thread and flash-attention choices, the C step
helper. Imports core, gguf, vocab and window."""
