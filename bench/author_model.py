"""Write a stand-in for the author's model: about 46M parameters, a llama decoder with the
16,000-piece SentencePiece vocabulary plus byte tokens 16000-16255, GQA. Random weights:
it is for timing the 16k layout, not for reading its prose.

    python bench/author_model.py OUT.gguf [CONTEXT_LENGTH]

CONTEXT_LENGTH (default 2048) is the training context the GGUF states: 256 is the
author's own (bench/window.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from gguf_models import write_llama_model  # noqa: E402


def main() -> int:
    if len(sys.argv) not in (2, 3) or (len(sys.argv) == 3 and not sys.argv[2].isdigit()):
        print(__doc__, file=sys.stderr)
        return 2
    path = write_llama_model(
        Path(sys.argv[1]),
        kind="random",
        n_layer=8,
        n_embd=512,
        n_head=8,
        n_head_kv=4,
        n_ff=1792,
        context_length=int(sys.argv[2]) if len(sys.argv) == 3 else 2048,
        name="author-like-46m",
        f16=True,
    )
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
