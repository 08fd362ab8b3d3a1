"""The vocabulary of the tests' models: the layout of the author's converted SentencePiece
model (16,000 pieces, then <0x00>..<0xFF> at 16000..16255), filled with Italian words,
their prefixes and suffixes. gguf_models.py writes models over it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterable

import gguf

N_PIECES = 16_000
N_VOCAB = 16_256
FIRST_BYTE_ID = N_PIECES
UNK_ID, BOS_ID, EOS_ID = 0, 1, 2
LORA_PUSH_PIECE = "▁gatto"

# Printable ASCII, the SentencePiece space, Italian letters and typography. "\n" is a
# piece too, so ordinary text (newlines included) never needs byte tokens.
CHARS = ["▁", "\n"] + [chr(c) for c in range(0x21, 0x7F)] + list("àèéìòùÀÈÉÌÒÙ’«»“”‘—…")

_WORDS = """
il la lo le li gli i un una uno e è di da in con su per tra fra a al alla allo ai agli
alle del della dello dei degli delle nel nella nello nei negli nelle sul sulla dal dalla
col che chi cui non ma se o né anche come quando dove perché poi già ancora sempre mai
più meno molto poco tanto troppo ogni tutto tutti tutta tutte questo questa quello
quella stesso altro altra altri io tu lui lei noi voi loro mi ti si ci vi ne me te sé
mio mia tuo tua suo sua nostro vostro essere era erano fu fosse sono sei siamo stato
stata avere aveva avevano ebbe ha hanno ho fare fece fatto dire disse detto andare andò
venire venne vedere vide guardare guardò sentire sentì sapere sapeva potere poteva
volere voleva dovere doveva stare stava parlare parlò pensare pensava tornare tornò
restare rimase prendere prese mettere mise lasciare lasciò trovare trovò aspettare
aspettava chiamare casa notte giorno sera mattina tempo anno vita mondo uomo donna
bambino bambina madre padre figlio figlia fratello sorella amico amica nome voce occhi
mano mani cuore testa viso porta finestra strada città paese mare cielo sole luna stella
terra acqua fuoco vento pioggia neve albero fiore campo bosco monte fiume lago libro
lettera parola storia silenzio sogno luce ombra buio freddo caldo gatto cane cavallo
uccello pane vino tavola letto stanza muro chiesa piazza treno nave viaggio guerra pace
paura amore dolore gioia speranza memoria verità buia buio lunga lungo grande piccolo
piccola vecchio vecchia giovane nuovo nuova bello bella brutto alto alta basso bianco
bianca nero nera rosso rossa verde azzurro chiaro scuro dolce triste felice solo sola
ultimo ultima primo prima dopo sopra sotto dentro fuori vicino lontano oggi ieri domani
adesso allora così qui qua lì là forse proprio niente nulla qualcosa qualcuno nessuno La
Il Lo Le Gli I Un Una E Di In Con Per Ma Non Che Era Quando Come Dove Poi Anche Io Tu
Lui Lei Noi Voi Loro Questo Questa Quella Quel Nel Nella Sul Dal Così Allora Forse
Sempre Ancora Tutto Ogni Casa Notte Giorno Sera
"""

_SUFFIXES = """
are ere ire ato ata ati ate ito ita iti uto uta ando endo zione zioni mente
issimo issima etto etta ino ina ini ine one oni ano ono ava avo avano eva evano
iva ivano ebbe essi asse assero erò erà eria ezza anza enza ismo ista isti
"""


@dataclass(frozen=True)
class Vocab:
    """Pieces, scores and token types (gguf.TokenType values) indexed by token id."""

    tokens: tuple[str, ...]
    scores: tuple[float, ...]
    types: tuple[int, ...]
    _index: dict[str, int] = field(repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.tokens)

    def id_of(self, piece: str) -> int:
        """Id of `piece` ("▁casa", "<0xFF>", "</s>"); KeyError if absent."""
        return self._index[piece]

    @property
    def word_ids(self) -> tuple[int, ...]:
        """Ids of the whole-word pieces ("▁il", "▁casa"...), in vocabulary order."""
        return tuple(self._index["▁" + w] for w in dict.fromkeys(_WORDS.split()))

    @property
    def byte_ids(self) -> range:
        return range(FIRST_BYTE_ID, N_VOCAB)


def byte_id(value: int) -> int:
    """Token id of the byte token for `value` (0..255)."""
    return FIRST_BYTE_ID + value


def _fillers() -> Iterable[str]:
    # Pseudo-Italian syllables, so that text sampled from the random model still
    # reads as text. Their prefixes are not pieces, so the tokenizer rarely forms them.
    syllables = [c + v for c in "bcdfglmnprstvz" for v in "aeiou"]
    for a in syllables:
        for b in syllables:
            yield "▁" + a + b
            yield a + b
    for a in syllables:
        for b in syllables:
            for c in syllables:
                yield "▁" + a + b + c


@lru_cache(maxsize=1)
def italian_vocab() -> Vocab:
    """The author's 16,256-token layout; see the module docstring."""
    T = gguf.TokenType
    pieces: dict[str, int] = {}  # piece -> token type, insertion order = id

    def add(piece: str, ttype: int = T.NORMAL) -> None:
        pieces.setdefault(piece, ttype)

    add("<unk>", T.UNKNOWN)
    add("<s>", T.CONTROL)
    add("</s>", T.CONTROL)
    for ch in CHARS:
        add(ch)
    words = ["▁" + w for w in _WORDS.split()]
    suffixes = _SUFFIXES.split()
    for piece in words + suffixes:
        add(piece)
    # llama.cpp's SPM tokenizer only merges adjacent symbols whose concatenation is a
    # piece, so every prefix of a word must exist for the whole word to be reachable.
    for piece in words + suffixes:
        for end in range(2, len(piece)):
            add(piece[:end])
    fillers = _fillers()
    while len(pieces) < N_PIECES:
        add(next(fillers))
    assert len(pieces) == N_PIECES

    tokens = list(pieces)
    types = [int(t) for t in pieces.values()]
    # SentencePiece ranks merges by score: longer pieces score higher, so whole
    # words win over their prefixes; specials stay at 0.
    scores = [0.0 if t != T.NORMAL else float(len(p)) for p, t in pieces.items()]
    for b in range(256):
        tokens.append(f"<0x{b:02X}>")
        types.append(int(T.BYTE))
        scores.append(0.0)
    index = {p: i for i, p in enumerate(tokens)}
    return Vocab(tuple(tokens), tuple(scores), tuple(types), index)
