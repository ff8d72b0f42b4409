"""Shorten text for previews and table cells."""


def truncate(text, length, ellipsis="…"):
    """Shorten `text` to at most `length` characters, ending with `ellipsis` when shortened.

    The cut falls between words when there is a space to cut at.
    """
    if len(text) <= length:
        return text
    if length <= len(ellipsis):
        return ellipsis[:length]
    room = length
    cut = text[:room]
    if not text[room].isspace():
        space = cut.rfind(" ")
        if space > 0:
            cut = cut[:space]
    return cut.rstrip() + ellipsis
