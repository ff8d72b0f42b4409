"""Greedy word wrapping."""


def wrap(text, width=70):
    """Split `text` into lines of at most `width` characters, breaking between words.

    Runs of whitespace count as one space. Words longer than `width` are cut into pieces of
    `width` characters.
    """
    if width < 1:
        raise ValueError("width must be at least 1, got %r" % (width,))
    lines = []
    current = ""
    for word in text.split():
        while len(word) > width:
            if current:
                lines.append(current)
                current = ""
            lines.append(word[:width])
            word = word[width:]
        if not current:
            current = word
        elif len(current) + 1 + len(word) < width:
            current = current + " " + word
        else:
            lines.append(current)
            current = word
    if current:
        lines.append(current)
    return lines


def fill(text, width=70, indent=""):
    """Wrap `text` into one string; every line starts with `indent` and fits in `width`."""
    return "\n".join(indent + line for line in wrap(text, width - len(indent)))
