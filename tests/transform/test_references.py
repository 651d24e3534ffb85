"""References made keys: the identity key the cited paper would have, else a hash of the text."""

from __future__ import annotations

from etl.transform.references import MAX_REFERENCE_CHARS, reference_values, text_key


def test_ids_become_identity_keys_once_and_never_the_papers_own() -> None:
    given = [
        ("doi", "https://doi.org/10.5555/ABC"),
        ("doi", "10.5555/abc"),  # the same DOI
        ("arxiv", "2101.00001v2"),
        ("openalex", "https://openalex.org/W42"),
        ("openalex", "https://openalex.org/W7"),  # the paper itself
    ]
    assert reference_values(given, ["openalex:W7"]) == (
        ("doi:10.5555/abc", None),
        ("arxiv:2101.00001", None),
        ("openalex:W42", None),
    )


def test_text_and_ids_that_are_not_ids_are_kept_by_their_words() -> None:
    found = reference_values([("text", "Hopper, G. Candles. 2021."), ("openalex", "nope")], [])
    assert found[0] == (text_key("hopper g candles 2021"), "Hopper, G. Candles. 2021.")
    assert found[1][1] == "openalex: nope"
    assert reference_values([("text", " ... ")], []) == ()  # no word: nothing to name
    (long,) = reference_values([("text", "x" * (MAX_REFERENCE_CHARS + 5))], [])
    assert long[1] is not None and len(long[1]) == MAX_REFERENCE_CHARS
