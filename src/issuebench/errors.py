"""User-facing errors: each names where the problem is (file, line, field) and what to do."""

from __future__ import annotations

from pathlib import Path


class IssuebenchError(Exception):
    """An error the user can act on. The CLI prints it as one line, never as a traceback."""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message}\n  hint: {self.hint}" if self.hint else self.message


class InputError(IssuebenchError):
    """Bad input data: points at the file, the line (1-based) and the field."""

    def __init__(self, path: str | Path | None, message: str, *, line: int | None = None,
                 field: str | None = None, hint: str | None = None) -> None:
        parts = [str(path) + (f":{line}" if line is not None else "")] if path is not None else []
        if field is not None:
            # Without a file, the field is a command-line option (--cutoff) or a named setting.
            parts.append(f"option {field}" if field.startswith("-") else f"field '{field}'")
        super().__init__(": ".join([*parts, message]), hint=hint)
        self.path = path
        self.line = line
        self.field = field


class OptionError(InputError):
    """A command-line option with a value that cannot work: names the option and what it accepts."""

    def __init__(self, option: str, message: str, *, hint: str | None = None) -> None:
        super().__init__(None, message, field=option, hint=hint)


class MissingSystemPiece(IssuebenchError):
    """A system tool or interpreter is missing: the message says what to install."""
