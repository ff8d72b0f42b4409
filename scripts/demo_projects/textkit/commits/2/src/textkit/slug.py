"""URL slugs from arbitrary text."""

import re
import unicodedata

_NOT_ALLOWED = re.compile(r"[^a-z0-9]+")


def slugify(text, sep="-", max_length=None):
    """Lower-case ASCII slug of `text`: "Crème Brûlée!" -> "creme-brulee".

    With `max_length`, the slug is shortened to at most that many characters.
    """
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    slug = _NOT_ALLOWED.sub(sep, ascii_text.lower()).strip(sep)
    if max_length is not None and len(slug) > max_length:
        slug = slug[:max_length]
    return slug
