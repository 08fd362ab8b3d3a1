"""Errors that reach the user as one line: the CLI prints them, the TUI notifies them."""


class ScriptoriumError(Exception):
    """Base of every error whose message is written for the user."""


class ModelFileError(ScriptoriumError):
    """A model or adapter file that llama.cpp must not be handed (missing, not GGUF, wrong kind)."""


class ModelLoadError(ScriptoriumError):
    """llama.cpp refused a file that looked valid."""


class GenerationError(ScriptoriumError):
    """llama.cpp failed while evaluating a batch."""


class EngineCrashed(ScriptoriumError):
    """The process running the model ended (an abort, a segfault, a kill); the message
    quotes llama.cpp's last words. The backend that raised it is of no further use."""
