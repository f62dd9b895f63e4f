"""The warnings the `kernels` package logs when it loads a variant, logged by kernelhub under the
same logger names and in the same words, so that a program's logging configuration (levels,
handlers, filters on `kernels._internals.*`) treats both alike. The words are the core's
(python/src/core/kernels_words/kernels_words.hpp, written from the checks of
fetch/internal/kernelhub/fetch/internal/variant_checks.hpp); the logger is the kernels module that says it:

- `kernels._internals.validate`: a variant whose metadata.json records no digest (its integrity
  cannot be verified), and one built from a dirty git tree (kernels' DigestValidator and
  DirtyValidator).
- `kernels._internals.resolver`: UNSTABLE_KERNELS_ALL_LATEST overriding the version asked for.
"""

from __future__ import annotations

import logging

from . import _environment

VALIDATE = logging.getLogger("kernels._internals.validate")
RESOLVER = logging.getLogger("kernels._internals.resolver")


def log_load_warnings(fetched: dict, stacklevel: int = 4) -> None:
    """Logs what kernels would for the variant the core fetched (its dict's `warnings`).
    `stacklevel` points the record at the caller of get_kernel."""
    for warning in fetched["warnings"]:
        logger = RESOLVER if warning.startswith(_environment.UNSTABLE_KERNELS_ALL_LATEST) else VALIDATE
        logger.warning(warning, stacklevel=stacklevel)
