"""Text to token ids: llama.cpp's tokenizer or the author's SentencePiece model, and the
contract between the two. Imports core and gguf."""
