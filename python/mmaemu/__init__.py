# SPDX-License-Identifier: BSD-2-Clause
"""mmaemu: a bit-exact emulator of torch._scaled_mm FP8 GEMMs on Ada and Hopper.

Importing the package has no side effects: it imports neither torch nor the CUDA driver (torch
tensors are recognised only when the program imported torch itself; the driver is opened only
when a call asks for a CUDA backend or a device). See docs/python.md.
"""

from . import _core
from ._api import (
    BackendStatus,
    CallPlan,
    DecisionEvidence,
    GateResult,
    Preset,
    Profile,
    SplitDecision,
    SplitK,
    accumulate,
    backends_status,
    explain,
    get_preset,
    get_profile,
    list_presets,
    list_profiles,
    resolve_splitk,
    scaled_mm,
    selftest,
)
from ._errors import (
    BackendFallbackWarning,
    BackendUnavailableError,
    ExperimentalPresetWarning,
    MmaemuError,
    ReferenceRejectsError,
    SplitKUnknownError,
    UnsupportedFeatureError,
    UnvalidatedEnvelopeWarning,
    UnverifiedSplitWarning,
)
from . import model, testing

__version__ = _core.version

__all__ = [
    "scaled_mm", "accumulate", "explain", "CallPlan", "DecisionEvidence", "model", "Preset", "get_preset",
    "list_presets", "Profile", "get_profile", "list_profiles", "resolve_splitk", "SplitK",
    "SplitDecision", "backends_status", "BackendStatus", "GateResult", "selftest", "testing",
    "MmaemuError", "ReferenceRejectsError", "UnsupportedFeatureError", "SplitKUnknownError",
    "BackendUnavailableError", "ExperimentalPresetWarning", "UnverifiedSplitWarning",
    "UnvalidatedEnvelopeWarning", "BackendFallbackWarning", "__version__",
]
