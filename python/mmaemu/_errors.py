# SPDX-License-Identifier: BSD-2-Clause
"""The seed's error and warning classes, and the bridge from the C++ core's results."""

import warnings as _warnings


class MmaemuError(Exception):
    """Base of every mmaemu error."""


class ReferenceRejectsError(MmaemuError, RuntimeError):
    """torch 2.7.1 or the profile's cuBLAS rejects the call."""


class UnsupportedFeatureError(MmaemuError, NotImplementedError):
    """Bias, row-wise scales, grad mode, uncharacterised preset features."""


class SplitKUnknownError(MmaemuError, LookupError):
    """splitk="auto" cannot decide."""


class BackendUnavailableError(MmaemuError, RuntimeError):
    """An explicitly requested backend cannot serve the call."""


class ExperimentalPresetWarning(UserWarning):
    """An experimental preset or profile is used."""


class UnverifiedSplitWarning(UserWarning):
    """A split decision that was not replayed on hardware."""


class UnvalidatedEnvelopeWarning(UnverifiedSplitWarning):
    """S = 1 inferred by an envelope that failed its held-out test."""


class BackendFallbackWarning(RuntimeWarning):
    """A faster CUDA kernel could not serve the call; a slower one or the reference ran."""


ERRORS = {
    "MmaemuError": MmaemuError,
    "ValueError": ValueError,
    "ReferenceRejectsError": ReferenceRejectsError,
    "UnsupportedFeatureError": UnsupportedFeatureError,
    "SplitKUnknownError": SplitKUnknownError,
    "BackendUnavailableError": BackendUnavailableError,
    "MemoryError": MemoryError,
    "RuntimeError": RuntimeError,
    "TypeError": TypeError,
}

WARNINGS = {
    "ExperimentalPresetWarning": ExperimentalPresetWarning,
    "UnverifiedSplitWarning": UnverifiedSplitWarning,
    "UnvalidatedEnvelopeWarning": UnvalidatedEnvelopeWarning,
    "BackendFallbackWarning": BackendFallbackWarning,
}


def error_class(name):
    return ERRORS.get(name, MmaemuError)


def warning_class(name):
    return WARNINGS.get(name, UserWarning)


def unwrap(result, stacklevel=3):
    """Emits the warnings a core call collected, then returns its value or raises its error."""
    status, value, warns = result
    for cls_name, message in warns:
        _warnings.warn(message, warning_class(cls_name), stacklevel=stacklevel)
    if status == "error":
        cls_name, message = value
        raise error_class(cls_name)(message)
    return value


for _cls in (MmaemuError, ReferenceRejectsError, UnsupportedFeatureError, SplitKUnknownError,
             BackendUnavailableError, ExperimentalPresetWarning, UnverifiedSplitWarning,
             UnvalidatedEnvelopeWarning, BackendFallbackWarning):
    _cls.__module__ = "mmaemu"
