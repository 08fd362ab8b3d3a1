"""The word table of the "phrases" test model (tests/gguf_models.py): data only."""

# word -> its successors and their probabilities. "." starts a sentence again, as does
# any word that is not a key. Every probability is k/500 with k not a multiple of 5, and
# no two of a word's are equal (a tie would leave the order to the CPU's rounding): so
# none lies on a colour-band edge (1, 5, 20, 50 %), a shown digit's rounding edge or an
# eighth of a bar cell, and neither does the mean of ten of them (a multiple of 0.02 %).
PHRASES = {
    ".": {"▁La": 0.512, "▁Il": 0.306, "▁Poi": 0.182},
    "▁La": {"▁notte": 0.524, "▁casa": 0.294, "▁luna": 0.182},
    "▁la": {"▁luna": 0.516, "▁porta": 0.302, "▁strada": 0.182},
    "▁Il": {"▁gatto": 0.528, "▁cane": 0.286, "▁vento": 0.186},
    "▁il": {"▁gatto": 0.508, "▁cane": 0.314, "▁mare": 0.178},
    "▁Poi": {"▁il": 0.562, "▁la": 0.438},
    "▁notte": {"▁era": 0.614, "▁fu": 0.386},
    "▁casa": {"▁era": 0.596, "▁fu": 0.404},
    "▁luna": {".": 0.592, ",": 0.254, "▁era": 0.154},
    "▁porta": {".": 0.618, ",": 0.382},
    "▁strada": {".": 0.584, ",": 0.416},
    "▁era": {"▁lunga": 0.446, "▁buia": 0.348, "▁dolce": 0.206},
    "▁fu": {"▁lunga": 0.556, "▁buia": 0.444},
    "▁lunga": {",": 0.562, ".": 0.438},
    "▁buia": {".": 0.612, ",": 0.388},
    "▁dolce": {",": 0.566, ".": 0.434},
    ",": {"▁e": 0.494, "▁ma": 0.302, "▁poi": 0.204},
    "▁e": {"▁il": 0.554, "▁la": 0.446},
    "▁ma": {"▁la": 0.608, "▁il": 0.392},
    "▁poi": {"▁la": 0.558, "▁il": 0.442},
    "▁gatto": {"▁guardò": 0.546, "▁aspettava": 0.298, "▁tornò": 0.156},
    "▁cane": {"▁guardò": 0.408, "▁aspettava": 0.344, "▁tornò": 0.248},
    "▁vento": {"▁tornò": 0.602, "▁era": 0.398},
    "▁mare": {".": 0.692, ",": 0.308},
    "▁guardò": {"▁la": 0.606, "▁il": 0.394},
    "▁aspettava": {".": 0.554, ",": 0.446},
    "▁tornò": {".": 0.648, ",": 0.352},
}
PHRASES_GREEDY = " La notte era lunga, e il gatto guardò la luna."
