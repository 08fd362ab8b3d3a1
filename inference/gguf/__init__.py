"""GGUF files read without llama.cpp (header, facts, preflight checks, the vocabulary a file
declares), finding models, the demo model, quantizing. Imports core only."""
