"""textkit: small, dependency-free helpers for everyday text wrangling."""

from textkit.case import camel_case, kebab_case, pascal_case, snake_case, split_words, title_case
from textkit.slug import slugify
from textkit.truncate import truncate
from textkit.wrap import fill, wrap

__version__ = "1.1.0"
