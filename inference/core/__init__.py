"""The inference layer's core: what every seam shares and speaks in (errors, events,
settings, a model's facts, load options, the Backend protocol) and the one door to
llama_cpp. It imports nothing else of the inference layer."""
