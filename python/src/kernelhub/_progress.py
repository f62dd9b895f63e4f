"""Download progress, shown as the `kernels` package shows it: huggingface_hub's tqdm bars (the
downloads themselves run in the C++ core, which reports to `bar_reporter()`'s callable).

The same switches apply: HF_HUB_DISABLE_PROGRESS_BARS=1 and
`huggingface_hub.utils.disable_progress_bars()` (all bars, or the `huggingface_hub.snapshot_download`
group kernels' downloads belong to) turn them off; as in huggingface_hub, a bar is drawn only on a
terminal unless TQDM_POSITION=-1, and not when huggingface_hub's logger is set to NOTSET. Without
huggingface_hub (kernelhub needs none), plain tqdm draws them if it is installed, with
HF_HUB_DISABLE_PROGRESS_BARS read here; without either, nothing is drawn.

Nothing of this is decided, and neither huggingface_hub nor tqdm is imported, until a download
starts: a get_kernel that finds everything cached (the common call) pays for no bar machinery
(tests/python/test_shim_api.py checks what a warm get imports). A retry the core makes during a
download is logged as a warning on the `kernelhub` logger, as huggingface_hub logs its own resumes.
"""

from __future__ import annotations

import logging

from . import _environment

# The group huggingface_hub's snapshot_download bars belong to (what kernels downloads with).
BAR_GROUP = "huggingface_hub.snapshot_download"


def _bar_factory():
    """A function (total, label) -> tqdm bar, or None when bars are off or cannot be drawn."""
    try:
        from huggingface_hub.utils import are_progress_bars_disabled
        from huggingface_hub.utils import tqdm as hf_tqdm
        from huggingface_hub.utils.tqdm import is_tqdm_disabled
    except ImportError:
        try:
            from tqdm.auto import tqdm
        except ImportError:
            return None
        if _environment.is_truthy(_environment.HF_HUB_DISABLE_PROGRESS_BARS):
            return None
        return lambda total, label: tqdm(total=total, desc=label, unit="B", unit_scale=True)
    if are_progress_bars_disabled(BAR_GROUP):
        return None
    disable = is_tqdm_disabled(logging.getLogger("huggingface_hub").getEffectiveLevel())
    return lambda total, label: hf_tqdm(total=total, desc=label, unit="B", unit_scale=True, disable=disable,
                                        name=BAR_GROUP)


def bar_reporter():
    """The `progress` callable for a core fetch. The core calls it with ("start", label,
    total_bytes, files) when a download starts, ("update", bytes), ("retry", message) and
    ("close",); whether a bar is drawn is decided at "start"."""
    bar = None

    def report(event: str, *args) -> None:
        nonlocal bar
        if event == "start":
            make_bar = _bar_factory()
            label, total, files = args
            bar = make_bar(total, f"{label} ({files} file{'s' if files != 1 else ''})") if make_bar else None
        elif event == "update" and bar is not None:
            bar.update(args[0])
        elif event == "retry":
            logging.getLogger("kernelhub").warning("kernelhub: %s", args[0])
        elif event == "close" and bar is not None:
            bar.close()
            bar = None

    return report
