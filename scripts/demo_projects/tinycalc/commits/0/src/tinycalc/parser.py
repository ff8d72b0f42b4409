"""Recursive-descent parser producing a small tuple-based syntax tree.

Grammar, lowest precedence first:

    expression := term (("+" | "-") term)*
    term       := power (("*" | "/" | "%") power)*
    power      := factor ("**" power)?
    factor     := ("-" | "+") factor | atom
    atom       := NUMBER | NAME | NAME "(" arguments ")" | "(" expression ")"

Nodes: ("number", value), ("name", name, position), ("negate", operand),
("binary", operator, left, right, position), ("call", name, arguments, position).
"""

from tinycalc.tokens import CalcError, tokenize


def describe(token):
    return "end of input" if token.kind == "end" else repr(token.text)


class Parser:
    def __init__(self, source):
        self.tokens = tokenize(source)
        self.index = 0

    @property
    def current(self):
        return self.tokens[self.index]

    def accept(self, *operators):
        """Consume and return the current token if it is one of `operators`."""
        token = self.current
        if token.kind == "op" and token.text in operators:
            self.index += 1
            return token
        return None

    def expect(self, operator):
        token = self.accept(operator)
        if token is None:
            raise CalcError("expected %r, found %s" % (operator, describe(self.current)),
                            self.current.position)
        return token

    def parse(self):
        tree = self.expression()
        if self.current.kind != "end":
            raise CalcError("unexpected %s" % describe(self.current), self.current.position)
        return tree

    def expression(self):
        left = self.term()
        operator = self.accept("+", "-")
        if operator:
            return ("binary", operator.text, left, self.expression(), operator.position)
        return left

    def term(self):
        left = self.power()
        operator = self.accept("*", "/", "%")
        if operator:
            return ("binary", operator.text, left, self.term(), operator.position)
        return left

    def power(self):
        base = self.factor()
        operator = self.accept("**")
        if operator:
            return ("binary", "**", base, self.power(), operator.position)
        return base

    def factor(self):
        operator = self.accept("-", "+")
        if operator:
            operand = self.factor()
            return ("negate", operand) if operator.text == "-" else operand
        return self.atom()

    def atom(self):
        token = self.current
        if token.kind == "number":
            self.index += 1
            return ("number", float(token.text) if "." in token.text else int(token.text))
        if token.kind == "name":
            self.index += 1
            if self.accept("("):
                arguments = []
                if not self.accept(")"):
                    arguments.append(self.expression())
                    while self.accept(","):
                        arguments.append(self.expression())
                    self.expect(")")
                return ("call", token.text, arguments, token.position)
            return ("name", token.text, token.position)
        if self.accept("("):
            tree = self.expression()
            self.expect(")")
            return tree
        raise CalcError("unexpected %s" % describe(token), token.position)


def parse(source):
    """The syntax tree of `source`; raises CalcError on a syntax error."""
    return Parser(source).parse()
