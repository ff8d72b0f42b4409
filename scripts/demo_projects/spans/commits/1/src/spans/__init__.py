"""spans: half-open intervals and inclusive date ranges."""

from spans.interval import Interval
from spans.ops import gaps, merge, total_length

__version__ = "0.1.0.dev0"
