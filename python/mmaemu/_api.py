# SPDX-License-Identifier: BSD-2-Clause
"""The seed's API over mmaemu._core (semantics.md, presets_profiles.md, api.md of seed 001)."""

import dataclasses
import json
import os
from typing import Optional, Tuple

from numpy import bool_ as _np_bool

from . import _core
from . import _numbers as _n
from . import _tensors as _t
from ._errors import UnsupportedFeatureError, error_class, unwrap, warning_class


# ---------------------------------------------------------------- presets and profiles


@dataclasses.dataclass(frozen=True)
class Preset:
    """The tensor-core arithmetic of one instruction family. A Preset(...) you build yourself
    has maturity "custom" (its fields are checked by the C++ core when it is built)."""

    name: str = "custom"
    nfma: int = 16
    frac: int = 13
    frac_out: int = 13
    rounding: str = "toward_zero"
    min_exp: int = -132
    late_c: bool = False
    slow_chunk: Optional[int] = None
    maturity: str = "custom"
    validated_scope: str = ""
    evidence: str = ""
    inputs: str = "fp8"  # "fp8", "fp16", "bf16" or "tf32"
    half_out: str = "none"  # fp16 accumulator: "none", "block_then_nearest", "sum_to_nearest"

    def __post_init__(self):
        if not isinstance(self.name, str):
            raise TypeError(f"Preset.name: expected a string, got {type(self.name).__name__}")
        if not isinstance(self.maturity, str):
            raise TypeError(f"Preset.maturity: expected a string, got "
                            f"{type(self.maturity).__name__}")
        for field in ("nfma", "frac", "frac_out", "min_exp"):
            v = getattr(self, field)
            if isinstance(v, bool) or not isinstance(v, int):
                raise TypeError(f"Preset.{field}: expected an int, got {type(v).__name__}")
        if self.maturity == "custom":
            unwrap(_core.check_preset(self._fields()), stacklevel=4)
        else:
            _check_shipped(self)

    def _fields(self):
        return {"name": self.name, "nfma": int(self.nfma), "frac": int(self.frac),
                "frac_out": int(self.frac_out), "rounding": self.rounding,
                "min_exp": int(self.min_exp), "late_c": bool(self.late_c),
                "slow_chunk": self.slow_chunk, "inputs": self.inputs, "half_out": self.half_out}


def _preset_from(d):
    return Preset(**d)


def _check_shipped(p):
    """A Preset of a maturity other than "custom" is a shipped one, used by name: it must be
    that shipped preset field for field. An altered one (dataclasses.replace keeping the
    maturity) is refused here, when it is made, rather than silently replaced by the shipped
    one when it is used."""
    status, value, _warns = _core.get_preset(p.name, True)
    if status == "error":
        raise ValueError(
            f"Preset {p.name!r}: maturity {p.maturity!r} is for the shipped presets, and no "
            f"shipped preset has that name ({value[1]}); a preset of your own has maturity "
            "'custom' (the default)")
    differ = [f.name for f in dataclasses.fields(p) if f.name in value
              and getattr(p, f.name) != value[f.name]]
    if differ:
        shown = ", ".join(f"{n}={getattr(p, n)!r} (shipped: {value[n]!r})" for n in differ)
        raise ValueError(
            f"Preset {p.name!r}: differs from the shipped preset {p.name!r} in {shown} but keeps "
            f"its maturity {p.maturity!r}; a shipped preset cannot be altered. For a preset of "
            "your own give maturity='custom' (dataclasses.replace(p, ..., maturity='custom')): "
            "it is then checked and used as it is")


def _preset_arg(preset, what="preset"):
    """What the core takes for a preset argument: a shipped preset by name (a Preset of a
    shipped maturity was checked to be the shipped one when it was made), a custom Preset by
    its fields (used as it is, whatever its name), or a name."""
    if isinstance(preset, Preset):
        return preset.name if preset.maturity != "custom" else preset._fields()
    if isinstance(preset, str):
        return preset
    raise TypeError(f"{what}: expected a Preset or a preset name, got {type(preset).__name__}")


def get_preset(name):
    """A shipped preset ("ada", "hopper", "b200_mma_sync" or its alias "blackwell"); warns
    ExperimentalPresetWarning once per process for an experimental one (every time for the
    alias); ValueError for "sm_120", "rtx_blackwell" and unknown names."""
    if isinstance(name, Preset):
        return name
    return _preset_from(unwrap(_core.get_preset(str(name), False)))


def list_presets():
    return list(_core.list_presets())


@dataclasses.dataclass(frozen=True)
class SplitKEntry:
    M: int
    N: int
    K: int
    a: str
    b: str
    out: str
    fast: bool
    S: int
    scheme: str
    verified: bool
    evidence: str


@dataclasses.dataclass(frozen=True)
class RejectRule:
    a: Optional[str]
    b: Optional[str]
    out: Optional[str]
    message: str


@dataclasses.dataclass(frozen=True)
class Profile:
    """A reference platform (GPU, SM count, cuBLASLt version, caller, workspace, split-K table,
    rejects), as the C++ core ships it. Only shipped profiles can be passed to the calls (by
    object or by name)."""

    name: str
    preset: str
    gpu_name: str
    capability: str
    sm_count: int
    cublaslt_version: str
    caller: str
    torch_version: str
    workspace_bytes: int
    align: int
    splitk_table: Tuple[SplitKEntry, ...]
    splitk_table_id: str
    split_schemes: Tuple[str, ...]
    rejects: Tuple[RejectRule, ...]
    maturity: str
    splitk_maturity: str
    envelope: Optional[dict] = None
    # The GEMM-level fields that differ between platforms (docs/semantics.md): split_grain,
    # slow_block (a length, "preset" or "flat"), merge, scale_fold, evidence.
    gemm: Optional[dict] = None

    def matches_device(self, device=None):
        """True only if the CUDA device has the profile's GPU name, SM count and cuBLASLt
        version (the cuBLASLt version is read through torch, which must be importable)."""
        if _core.cuda_unavailable_reason():
            return False
        status, value, _ = _core.device_identity(_device_ordinal(device))
        if status != "ok":
            return False
        name, sm_count, _cc = value
        if name != self.gpu_name or sm_count != self.sm_count:
            return False
        version = _cublaslt_version()
        return version is not None and version == self.cublaslt_version


def _cublaslt_version():
    try:
        import ctypes

        lib = ctypes.CDLL("libcublasLt.so")  # loaded by torch's CUDA runtime already
        v = int(lib.cublasLtGetVersion())
    except (OSError, AttributeError):
        return None
    return f"{v // 10000}.{(v // 100) % 100}.{v % 100}"


def _profile_from(d):
    table = d["splitk_table"]
    return Profile(
        name=d["name"], preset=d["preset"], gpu_name=d["gpu_name"], capability=d["capability"],
        sm_count=d["sm_count"], cublaslt_version=d["cublaslt_version"], caller=d["caller"],
        torch_version=d["torch_version"], workspace_bytes=d["workspace_bytes"],
        align=d["align"],
        splitk_table=tuple(SplitKEntry(**e) for e in table["entries"]),
        splitk_table_id=table["id"], split_schemes=tuple(d["split_schemes"]),
        rejects=tuple(RejectRule(**r) for r in d["rejects"]), maturity=d["maturity"],
        splitk_maturity=d["splitk_maturity"], envelope=d["envelope"], gemm=d.get("gemm"))


def get_profile(name_or_profile=None):
    """A shipped profile by name (None: $MMAEMU_PROFILE or "hopper"); a Profile is returned as
    it is. ValueError for an unknown name."""
    if isinstance(name_or_profile, Profile):
        return name_or_profile
    name = "" if name_or_profile is None else str(name_or_profile)
    return _profile_from(unwrap(_core.get_profile(name)))


def list_profiles():
    return list(_core.list_profiles())


def _profile_name(profile):
    if profile is None:
        return ""
    if isinstance(profile, Profile):
        # Only shipped profiles reach the core (by name): a hand-built or altered Profile is
        # refused rather than silently replaced by the shipped one of the same name.
        shipped = _profile_from(unwrap(_core.get_profile(profile.name)))
        if shipped != profile:
            raise UnsupportedFeatureError(
                f"profile: a hand-built Profile ({profile.name!r}, differing from the shipped "
                "one) cannot be used for a call; pass a shipped profile or its name")
        return profile.name
    if isinstance(profile, str):
        return profile
    raise TypeError(f"profile: expected a Profile, a profile name or None, got "
                    f"{type(profile).__name__}")


# ---------------------------------------------------------------- split-K


@dataclasses.dataclass(frozen=True)
class SplitK:
    """An explicit split: S = 1 (scheme "none"), or S > 1 with "contiguous" (hopper
    profiles), "serial" or "pairwise" (ada profiles)."""

    S: int = 1
    scheme: str = "none"


@dataclasses.dataclass(frozen=True)
class SplitDecision:
    S: int
    scheme: str
    source: str
    verified: bool
    table_id: str
    note: str


def _decision_from(d):
    return SplitDecision(S=d["S"], scheme=d["scheme"], source=d["source"],
                         verified=d["verified"], table_id=d["table_id"], note=d["note"])


def _splitk_text(splitk):
    """The core's text form of a splitk argument; ValueError naming it otherwise."""
    if isinstance(splitk, SplitK):
        return "1" if splitk.S == 1 and splitk.scheme == "none" else f"{splitk.S},{splitk.scheme}"
    if isinstance(splitk, bool):
        raise ValueError(f"splitk {splitk!r}: expected 'auto', 1, (S, scheme) or a SplitK")
    if isinstance(splitk, int):
        return str(_n.integer(splitk, "splitk", 1, 2 ** 31 - 1))
    if isinstance(splitk, str):
        return splitk
    if isinstance(splitk, tuple) and len(splitk) == 2 and isinstance(splitk[0], int) \
            and not isinstance(splitk[0], bool) and isinstance(splitk[1], str):
        return f"{_n.integer(splitk[0], 'splitk S', 1, 2 ** 31 - 1)},{splitk[1]}"
    raise ValueError(f"splitk {splitk!r}: expected 'auto', 1, (S, scheme) or a SplitK")


def resolve_splitk(M, N, K, *, a_dtype, b_dtype, out_dtype, use_fast_accum, profile=None,
                   splitk="auto", layout_std=True, strict=None, dry=False):
    """The split-K decision for an M x N x K call on the profile's platform."""
    if strict is None and os.environ.get("MMAEMU_SPLITK_STRICT") is not None:
        strict = os.environ.get("MMAEMU_SPLITK_STRICT") == "1"
    d = unwrap(_core.resolve_splitk(
        _n.integer(M, "M", 0, _n.INT64_MAX), _n.integer(N, "N", 0, _n.INT64_MAX),
        _n.integer(K, "K", 0, _n.INT64_MAX), _t.format_name(a_dtype, "a_dtype"),
        _t.format_name(b_dtype, "b_dtype"), _t.format_name(out_dtype, "out_dtype"),
        bool(use_fast_accum), _profile_name(profile), _splitk_text(splitk), bool(layout_std),
        None if strict is None else bool(strict), bool(dry)))
    return _decision_from(d)


# ---------------------------------------------------------------- GEMM entry points


def _required(value, what):
    """A tensor argument that has no default: None is a wrong type, named as such."""
    if value is None:
        raise TypeError(f"{what}: expected a torch tensor or a NumPy array, got None")
    return value


def _flag(value, what):
    if not isinstance(value, (bool, _np_bool)):
        raise TypeError(f"{what}: expected a bool, got {type(value).__name__}")
    return bool(value)


def _text(value, what):
    if not isinstance(value, str):
        raise TypeError(f"{what}: expected a string, got {type(value).__name__}")
    return value


def _call_args(input, mat2, scale_a, scale_b, bias, scale_result, out_dtype, use_fast_accum,
               out, profile, splitk, backend, fmt):
    for value, what in ((input, "input"), (mat2, "mat2"), (scale_a, "scale_a"),
                        (scale_b, "scale_b")):
        _required(value, what)
    _flag(use_fast_accum, "use_fast_accum")
    _text(backend, "backend")
    fa, fb = (fmt if isinstance(fmt, (tuple, list)) else (fmt, fmt))
    # Each argument is described first, so that one of the wrong type is named as such before
    # the kinds of the others are compared.
    specs = (_t.spec(input, "input", fa), _t.spec(mat2, "mat2", fb),
             _t.spec(scale_a, "scale_a"), _t.spec(scale_b, "scale_b"), _t.spec(bias, "bias"),
             _t.spec(scale_result, "scale_result"))
    out_name = None
    if out is not None:
        out_name = _t.spec(out, "out")[0]
    kind, device = _t.kind_of(input, mat2, scale_a, scale_b, bias, scale_result, out)
    args = specs + (None if out_dtype is None else _t.format_name(out_dtype, "out_dtype"),
                    bool(use_fast_accum), out_name, _profile_name(profile),
                    _splitk_text(splitk), str(backend))
    return kind, device, args


def scaled_mm(input, mat2, scale_a, scale_b, bias=None, scale_result=None, out_dtype=None,
              use_fast_accum=False, *, out=None, profile=None, splitk="auto", backend="auto",
              fmt=None):
    """torch._scaled_mm of torch 2.7.1, computed with the numerics of the profile's platform.

    input [M, K] and mat2 [K, N] are torch FP8 tensors, ml_dtypes FP8 arrays, or uint8 codes
    with fmt= ("e4m3", "e5m2" or a pair for input and mat2). The result is of the same kind
    as the inputs (torch on input's device, or NumPy)."""
    kind, device, args = _call_args(input, mat2, scale_a, scale_b, bias, scale_result,
                                    out_dtype, use_fast_accum, out, profile, splitk, backend, fmt)
    codes, name, _used = unwrap(_core.scaled_mm(*args, False))
    res = _t.result(codes, name, kind, device)
    if out is not None:
        return _t.copy_into(out, res, kind)
    return res


def accumulate(a, b, *, use_fast_accum, profile=None, splitk="auto", backend="auto",
               out_dtype_for_split="float32", fmt=None):
    """The fp32 [M, N] accumulator of a @ b.T before the scales, as the profile's cuBLAS
    computes it. a is [M, K] and b is [N, K]; use_fast_accum has no default."""
    _required(a, "a")
    _required(b, "b")
    _flag(use_fast_accum, "use_fast_accum")
    _text(backend, "backend")
    fa, fb = (fmt if isinstance(fmt, (tuple, list)) else (fmt, fmt))
    kind, device = _t.kind_of(a, b)
    codes, _decision, _used = unwrap(_core.accumulate(
        _t.spec(a, "a", fa), _t.spec(b, "b", fb), bool(use_fast_accum), _profile_name(profile),
        _splitk_text(splitk), str(backend),
        _t.format_name(out_dtype_for_split, "out_dtype_for_split")))
    return _t.result(codes, "fp32", kind, device)


@dataclasses.dataclass(frozen=True)
class DecisionEvidence:
    """One modelling decision a call relies on: its level ("instruction", "GEMM", "API"), the
    choice on the call's profile, its status ("confirmed", "consistent", "contradicted",
    "unverified", computed from the evidence registry, docs/semantics.md), the status in words
    ("consistent with bitequiv (H100, cuBLASLt 13.1.1)"), the evidence source ids and why."""

    id: str
    level: str
    title: str
    choice: str
    status: str
    text: str
    sources: Tuple[str, ...]
    why: str


@dataclasses.dataclass(frozen=True)
class CallPlan:
    """What a scaled_mm call would do. validation is "ok" or (error class name, message);
    warnings are (category, message) pairs; evidence lists the decisions the call relies on
    and evidence_summary has one line per level ("GEMM level: 6 consistent with ...")."""

    validation: object
    profile: str
    preset: str
    preset_maturity: str
    split: Optional[SplitDecision]
    backend: str
    fallbacks: Tuple[str, ...]
    warnings: Tuple[tuple, ...]
    profile_maturity: str = ""
    notes: Tuple[str, ...] = ()
    out_dtype: str = ""
    M: int = 0
    N: int = 0
    K: int = 0
    evidence: Tuple[DecisionEvidence, ...] = ()
    evidence_summary: Tuple[str, ...] = ()

    @property
    def ok(self):
        return self.validation == "ok"


def explain(input, mat2, scale_a, scale_b, bias=None, scale_result=None, out_dtype=None,
            use_fast_accum=False, *, out=None, profile=None, splitk="auto", backend="auto",
            fmt=None):
    """Validates a scaled_mm call and reports what it would do, without computing it; never
    raises for an invalid call (the error is in CallPlan.validation)."""
    try:
        _kind, _device, args = _call_args(input, mat2, scale_a, scale_b, bias, scale_result,
                                          out_dtype, use_fast_accum, out, profile, splitk,
                                          backend, fmt)
        status, value, _warns = _core.scaled_mm(*args, True)
    except (ValueError, TypeError, UnsupportedFeatureError) as e:
        return CallPlan(validation=(type(e).__name__, str(e)), profile="", preset="",
                        preset_maturity="", split=None, backend="", fallbacks=(), warnings=())
    if status == "error":  # an argument the core could not read
        return CallPlan(validation=tuple(value), profile="", preset="", preset_maturity="",
                        split=None, backend="", fallbacks=(), warnings=())
    return _plan_from(json.loads(value))


def _plan_from(j):
    split = j.get("split")
    return CallPlan(
        validation="ok" if j.get("validation") == "ok" else tuple(j.get("validation")),
        profile=j.get("profile", ""), preset=j.get("preset", ""),
        preset_maturity=j.get("preset_maturity", ""),
        split=None if not split else _decision_from(
            {k: split.get(k, "") for k in ("S", "scheme", "source", "verified", "table_id",
                                           "note")}),
        backend=j.get("backend", ""), fallbacks=tuple(j.get("fallbacks", ())),
        warnings=tuple((warning_class(w.get("class", "")), w.get("message", ""))
                       for w in j.get("warnings", ())),
        profile_maturity=j.get("profile_maturity", ""), notes=tuple(j.get("notes", ())),
        out_dtype=j.get("out_dtype", ""), M=j["shape"]["M"], N=j["shape"]["N"],
        K=j["shape"]["K"],
        evidence=tuple(DecisionEvidence(
            id=e["id"], level=e["level"], title=e["title"], choice=e["choice"],
            status=e["status"], text=e["text"], sources=tuple(e["sources"]), why=e["why"])
            for e in j.get("evidence", {}).get("decisions", ())),
        evidence_summary=tuple(j.get("evidence", {}).get("summary", ())))


# ---------------------------------------------------------------- backends


@dataclasses.dataclass(frozen=True)
class GateResult:
    gate: str
    version: int
    passed: bool
    cached: bool
    detail: str


@dataclasses.dataclass(frozen=True)
class BackendStatus:
    name: str
    available: bool
    source: str
    validated_here: bool
    gates: Tuple[GateResult, ...]
    reason: str


def _device_ordinal(device):
    if device is None:
        return 0
    if isinstance(device, bool):
        raise ValueError(f"device {device!r}: expected None, an index, 'cuda:N' or a device")
    if isinstance(device, int):
        ordinal = _n.integer(device, "device", 0, 2 ** 31 - 1)
    else:
        text = str(device)
        if text == "cuda":
            ordinal = 0
        elif text.startswith("cuda:") and text[5:].isascii() and text[5:].isdigit() \
                and len(text) <= 11:
            ordinal = int(text[5:])
        else:
            raise ValueError(f"device {device!r}: expected None, an index, 'cuda:N' or a "
                             "CUDA device")
    if ordinal < 0:
        raise ValueError(f"device {device!r}: must be 0 or more")
    return ordinal


def _gates(st):
    return tuple(GateResult(**g) for g in st["gates"])


def backends_status(device=None):
    """Backend name -> BackendStatus for the device; kernels are loaded and gated only when a
    CUDA device is visible."""
    ordinal = _device_ordinal(device)
    out = {"reference": BackendStatus("reference", True, "cpu", True, (), "")}
    why = _core.cuda_unavailable_reason()
    statuses = None
    if not why:
        status, value, warns = _core.kernel_statuses(ordinal, [], False)
        unwrap(("ok", None, warns))
        if status == "ok":
            statuses = value
        else:
            why = f"{value[0]}: {value[1]}"
    if statuses is None:
        for kernel, _preset in _core.kernel_names():
            name = "cuda:" + kernel
            out[name] = BackendStatus(name, False, "", False, (), why)
        return out
    for st in statuses:
        reason = "" if st["available"] else (st["skip"] or st["failure"])
        out[st["backend"]] = BackendStatus(st["backend"], st["available"], st["source"],
                                           st["validated_here"], _gates(st), reason)
    return out


def selftest(device=None, *, kernels="all", force=False):
    """Runs the gates of every kernel (or of `kernels`) on the device: kernel name -> list of
    GateResult (empty where nothing could run: no device, or a by-design skip)."""
    ordinal = _device_ordinal(device)
    if isinstance(kernels, str):
        names = [] if kernels == "all" else [k for k in kernels.split(",") if k]
    else:
        names = [str(k) for k in kernels]
    statuses = unwrap(_core.kernel_statuses(ordinal, names, bool(force)))
    return {st["kernel"]: list(_gates(st)) for st in statuses}


__all__ = [
    "Preset", "get_preset", "list_presets", "Profile", "get_profile", "list_profiles",
    "SplitK", "SplitDecision", "resolve_splitk", "scaled_mm", "accumulate", "explain",
    "CallPlan", "DecisionEvidence", "BackendStatus", "GateResult", "backends_status", "selftest",
    "UnsupportedFeatureError", "error_class",
]
