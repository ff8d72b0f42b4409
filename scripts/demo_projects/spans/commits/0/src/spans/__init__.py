"""spans: half-open intervals and inclusive date ranges."""

from spans.interval import Interval

__version__ = "0.1.0.dev0"
