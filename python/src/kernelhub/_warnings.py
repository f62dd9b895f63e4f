"""The warnings the `kernels` package logs when it loads a variant, logged by kernelhub under the
same logger names and in the same words, so that a program's logging configuration (levels,
handlers, filters on `kernels._internals.*`) treats both alike.

- `kernels._internals.validate`: a variant whose metadata.json records no digest (its integrity
  cannot be verified), and one built from a dirty git tree (kernels' DigestValidator and
  DirtyValidator).
"""

from __future__ import annotations

import logging

VALIDATE = logging.getLogger("kernels._internals.validate")


def log_load_warnings(fetched: dict, stacklevel: int = 4) -> None:
    """Logs what kernels would for the variant the core fetched (its dict: metadata, variant,
    has_digest, dirty_sources). `stacklevel` points the record at the caller of get_kernel."""
    kernel = f"Kernel '{fetched['metadata'].get('name', '')}' variant '{fetched['variant']}'"
    if fetched["dirty_sources"]:
        VALIDATE.warning(
            f"{kernel} was built from a dirty git tree ({', '.join(fetched['dirty_sources'])} had uncommitted "
            "changes). Its recorded git revision does not fully identify the sources it was built from, so the "
            "build may not be reproducible.",
            stacklevel=stacklevel,
        )
    if not fetched["has_digest"]:
        VALIDATE.warning(
            f"{kernel}: the metadata does not record a digest, so its integrity cannot be verified",
            stacklevel=stacklevel,
        )
