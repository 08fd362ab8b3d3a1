"""A comparison of models on the author's text, as `scriptorium compare` and the app's compare
screen both run it: every model checked first, then each scored in a child process of its
own (inference/process/compare_worker.py), its rows handed back as plain records as they finish.

The records are plain data (what `compare --json` prints); the definitions of their numbers
are inference/local/comparison.py's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from scriptorium.app.i18n.marker import N_
from scriptorium.app.i18n.numbers import NumberFormat, english

WindowProgress = Callable[[str, int, int, int, int], None]
"""(row label, row number from 1, rows in all, windows done, windows in the text)."""


def never_stop() -> bool:
    return False


COLUMNS = (
    # (key, heading, format): bits per character first, the column that compares any two models.
    # The headings are marked: the app's compare screen translates them, `scriptorium compare` prints them as they are.
    ("bits_per_character", N_("bits/char"), "{:.4f}"),
    ("perplexity", "PPL", "{:.4f}"),
    ("kld_mean", "KLD", "{:.6f}"),
    ("kld_p99", "KLD p99", "{:.6f}"),
    ("top1_agreement", "top-1", "{:.2%}"),
    ("prefill_tps", N_("prefill t/s"), "{:.1f}"),
    ("decode_tps", N_("decode t/s"), "{:.1f}"),
    ("file_bytes", N_("file"), "bytes"),
    ("kv_bytes_per_token", N_("KV/token"), "bytes"),
    ("peak_memory_bytes", N_("peak mem"), "bytes"),
)


@dataclass(frozen=True, slots=True)
class CompareRequest:
    """What to compare: the models (the first is the reference), an adapter and its scales,
    and how to run them (None: each model's own context, every core, flash by measurement)."""

    models: tuple[Path, ...]
    lora: Path | None = None
    lora_scales: tuple[float, ...] = ()
    ctx: int | None = None
    spm: Path | None = None
    threads: int | None = None
    flash_attn: bool | None = None
    decode_tokens: int = 32


@dataclass
class Planned:
    """One model of the run and the rows it gives."""

    options: Any
    label: str
    scales: tuple[float | None, ...]
    digest: str
    file_bytes: int
    notes: list[str] = field(default_factory=list)


def plan_comparison(request: CompareRequest) -> list[Planned]:
    """Every model checked before anything runs, so a typo fails at once, in one line
    (a ScriptoriumError naming the file)."""
    from dataclasses import replace

    from scriptorium.inference.local.comparison import vocabulary_digest
    from scriptorium.inference.core.errors import ModelFileError, ScriptoriumError
    from scriptorium.inference.gguf.gguf_file import read_adapter_facts, read_model_facts
    from scriptorium.inference.core.load_options import LoadOptions, beyond_training
    from scriptorium.inference.core.settings import rule_for

    if not request.models:
        raise ScriptoriumError("no model to compare: name at least one GGUF model file")
    if request.lora_scales and request.lora is None:
        raise ScriptoriumError("--lora-scale needs --lora FILE")
    if request.decode_tokens < 0:
        raise ScriptoriumError("--decode-tokens must be 0 or more")
    if request.spm is not None and not request.spm.is_file():
        raise ScriptoriumError(f"SentencePiece model not found: {request.spm}")
    scales = tuple(request.lora_scales or (1.0,))
    for scale in scales:
        rule_for(LoadOptions, "lora_scale").check(scale)
    if request.lora is not None:
        read_adapter_facts(request.lora)  # is it an adapter at all
    plan = []
    for path in request.models:
        facts = read_model_facts(path)
        options = LoadOptions(
            model_path=path,
            n_ctx=request.ctx,
            n_threads=request.threads,
            n_threads_batch=request.threads,
            flash_attn=request.flash_attn,
            spm_path=request.spm,
        ).validated()
        planned = Planned(options, path.name, (None,), vocabulary_digest(path), facts.file_size)
        beyond = beyond_training(options.context_for(facts.context_length), facts.context_length)
        if beyond:
            planned.notes.append(beyond)
        if request.lora is not None:
            try:
                adapter = read_adapter_facts(request.lora, facts.architecture, path)
            except ModelFileError as misfit:
                planned.notes.append(f"without the adapter: {misfit}")
            else:
                planned.options = replace(options, lora_path=request.lora, lora_scale=scales[0])
                planned.scales = scales
                planned.file_bytes += adapter.file_size
        plan.append(planned)
    return plan


def run_comparison(
    plan: list[Planned],
    text: str,
    request: CompareRequest,
    scratch: Path,
    on_window: WindowProgress,
    on_record: Callable[[dict], None],
    should_stop: Callable[[], bool] = never_stop,
) -> None:
    """Score `text` with every planned model in turn, in `scratch` (a folder for the first
    model's distributions). A model that fails gives a record with its "error" and the run
    goes on; `should_stop` ends the run between windows (the running child is ended)."""
    from scriptorium.app import paths
    from scriptorium.inference.process.compare_worker import CompareJob, run_job
    from scriptorium.inference.core.errors import ScriptoriumError

    first = plan[0]
    shares_vocabulary = len(first.scales) > 1 or any(p.digest == first.digest for p in plan[1:])
    reference = None
    total = sum(len(p.scales) for p in plan)
    done = 0
    for index, planned in enumerate(plan):
        if should_stop():
            return
        job = CompareJob(
            options=planned.options,
            text=text,
            scales=planned.scales,
            write_reference=scratch / "reference.f32" if index == 0 and shares_vocabulary else None,
            reference=reference if reference is not None and planned.digest == first.digest else None,
            flash_cache=paths.flash_choice_file(),
            decode_tokens=request.decode_tokens,
        )
        finished_before = done

        def window_done(row: int, scale: float | None, windows_done: int, windows: int, planned=planned) -> None:
            on_window(row_label(planned, scale), finished_before + row + 1, total, windows_done, windows)

        def row_done(row: Any, planned=planned, index=index, job=job) -> None:
            nonlocal done
            done += 1
            notes = _row_notes(planned, index, first, job.reference is None and shares_vocabulary, request, row)
            on_record(row_record(row_label(planned, row.scale), planned, row, notes))

        try:
            written = run_job(job, window_done, row_done, should_stop)
        except ScriptoriumError as error:
            on_record(
                {
                    "label": planned.label,
                    "model": str(planned.options.model_path),
                    "error": str(error),
                    "notes": [str(error)],
                }
            )
            done = finished_before + len(planned.scales)
            continue
        if index == 0:
            reference = written


def _row_notes(
    planned: Planned, index: int, first: Planned, no_reference: bool, request: CompareRequest, row: Any
) -> list[str]:
    from scriptorium.inference.core.load_options import context_rounded

    notes = list(planned.notes)
    rounded = context_rounded(request.ctx, row.score.n_ctx)
    if rounded:
        notes.append(rounded + " (llama-perplexity's windows would be the size asked)")
    if index > 0 and planned.digest != first.digest:
        notes.append("not compared with the first model: another vocabulary")
    elif index > 0 and no_reference:
        notes.append("not compared with the first model: it gave no distributions to compare with")
    return notes


def row_label(planned: Planned, scale: float | None) -> str:
    if scale is None:
        return planned.label
    return f"{planned.label} + {planned.options.lora_path.name} x{scale:g}"


def row_record(label: str, planned: Any, row: Any, notes: list[str]) -> dict:
    """One row as plain data (what --json prints, with the per-token bits kept for the paragraphs)."""
    score = row.score
    notes = list(notes) + [n for n in (row.note, score.kld_note) if n]
    if score.cancelled:
        notes.append("stopped before the end of the text")
    return {
        "label": label,
        "model": str(planned.options.model_path),
        "lora": str(planned.options.lora_path) if row.scale is not None else None,
        "lora_scale": row.scale,
        "n_ctx": score.n_ctx,
        "tokenizer": row.tokenizer,
        "n_vocab": row.n_vocab,
        "tokens": score.tokens,
        "characters": score.characters,
        "bits": score.bits,
        "bits_per_character": score.bits_per_character,
        "perplexity": score.perplexity,
        "ppl_tokens": score.ppl_tokens,
        "kld_mean": score.kld_mean,
        "kld_p99": score.kld_p99,
        "top1_agreement": score.top1_agreement,
        "prefill_tps": score.prefill_tokens / score.prefill_ms * 1000.0 if score.prefill_ms else None,
        "decode_tps": row.decode_tps,
        "file_bytes": planned.file_bytes,
        "kv_bytes_per_token": row.kv_bytes_per_token,
        "peak_memory_bytes": row.peak_rss_bytes,
        "notes": notes,
        "token_bits": score.token_bits,
        "token_starts": score.token_starts,
    }


def paragraph_bits(record: dict, spans: list[tuple[int, int]]) -> list[float | None]:
    """Bits per character of each paragraph (`spans`: comparison.paragraph_spans) for a
    finished row; [] for a row that failed."""
    from scriptorium.inference.local.comparison import TextScore, paragraph_bits_per_character

    if "token_bits" not in record:
        return []
    score = TextScore(
        n_ctx=0, tokens=0, characters=0, bits=0.0, token_bits=record["token_bits"], token_starts=record["token_starts"]
    )
    return paragraph_bits_per_character(score, spans)


def cell(value: Any, style: str, number: NumberFormat = english) -> str:
    """A record's value as its column shows it ("-": none), its number written by `number`
    (the app's language; the command line's is Python's own)."""
    if value is None:
        return "-"
    if style == "bytes":
        from scriptorium.app.units import format_bytes

        return format_bytes(int(value), number)
    return number(value, style.removeprefix("{:").removesuffix("}"))


def paragraph_opening(paragraph: str, width: int = 40) -> str:
    """A paragraph's first words on one line, cut to `width` characters."""
    opening = " ".join(paragraph.split())
    return opening if len(opening) <= width else opening[: width - 1] + "…"
