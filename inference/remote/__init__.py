"""The same Backend over llama.cpp's llama-server (HTTP with httpx, imported only then).
Imports core, vocab and window."""
