"""tinycalc: a small, safe calculator for arithmetic expressions."""

from tinycalc.evaluate import evaluate
from tinycalc.parser import parse
from tinycalc.tokens import CalcError, tokenize

__version__ = "0.2.0"
