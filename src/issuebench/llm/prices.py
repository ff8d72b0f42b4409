"""Token prices as data: dollars per million tokens, read from a TOML table shipped in the package."""

from __future__ import annotations

import functools
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path

from issuebench.errors import InputError
from issuebench.tomlcompat import tomllib

DEFAULT_PRICES = Path(__file__).resolve().parent / "data" / "prices.toml"


@dataclass(frozen=True)
class Price:
    input: float   # $ per million prompt tokens
    output: float  # $ per million completion tokens

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.input + completion_tokens * self.output) / 1_000_000


FREE = Price(0.0, 0.0)
_warned: set[str] = set()
_warn_lock = threading.Lock()


@functools.lru_cache(maxsize=8)
def load_prices(path: Path = DEFAULT_PRICES) -> dict[str, Price]:
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(path, f"cannot read the price table: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(path, f"not valid TOML: {exc}") from None
    out: dict[str, Price] = {}
    for name, row in (data.get("models") or {}).items():
        try:
            out[name] = Price(float(row["input"]), float(row["output"]))
        except (KeyError, TypeError, ValueError):
            raise InputError(path, "each model needs numeric input and output prices",
                             field=f"models.{name}") from None
    return out


def price_of(model: str, path: Path = DEFAULT_PRICES) -> Price:
    """The price of `model`; an unknown model is free, with one warning per name per process."""
    table = load_prices(path)
    name = model.rsplit("/", 1)[-1]  # "openai/gpt-4o" and "gpt-4o" cost the same
    matches = [key for key in table if name == key or name.startswith((key + "-", key + ":"))]
    if matches:
        return table[max(matches, key=len)]
    with _warn_lock:
        if model not in _warned:
            _warned.add(model)
            warnings.warn(f"no price for model {model!r}: its calls are counted as free "
                          f"(add it to a price table passed with --prices)", stacklevel=2)
    return FREE
