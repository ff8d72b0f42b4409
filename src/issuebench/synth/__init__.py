"""Make graded tasks by breaking working code (SWE-smith style), validated on covering tests.

    synthesize(src, SynthOptions(output=DIR, ...)) -> SynthResult
    generators.mutate_range(path, source, first_line, last_line) -> list[Candidate]

See docs/synth.md.
"""

from issuebench.synth.generators import mutate_range
from issuebench.synth.pipeline import SynthOptions, SynthResult, synthesize

__all__ = [
    "SynthOptions",
    "SynthResult",
    "mutate_range",
    "synthesize",
]
