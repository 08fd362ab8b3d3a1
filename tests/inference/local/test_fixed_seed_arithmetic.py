"""A fixed seed gives the same tokens with the same probabilities, to the last bit, whether
the cache is cold or holds the prompt from the run before (a re-roll): llama.cpp computes a
position batched or alone a little differently, so a re-roll on a warm cache drew other
tokens than `continue` with the same seed. A re-roll still evaluates one token only, and
without a fixed seed the cache is reused as before."""

from __future__ import annotations

from pathlib import Path

from scriptorium.inference.local.engine import Engine, LoadOptions
from scriptorium.inference.core.events import GenerationDone, TokenEvent
from scriptorium.inference.core.settings import LogitBias, preset

PROMPT = "La notte era lunga e il gatto guardò la luna sopra il porto"


def test_a_fixed_seed_evaluates_afresh_and_draws_the_same_numbers(random_model: Path) -> None:
    engine = Engine.load(LoadOptions(model_path=random_model, n_ctx=512, n_threads=1))

    def steps(seed: int | None, prompt: str = PROMPT) -> tuple[list[tuple[int, float]], int]:
        # Unhealed: the prompt is its tokens as tokenized ("porto" is cut after "▁port" "o", which healing backs up over).
        settings = preset("prose").with_changes(temperature=1.0, max_tokens=6, seed=seed, heal=False)
        events = list(engine.generate(prompt, settings, LogitBias(), top_n=3))
        done = events[-1]
        assert isinstance(done, GenerationDone)
        return [(e.id, e.p) for e in events if isinstance(e, TokenEvent)], done.reused_tokens

    try:
        cold, cold_reused = steps(7)
        warm, warm_reused = steps(7)  # a re-roll: only the prompt's last token is evaluated again
        assert cold_reused == 0 and warm_reused == len(engine.tokenize(PROMPT)) - 1 and warm == cold
        _, reused = steps(None, PROMPT + " e il mare")
        assert reused > 0  # a fresh seed each time: the cache is reused as before
        steps(None, "Il cane aspettava")  # another text: the cold run's positions are gone
        again, again_reused = steps(7)  # evaluated afresh
        assert again_reused == 0 and again == cold
    finally:
        engine.close()
