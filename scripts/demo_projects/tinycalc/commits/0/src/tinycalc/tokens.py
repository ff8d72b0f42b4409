"""Turn an expression string into tokens."""

import re


class CalcError(Exception):
    """A problem with an expression; `position` is the offset of the offending character."""

    def __init__(self, message, position=None):
        super().__init__(message)
        self.position = position


class Token:
    __slots__ = ("kind", "text", "position")

    def __init__(self, kind, text, position):
        self.kind = kind  # "number", "name", "op" or "end"
        self.text = text
        self.position = position

    def __repr__(self):
        return "Token(%r, %r, %d)" % (self.kind, self.text, self.position)


NUMBER = re.compile(r"\d+(?:\.\d+)?")
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Longest operators first, so "**" is never read as two "*".
OPERATORS = ("**", "+", "-", "*", "/", "%", "(", ")", ",")


def tokenize(source):
    """The tokens of `source`, ending with an "end" token."""
    tokens = []
    position = 0
    while position < len(source):
        char = source[position]
        if char.isspace():
            position += 1
            continue
        match = NUMBER.match(source, position) or NAME.match(source, position)
        if match:
            kind = "number" if match.re is NUMBER else "name"
            tokens.append(Token(kind, match.group(), position))
            position = match.end()
            continue
        for operator in OPERATORS:
            if source.startswith(operator, position):
                tokens.append(Token("op", operator, position))
                position += len(operator)
                break
        else:
            raise CalcError("unexpected character %r" % char, position)
    tokens.append(Token("end", "", len(source)))
    return tokens
