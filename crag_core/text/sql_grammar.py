"""A grammar that lets a model write a SELECT naming only the real tables and columns.

llama.cpp constrains decoding with a GBNF grammar (its server's ``grammar`` field): at each
step only tokens that keep the reply inside the grammar can be sampled. ``select_grammar``
writes one for the tables a question is asked of. The reply must start with ``SELECT``
(no prose, no fence) and is read as a sequence of SQL words, each one of:

- a table or column of those tables, bare or quoted; a column may be qualified by its table or
  a short alias (``penguins.species``, or ``T1.species`` after ``penguins AS T1``): a letter
  and at most one digit, so that no made-up name can pass as a qualifier;
- an SQL keyword or one of the functions the table store allows (lower, upper or title case);
- a name made up after ``AS`` (an alias, or a type in ``CAST(x AS REAL)``);
- a string ('…', '' inside; no backslash before a quote, which SQL does not read as one), a
  number, an operator or a bracket.

After ``FROM`` or ``JOIN`` comes a table or a subquery's bracket, never a column
(``JOIN `category_id```). Two words are apart by a space or a symbol: with nothing between
them, a column and an alias written on (``orders`` + ``s2.category_id``) read as a name
no table has (``orders2.category_id``).

It is a vocabulary, not SQLite's syntax: the words can still be put together wrongly (the
database says so, and the model is asked once more), but a name that is no table or column
cannot be written at all. Values in strings are free: a value the table does not hold is how a
false premise shows (``crag_core.text.sql.missing_values``). An alias can be defined but not
referred to later by name (a grammar cannot remember it); the model writes the expression.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from crag_core.text.table_shapes import ALLOWED_FUNCTIONS, RESERVED, TableInfo

KEYWORDS = tuple(
    """
    select distinct all where group by having order asc desc limit offset and or not in
    is null like glob between case when then else end exists inner left cross on using
    union except intersect collate nocase true false
    """.split()
)
"""The SQL words a query may use besides names (``AS`` has its own rule: it names; ``FROM``
and ``JOIN`` theirs: a table follows)."""

OPERATORS = ("<=", ">=", "<>", "!=", "==", "||", "=", "<", ">", "+", "-", "*", "/", "%")


def _literal(text: str) -> str:
    return json.dumps(text)


def _any_case(word: str) -> str:
    """``select`` as ``"select" | "SELECT" | "Select"``: a word as SQL is written."""
    return (
        "(" + _either(_literal(w) for w in dict.fromkeys((word, word.upper(), word.title()))) + ")"
    )


def _either(options: Iterable[str]) -> str:
    return " | ".join(options)


def _names(names: Sequence[str]) -> str:
    """Each name bare (unless it is an SQL word: ``order``), in double quotes or in backticks."""
    forms = []
    for name in names:
        bare = [] if name.lower() in RESERVED else [_literal(name)]
        forms += [*bare, _literal(f'"{name}"'), _literal(f"`{name}`")]
    return _either(forms)


def select_grammar(tables: Sequence[TableInfo]) -> str:
    """The GBNF grammar of a SELECT over ``tables`` (see the module's account)."""
    columns = sorted({c.name for t in tables for c in t.columns} | {"_row"})
    functions = sorted(ALLOWED_FUNCTIONS - {"like", "glob"})
    tables_ = _names([t.name for t in tables])
    rules = {
        "root": f'{_any_case("select")} (gap lead | sp symbol lead?)* sp ";"?',
        "lead": "word | opener+ word?",
        "word": "keyword | source | alias | name | string | number",
        "keyword": _either(_any_case(k) for k in KEYWORDS),
        "source": f"from-join gap ({tables_})",
        "from-join": f"{_any_case('from')} | {_any_case('join')}",
        "opener": f'({_either(_any_case(f) for f in functions)} | from-join) sp "("',
        "alias": f"{_any_case('as')} [ \\t\\n]+ ({_names(columns)} | made-up)",
        "made-up": "[a-zA-Z_] [a-zA-Z0-9_]*",
        "name": f'(qualifier ".")? ({_names(columns)}) | {tables_}',
        "qualifier": f"{tables_} | [a-zA-Z] [0-9]?",
        "string": '"\'" ([^\'\\\\] | "\\\\" [^\'] | "\'\'")* "\'"',
        "number": '[0-9]+ ("." [0-9]+)?',
        "symbol": _either(_literal(s) for s in ("(", ")", ",", *OPERATORS)),
        "gap": "[ \\t\\n]+",
        "sp": "[ \\t\\n]*",
    }
    return "\n".join(f"{name} ::= {body}" for name, body in rules.items()) + "\n"
