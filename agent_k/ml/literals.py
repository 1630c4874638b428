"""The only ways data reaches the source of a generated script: as a Python literal, or as text inside its
docstring. Column names, reasons and summaries come from a competition's files or a model; written through these
two functions they stay data whatever they hold (quotes, triple quotes, backslashes, newlines, NUL, any unicode),
and the rendered script compiles to the same code (docs/security.md, "What reaches a generated script").
"""

from __future__ import annotations

import math


class NotALiteral(ValueError):
    """A value that has no exact Python literal (a non-finite float, an object); the message says which."""


def literal(value: object) -> str:
    """`value` as Python source that evaluates back to it: strings, integers, finite floats, booleans, None,
    and lists, tuples and string-keyed dicts of them. `repr` writes these as literals; anything else (an object
    whose repr is code, `inf`, `nan`) is refused rather than pasted."""
    _check(value)
    return repr(value)


def _check(value: object) -> None:
    if value is None or isinstance(value, str | bool | int):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise NotALiteral(f"{value!r} is not a finite number")
        return
    if isinstance(value, list | tuple):
        for item in value:
            _check(item)
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise NotALiteral(f"a dict key must be text, not {type(key).__name__}")
            _check(item)
        return
    raise NotALiteral(f"a {type(value).__name__} is not data a script may hold")


def in_docstring(text: str) -> str:
    """`text` as it may appear inside a triple-quoted docstring, on one line: backslashes and quotes escaped,
    every character that is not printable (newlines, NUL, line separators, lone surrogates) written as its
    escape. Nothing in it can end the docstring."""
    out = []
    for char in text:
        if char == "\\":
            out.append("\\\\")
        elif char == '"':
            out.append('\\"')
        elif char.isprintable():
            out.append(char)
        else:
            out.append(char.encode("unicode_escape", errors="backslashreplace").decode("ascii"))
    return "".join(out)
