"""Convert identifiers and phrases between naming conventions."""

import re

# A word is a run of lower-case letters with an optional leading capital, a lone capital,
# or a run of digits: "page2Title" -> page, 2, Title.
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]|[0-9]+")

# Short words that stay lower case inside a title, as most English style guides have it.
MINOR_WORDS = frozenset("a an and as at but by for in nor of on or the to up via".split())


def split_words(text):
    """The words of an identifier or a phrase: "userName2" -> ["user", "Name", "2"]."""
    return _WORD.findall(text)


def snake_case(text):
    """"Hello World" -> "hello_world"."""
    return "_".join(word.lower() for word in split_words(text))


def kebab_case(text):
    """"someValue" -> "some-value"."""
    return "-".join(word.lower() for word in split_words(text))


def camel_case(text):
    """"user_id_field" -> "userIdField"."""
    words = [word.lower() for word in split_words(text)]
    if not words:
        return ""
    return words[0] + "".join(word.capitalize() for word in words[1:])


def pascal_case(text):
    """"make me a class" -> "MakeMeAClass"."""
    return "".join(word.capitalize() for word in split_words(text))


def title_case(text):
    """Capitalise every word except minor ones, which stay lower case unless first or last."""
    words = text.split()
    titled = []
    for index, word in enumerate(words):
        lower = word.lower()
        if 0 < index < len(words) - 1 and lower in MINOR_WORDS:
            titled.append(lower)
        else:
            titled.append(word[:1].upper() + word[1:])
    return " ".join(titled)
