"""The engine in a child process of its own: the parent's side, the wire between them and the
child's main (the engine's worker, compare's). Imports core, vocab, window and local."""
