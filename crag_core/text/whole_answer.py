"""Whole answers: a span copied from a document, grown to the whole of what it names.

A small model asked for a short answer copies a span and sometimes stops too soon: "12,000"
where the text says "12,000 millimetres", "24" where the score is "24–10", "Rhine" where the
delta is the "Rhine–Meuse–Scheldt", "Denver" of the "Denver Broncos". ``whole_answer`` finds
the span in the documents it came from and grows it over what belongs to it, and nothing else:

- the other side of a dash or hyphen joining a number to a number or a word to a word
  ("24–10", "1990–1995", "Rhine–Meuse–Scheldt", "Saint-Germain"; not "9-play");
- a number's unit or scale after it ("millimetres", "km", "%", "million") and a currency sign
  before it ("$", "£");
- the rest of a name: capitalised words right beside a capitalised one-word answer, within its
  sentence.

The answer stays short (at most ``MAX_ADDED_WORDS`` more words) and stays a span of the
document, so its citation and quote still hold. An answer not found in the documents, or one
already a sentence, is left as it is.
"""

from __future__ import annotations

import re

from langchain_core.documents import Document

from crag_core.text.documents import body

MAX_ANSWER_WORDS = 8
"""A longer answer is a phrase or a sentence already: left as it is."""
MAX_ADDED_WORDS = 4
"""The most words the answer grows by."""
UNITS = frozenset(
    "% percent mm millimetre millimetres millimeter millimeters cm centimetre "
    "centimetres centimeter centimeters m metre metres meter meters km kilometre kilometres "
    "kilometer kilometers mi mile miles ft foot feet inch inches yd yard yards nmi kg "
    "kilogram kilograms g gram grams mg lb lbs pound pounds oz ounce ounces t tonne tonnes ton "
    "tons °c °f degrees degree k kelvin ha hectare hectares acre acres km2 km² m2 m² sq l litre "
    "litres liter liters ml gallon gallons mph km/h kph knots kn w kw mw gw watt watts kilowatts "
    "megawatts v volts hz khz mhz ghz kb mb gb tb bytes years year months month weeks week days "
    "day hours hour minutes minute seconds second million billion trillion thousand hundred "
    "crore lakh dollars dollar euros euro pounds sterling yen yuan rupees points point votes "
    "people inhabitants residents".split()
)
"""Words that say what a number counts."""
_SPACE = r"[ \u00a0]"
_DASH_JOIN = re.compile(
    rf"^(?:[\u2013\u2014-](?P<word>[\w.,'/]*\w)|{_SPACE}[\u2013\u2014-]{_SPACE}(?P<number>\d[\d.,]*))"
)
"""The other side of a dash right after the span: "–10", "-Germain", or " – 10" (spaced,
a number only: "Paris – the capital" joins nothing)."""
_DASH_JOIN_LEFT = re.compile(
    rf"(?:(?P<word>\w[\w.,'/]*)[\u2013\u2014-]|(?P<number>\d[\d.,]*){_SPACE}[\u2013\u2014-]{_SPACE})$"
)
_UNIT = re.compile(rf"^{_SPACE}?(?P<word>%|[^\W\d][\w°²/]*)")
_CURRENCY_LEFT = re.compile(r"[$£€¥₹]$")
_CAPITALISED = re.compile(rf"^{_SPACE}(?P<word>[A-Z][\w'.]*)")
_CAPITALISED_LEFT = re.compile(rf"(?:^|(?<=[\w,;:(]{_SPACE}))(?P<word>[A-Z][\w'.]*){_SPACE}$")
STARTERS = frozenset(
    "the a an in on at it he she they we i you this that these those his her its their our "
    "my after before when while as by for from with of to and but or if since during".split()
)
"""Capitalised words that start a sentence, not a name: never taken into one."""
_NUMBER_END = re.compile(r"\d$")


def whole_answer(answer: str, docs: list[Document]) -> str:
    """``answer`` grown to the whole of what it names in the first document holding it.

    In the document's own text: never into the context line a file's chunk is stored under.
    """
    words = answer.split()
    if not words or len(words) > MAX_ANSWER_WORDS:
        return answer
    pattern = re.compile(
        r"(?<![\w])" + rf"{_SPACE}+".join(re.escape(w) for w in words) + r"(?![\w])",
        re.IGNORECASE,
    )
    for doc in docs:
        text = body(doc)
        found = pattern.search(text)
        if found:
            start, end = _grown(text, found.start(), found.end())
            grown = " ".join(text[start:end].split())
            return grown if grown.lower() != answer.lower() else answer
    return answer


def _same_kind(joined: re.Match[str], number: bool) -> bool:
    """A number joins a number ("24–10"), a word a word ("Rhine–Meuse"): not "9-play"."""
    other = joined["word"] or joined["number"] or ""
    return other[:1].isdigit() == number


def _name_beside(after: str, before: str) -> tuple[str, re.Match[str]] | None:
    """A capitalised word right after the span, else right before it, and on which side.

    Not a sentence's first word, nor one that ends a sentence: the rest of a one-word
    answer's name.
    """
    for side, name in (
        ("after", _CAPITALISED.match(after)),
        ("before", _CAPITALISED_LEFT.search(before)),
    ):
        if name and name["word"].lower() not in STARTERS and not name["word"].endswith("."):
            return side, name
    return None


def _grown(text: str, start: int, end: int) -> tuple[int, int]:
    """The span [start, end) of ``text`` grown over its dash joins, unit and name.

    Only an answer of one word takes the rest of its name: one of several ("Larry Ellison")
    is a whole name already, and a capitalised word beside it belongs to something else.
    """
    single = len(text[start:end].split()) == 1
    added = 0
    while added < MAX_ADDED_WORDS:
        after, before = text[end:], text[:start]
        number = bool(_NUMBER_END.search(text[start:end]))
        if (joined := _DASH_JOIN.match(after)) and _same_kind(joined, number):
            end += joined.end()
        elif (joined := _DASH_JOIN_LEFT.search(before)) and _same_kind(
            joined, text[start].isdigit()
        ):
            start = joined.start()
        elif (
            number and (unit := _UNIT.match(after)) and (unit["word"].lower().rstrip(".") in UNITS)
        ):
            end += unit.end()
        elif _CURRENCY_LEFT.search(before):
            start -= 1
        elif single and text[start].isupper() and (name := _name_beside(after, before)):
            side, found = name
            start, end = (start, end + found.end()) if side == "after" else (found.start(), end)
        else:
            break
        added += 1
    return start, end
