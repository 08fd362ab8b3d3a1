"""The prompt: what of the draft, memory, author's note and lorebook the model sees, and chat
prompts in the model's own template (rendered in a process of their own). Imports core and
vocab."""
