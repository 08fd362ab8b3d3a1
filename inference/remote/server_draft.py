"""What a speculating llama-server's stream says about its guesses: the totals it drafted and
accepted, and which of the tokens it streams it accepted from its draft.

A llama-server speculates only when started with a guesser (`--spec-type draft-simple` with
`--model-draft`, or an n-gram lookup such as `--spec-type ngram-mod`). Read from the vendored
build (commit 0c1e570, llama-cpp-python 0.3.36; tools/server/server-context.cpp), and seen in
its streams (tests/inference/remote/test_remote_speculation.py):

- each verifying pass drafts some tokens (`timings.draft_n` grows by as many: at least one, or
  it decodes plainly), then streams the `k` guesses its sampling accepted and the one token it
  sampled after them, one chunk each;
- every token of such a pass is streamed with no `completion_probabilities` at all, the one it
  sampled too (`result.prob = 1.0f; // set later` and `// TODO: set result.probs`): only its id
  (`tokens`) and its text (`content`);
- with `timings_per_token` every chunk carries the totals so far, and the pass's totals are
  counted before any of its tokens is sent: a chunk whose `draft_n` differs from the chunk
  before it opens a pass, and `draft_n_accepted` grew by that pass's `k`.
"""

from __future__ import annotations

from typing import Any

from ..core.events import SpeculationCounts


def server_speculation(timings: dict[str, Any]) -> SpeculationCounts | None:
    """What a llama-server started with a draft says it drafted and accepted (`timings.draft_n`,
    `draft_n_accepted`, present only when it drafted); it counts no passes, and gives the
    tokens of its verifying passes no probabilities."""
    if "draft_n" not in timings:
        return None
    return SpeculationCounts(
        guesser="server",
        drafted=int(timings["draft_n"]),
        accepted=int(timings.get("draft_n_accepted", 0)),
        passes=0,
        probabilities=False,
    )


class AcceptedGuesses:
    """Which streamed tokens a llama-server accepted from its draft, told from the totals each
    chunk's timings carry: `accepted(number, timings)` for each token in stream order."""

    def __init__(self) -> None:
        self._drafted = self._accepted = 0
        """The totals as the latest verifying pass left them."""
        self._first = 1
        """The number (`tokens_predicted`, from 1) of that pass's first token."""
        self._guessed = 0
        """How many of its tokens were accepted guesses: the first ones; one sampled token follows."""
        self._last = 0
        """The number of the last token streamed."""

    def accepted(self, number: int, timings: dict[str, Any]) -> bool:
        """Whether token `number` (its chunk's `tokens_predicted`) is a guess the server accepted;
        `timings` is its chunk's."""
        drafted, accepted = int(timings.get("draft_n", 0)), int(timings.get("draft_n_accepted", 0))
        if drafted != self._drafted:  # a new verifying pass: each drafts at least one token
            guessed = max(accepted - self._accepted, 0)
            # It follows the token streamed last, or the last of the previous pass (k guesses and
            # one sampled token) where that one's chunk was held back: a token that leaves a
            # character unfinished is sent with the next. It holds this token, so it starts no
            # earlier than `guessed` tokens before it, whatever was held back before the pass.
            after = max(self._last, self._first + self._guessed if self._drafted else 0)
            self._first = max(after + 1, number - guessed)
            self._guessed = guessed
            self._drafted, self._accepted = drafted, accepted
        self._last = number
        return self._first <= number < self._first + self._guessed
