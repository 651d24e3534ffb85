"""Fast paths of the transform give what the general paths give."""

from __future__ import annotations

import random
import re
import time
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from etl.transform.ids import content_key
from etl.transform.methods.tokens import SPACED_TOKEN_RE, _spaced_tokens
from etl.transform.methods.tokens import Text as _Text

# Letters, digits, joiners, quotes, possessives, brackets and several kinds of white space.
PIECES = st.sampled_from([*"aB7-.+@/'’sS(),éΣ_", " ", " ", "  ", "\x0b", "\u2003", "\x00"])


def tokens(t: _Text) -> tuple[list[object], ...]:
    return t.words, t.lower, t.shapes, t.starts, t.ends, t.cues, t.name_shaped, t.boundaries


@settings(max_examples=400, deadline=None)
@given(st.lists(PIECES, max_size=30).map("".join))
def test_tokens_from_pieces_are_the_tokens_of_the_text(text: str) -> None:
    general = _Text.__new__(_Text)
    general._tokenize(text)
    pieces = _Text.__new__(_Text)
    if pieces._tokenize_pieces(text):
        assert tokens(pieces) == tokens(general)
    else:  # declined: nothing set, so the general path that follows starts clean
        assert not hasattr(pieces, "words") and not hasattr(pieces, "ends")


def test_the_fast_path_takes_most_texts_of_pieces() -> None:
    """The property above compares only texts the fast path accepts: it must accept most."""
    rng = random.Random(0)
    choices = [*"aB7-.+@/'’sS(),éΣ_", " ", " ", "  ", "\x0b", "\u2003", "\x00"]
    texts = ["".join(rng.choice(choices) for _ in range(rng.randint(0, 30))) for _ in range(1000)]
    accepted = sum(bool(_Text.__new__(_Text)._tokenize_pieces(text)) for text in texts)
    assert accepted >= 600  # 725 of 1000 at the time of writing


def test_pieces_read_texts_with_runs_of_spaces_and_trailing_space() -> None:
    for text in ["a  b", "x \x00   y, z  ", "LLaMA-3.1's (CNN/DailyMail)  "]:
        general = _Text.__new__(_Text)
        general._tokenize(text)
        pieces = _Text.__new__(_Text)
        assert pieces._tokenize_pieces(text)
        assert tokens(pieces) == tokens(general)


@settings(max_examples=400, deadline=None)
@given(st.lists(PIECES.filter(lambda p: " " not in p), max_size=8).map("".join))
def test_spaced_tokens_of_a_piece_are_the_tokenizers(piece: str) -> None:
    assert _spaced_tokens(piece) == SPACED_TOKEN_RE.findall(" " + piece)


def test_spaced_tokens_of_words_of_letters_and_digits() -> None:
    for piece in ["CommVQ", "GSM8K", "é7Σ", "x", "٣٤", "ǅx", "_", "a_b", ""]:
        assert _spaced_tokens(piece) == SPACED_TOKEN_RE.findall(" " + piece)


def reference_content_key(text: str) -> str:
    """content_key as defined: NFKD, casefold, every `[\\W_]` character removed."""
    folded = unicodedata.normalize("NFKD", text).casefold()
    return "".join(c for c in folded if not re.match(r"[\W_]", c))


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40))
def test_content_key_is_nfkd_casefold_without_non_word_characters(text: str) -> None:
    assert content_key(text) == reference_content_key(text)


def test_content_key_of_characters_that_fold_to_several() -> None:
    for text in ["Straße ﬁne", "ǅ İstanbul ΣΑΣ", "K ſ ẞ", "x\u0301\u0323 é\u0323", "a_b—c’d"]:
        assert content_key(text) == reference_content_key(text)


def test_white_space_ending_a_piece_is_read_once() -> None:
    """A long run of white space with no token after it (a masked URL) is not tried from each
    of its positions: 400,000 such characters take milliseconds, where each position tried to
    the end would be some 80 billion steps."""
    piece = "FooNet" + " " * 400_000
    started = time.process_time()
    assert _spaced_tokens(piece) == [" FooNet"]
    assert time.process_time() - started < 5
