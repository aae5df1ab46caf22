"""Words as crag compares them: read, in either number, stemmed, normalized, counted.

Numbers are folded and common words set aside. ``words_of`` is the one reading of a word,
``same_word`` the one notion of two words being the same word in either number, ``stem`` the
one crude stem: every rule goes through them (a test fails on a word pattern or a plural
stripped anywhere else).
"""

from __future__ import annotations

import re
import unicodedata

# Words too common to rank by; without this, "the" alone matches nearly every chunk.
STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself
    yourselves""".split()
)


_WORD = re.compile(r"[^\W_]+")
"""A word: letters and digits of any alphabet ("Zürich" is one word, not ``z`` and ``rich``)."""
_WORD_OR_NAME = re.compile(r"\w+")
"""A word, or an identifier joined by underscores (``units_sold``)."""


def words_of(text: str, *, underscores: bool = False) -> list[str]:
    """``text``'s words in lower case, in order: the one reading of a word every rule shares.

    Letters and digits of any alphabet; punctuation, spaces and (unless ``underscores``)
    underscores split them. Accents are kept: ``normalize`` folds them where a rule compares
    text that may be spelled either way.
    """
    return (_WORD_OR_NAME if underscores else _WORD).findall(text.lower())


def content_words(text: str, *, underscores: bool = True) -> list[str]:
    """``text``'s words (``words_of``) without the ``STOPWORDS``.

    ``units_sold`` is one word, or two with ``underscores=False`` (as the table rules read a
    question, a column or a title).
    """
    return [w for w in words_of(text, underscores=underscores) if w not in STOPWORDS]


def plurals(word: str) -> set[str]:
    """``word`` and its plurals: "page": "pages"; "box": "boxes"; "city": "cities"."""
    found = {word, word + "s", word + "es"}
    if word.endswith("y"):
        found.add(word[:-1] + "ies")
    return found


def forms(word: str) -> set[str]:
    """``word`` in either number: itself, its plural and its singular.

    "city": "cities"; "box": "boxes"; "pdf": "pdfs"; "classes": "class"; "forces": "force".
    Spelling rules, not a dictionary: every candidate is made, and a word no one writes ("forc")
    meets nothing. The relation is symmetric: ``b in forms(a)`` exactly when ``a in forms(b)``.
    """
    found = plurals(word)
    if word.endswith("s"):
        found.add(word[:-1])
    if word.endswith("es"):
        found.add(word[:-2])
    if word.endswith("ies"):
        found.add(word[:-3] + "y")
    return found


def same_word(a: str, b: str) -> bool:
    """Whether two (lower-case) words are one word in either number: "city" and "cities"."""
    return b in forms(a)


def says(words: list[str], phrase: list[str]) -> bool:
    """Whether ``words`` hold ``phrase`` word for word, its last as written or in the plural.

    "Which web pages…" says "web page"; a question speaks of several of what a name names
    ("the PDFs"), but one of a plural name ("salary") does not say it ("Salaries.csv"): read
    so, two calibration questions about salaries were asked of that table alone, where the
    model then filtered on a month, and both went from right to "I don't know".
    """
    n = len(phrase)
    if not n:
        return False
    last = plurals(phrase[-1])
    for i in range(len(words) - n + 1):
        if words[i : i + n - 1] == phrase[:-1] and words[i + n - 1] in last:
            return True
    return False


def stem(word: str) -> str:
    """A crude stem, so "coached" meets "coach" and "games" meets "game".

    For counting the words a question and a sentence share; ``same_word`` is the stricter
    match of a name.
    """
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def normalize(text: str) -> str:
    """Lower-case, accent-folded, punctuation-free, single-spaced text for containment checks."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(ch for ch in text if not unicodedata.combining(ch)).lower()
    text = re.sub(r"[^\w\s]", " ", text)
    return " ".join(text.split())


_UNITS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen"
).split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
NUMBER_WORDS = {w: n for n, w in enumerate(_UNITS)} | {w: 20 + 10 * i for i, w in enumerate(_TENS)}
"""Number words and their values (compounds such as "twenty five" are read by ``fold_numbers``)."""


SCALES = {"hundred": 100, "thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}
"""Number words that multiply the number before them ("a hundred", "two thousand")."""


def fold_numbers(words: list[str]) -> list[str]:
    """Normalized ``words`` with spelled-out numbers as digits.

    "twenty five" -> "25"; "a hundred" -> "100"; "two thousand" -> "2000"; "3 million" ->
    "3000000" (a scale after "a", "one" or a whole number multiplies it).
    """
    out: list[str] = []
    i = 0
    while i < len(words):
        value = NUMBER_WORDS.get(words[i])
        after = NUMBER_WORDS.get(words[i + 1]) if i + 1 < len(words) else None
        if value is not None and value >= 20 and after is not None and 0 < after < 10:
            out.append(str(value + after))  # "twenty five": one number
            i += 2
        elif words[i] in SCALES and out and (out[-1] == "a" or out[-1].isdigit()):
            count = 1 if out[-1] == "a" else int(out[-1])
            out[-1] = str(count * SCALES[words[i]])  # "a hundred", "two thousand"
            i += 1
        else:
            out.append(words[i] if value is None else str(value))
            i += 1
    return out


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """``count`` and the noun in its number: "1 chunk", "2 chunks", "0 chunks"."""
    return f"{count} {noun if count == 1 else nouns or noun + 's'}"
