"""The exceptions kernelhub raises: one class per failure you can act on.

Each class also derives from every class the `kernels` package (0.19.1, and 0.17.2 where it
differs) raises for the same failure, so `except` clauses written for `kernels` keep working after
switching the import (tests/python/test_shim_exceptions.py holds the table, case by case):

    a repo the Hub does not have         RepositoryNotFoundError and ValueError (kernels raises the
                                         first, or a ValueError when its publisher check fails first)
    a revision the Hub does not have     RevisionNotFoundError
    a version the repo does not have,    ValueError
      a repo a lock file does not list,
      an untrusted publisher, bad input,
      a dependency cycle
    no variant that runs here            FileNotFoundError
    offline and not in the cache         FileNotFoundError and ValueError
    files that do not match the digest,  RuntimeError
      a second build with a loaded id,
      a kernel that needs a newer kernels
    a token the Hub refuses              huggingface_hub's HfHubHTTPError (0.19) and ValueError (0.17)
    a gated repo                         huggingface_hub's GatedRepoError

`code` is the C++ core's ErrorCode name ("not_found", ...); the class follows the core's code and
not-found kind, never the message's wording.
"""

from __future__ import annotations

import functools


class KernelhubError(Exception):
    """Base class of every kernelhub error."""

    code = "internal"

    def __init__(self, message: str, code: str | None = None):
        super().__init__(message)
        if code is not None:
            self.code = code

    def __str__(self) -> str:  # OSError subclasses would otherwise format (errno, strerror)
        return str(self.args[0]) if self.args else ""


class InvalidArgumentError(KernelhubError, ValueError):
    """Malformed input: a repo id, a LOCAL_KERNELS value, a backend, an option."""

    code = "invalid_argument"


class NotFoundError(KernelhubError, FileNotFoundError):
    """A repo, revision, file or local path that does not exist."""

    code = "not_found"


class RepoNotFoundError(NotFoundError, ValueError):
    """A Hub repo that does not exist. kernels raises huggingface_hub's RepositoryNotFoundError,
    or a ValueError when its publisher check (which comes first) cannot find the organisation;
    this is both (kernelhub.errors.RepositoryNotFoundError adds the first)."""


class VersionNotFoundError(NotFoundError, ValueError):
    """The repo has no `v<N>` branch for the version asked (kernels raises ValueError)."""


class NotLockedError(NotFoundError, ValueError):
    """The lock file does not list the repo (kernels raises ValueError)."""


class NoCompatibleVariantError(KernelhubError, FileNotFoundError):
    """Variants exist but none can run here; the message carries the decision trace."""

    code = "no_compatible_variant"


class OfflineMissError(KernelhubError, FileNotFoundError, ValueError):
    """Offline (HF_HUB_OFFLINE) and the cache does not hold the kernel. kernels raises ValueError
    for a version and FileNotFoundError for a revision; this is both."""

    code = "offline_miss"


class UntrustedPublisherError(KernelhubError, ValueError):
    """The publisher is not a trusted kernel publisher and the caller did not opt in."""

    code = "untrusted_publisher"


class CorruptFileError(KernelhubError, ValueError):
    """A file that is not what it claims to be (bad metadata.json, not ELF, truncated)."""

    code = "corrupt_file"


class DependencyCycleError(KernelhubError, ValueError):
    """Kernels whose metadata.json `kernel-depends` lead back to one of them; the message names the
    chain (kernels raises ValueError)."""

    code = "dependency_cycle"


class IntegrityError(KernelhubError, RuntimeError):
    """Bytes that do not match their recorded digest (metadata.json `digest` or the lock hash)."""

    code = "integrity_mismatch"


class SignatureError(KernelhubError, RuntimeError):
    """The variant's signature (its `metadata.json.sigstore`, docs/SIGNING.md) refuses the load."""


class BadSignatureError(SignatureError):
    """A signature bundle that is malformed or does not verify: never loaded, whatever else was
    asked (kernels 0.19.1 warns and loads it)."""

    code = "bad_signature"


class MissingSignatureError(SignatureError):
    """No signature, where one is required (KERNELHUB_REQUIRE_SIGNATURE, or signers configured for
    the repo or its org)."""

    code = "missing_signature"


class ClientTooOldError(KernelhubError, RuntimeError):
    """The kernel's metadata.json asks for a newer `kernels` (`kernels-minver`) than the one whose
    loading behaviour kernelhub implements (kernelhub.KERNELS_COMPATIBLE_VERSION)."""

    code = "client_too_old"


class IncompatibleBinaryError(KernelhubError, ImportError):
    """A well-formed binary that cannot load here."""

    code = "incompatible_binary"


class LoadError(KernelhubError, ImportError):
    """Importing the variant failed."""

    code = "load_failed"


class AccessError(KernelhubError, PermissionError):
    """The repo is gated, or the token is missing or wrong."""

    code = "unauthorized"


class HubError(KernelhubError, ConnectionError):
    """Network, I/O and anything else."""

    code = "network"


_BY_CODE = {
    "invalid_argument": InvalidArgumentError,
    "not_found": NotFoundError,
    "no_compatible_variant": NoCompatibleVariantError,
    "corrupt_file": CorruptFileError,
    "integrity_mismatch": IntegrityError,
    "incompatible_binary": IncompatibleBinaryError,
    "load_failed": LoadError,
    "offline_miss": OfflineMissError,
    "unauthorized": AccessError,
    "gated": AccessError,
    "untrusted_publisher": UntrustedPublisherError,
    "bad_signature": BadSignatureError,
    "missing_signature": MissingSignatureError,
    "client_too_old": ClientTooOldError,
    "dependency_cycle": DependencyCycleError,
}


def _hub_flavoured(base: type, hub_class_name: str, *also: type) -> type:
    """`base` that is also huggingface_hub's `hub_class_name` (and `also`), when huggingface_hub is
    installed. Built on first use, so `import kernelhub` does not import huggingface_hub."""
    try:
        from huggingface_hub import errors as hub_errors

        hub_class = getattr(hub_errors, hub_class_name)
    except (ImportError, AttributeError):
        return type(base.__name__, (base, *also), {"__module__": __name__}) if also else base

    def __init__(self, message: str, code: str | None = None):
        # huggingface_hub's HTTP errors want the HTTP response; the core has already read it.
        KernelhubError.__init__(self, message, code)
        self.response = None
        self.server_message = None
        self.request_id = None

    return type(hub_class_name, (base, hub_class, *also), {"__init__": __init__, "__module__": __name__})


@functools.lru_cache(maxsize=None)
def repository_not_found_error() -> type:
    """The class raised for a repo the Hub does not have: RepoNotFoundError (a NotFoundError and
    a ValueError) and huggingface_hub's RepositoryNotFoundError."""
    return _hub_flavoured(RepoNotFoundError, "RepositoryNotFoundError")


@functools.lru_cache(maxsize=None)
def revision_not_found_error() -> type:
    """NotFoundError and huggingface_hub's RevisionNotFoundError."""
    return _hub_flavoured(NotFoundError, "RevisionNotFoundError")


@functools.lru_cache(maxsize=None)
def access_error(gated: bool) -> type:
    """AccessError and what huggingface_hub raises for it: GatedRepoError for a gated repo;
    HfHubHTTPError for a token the Hub refuses (kernels 0.19 re-raises it with a login hint), and
    ValueError (kernels 0.17 turns it into a failed publisher check)."""
    if gated:
        return _hub_flavoured(AccessError, "GatedRepoError")
    return _hub_flavoured(AccessError, "HfHubHTTPError", ValueError)


def from_core(code: str, message: str, missing: str = "") -> KernelhubError:
    """The exception for an error from kernelhub._core: CoreError(code, message, missing), where
    `missing` is what a not_found did not find ("repo", "revision", "version", "file", "lock" or "")."""
    if code == "not_found":
        if missing == "version":
            return VersionNotFoundError(message, code)
        if missing == "lock":
            return NotLockedError(message, code)
        if missing == "repo":
            return repository_not_found_error()(message, code)
        if missing == "revision":
            return revision_not_found_error()(message, code)
    if code in ("unauthorized", "gated"):
        return access_error(code == "gated")(message, code)
    return _BY_CODE.get(code, HubError)(message, code)


def call(function, *args, **kwargs):
    """Runs a kernelhub._core function, raising its CoreError as the exception from_core gives."""
    from . import _core

    try:
        return function(*args, **kwargs)
    except _core.CoreError as e:
        raise from_core(*e.args) from None


def __getattr__(name: str):
    # kernelhub.errors.RepositoryNotFoundError / RevisionNotFoundError, built on first access.
    if name == "RepositoryNotFoundError":
        return repository_not_found_error()
    if name == "RevisionNotFoundError":
        return revision_not_found_error()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
