"""The package registries: the index client (pages, release dates, sdists), one room for every
layer that asks the index something."""

from __future__ import annotations

from issuebench.index.release_dates import (
    fetch_upload_times,
    first_wheel_after,
    index_files,
    upload_time,
    upload_times,
    version_of,
)
from issuebench.index.sdists import download_sdist, index_versions

__all__ = [
    "download_sdist",
    "fetch_upload_times",
    "first_wheel_after",
    "index_files",
    "index_versions",
    "upload_time",
    "upload_times",
    "version_of",
]
