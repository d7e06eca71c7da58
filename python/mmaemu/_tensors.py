# SPDX-License-Identifier: BSD-2-Clause
"""torch tensors and NumPy arrays as the C++ core sees them, and results back.

The core takes a tensor as (format name, integer array of the format's element size,
requires_grad): the array views the caller's memory with its shape and strides, and the core
reads that memory where it lies (no copy; a NumPy layout torch cannot express, such as a
negative stride, is made contiguous first). torch is never imported by this module: a
torch tensor can only be passed in by a program that imported torch already.
"""

import sys

import numpy as np

_TORCH_NAMES = {
    "float8_e4m3fn": "e4m3",
    "float8_e5m2": "e5m2",
    "float16": "fp16",
    "bfloat16": "bf16",
    "float32": "fp32",
}
# NumPy dtype names (ml_dtypes spells the FP8 and bfloat16 types like torch).
_NUMPY_NAMES = dict(_TORCH_NAMES)
_WIDTH = {"e4m3": 1, "e5m2": 1, "fp16": 2, "bf16": 2, "fp32": 4}
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32}
_SHORT = {"e4m3", "e5m2", "fp16", "bf16", "fp32"}
_ALIASES = {
    "float8_e4m3fn": "e4m3",
    "float8_e5m2": "e5m2",
    "float16": "fp16",
    "half": "fp16",
    "bfloat16": "bf16",
    "float32": "fp32",
    "float": "fp32",
    "binary32": "fp32",
}


def torch_module():
    """torch if the program imported it (never imports it)."""
    return sys.modules.get("torch")


def is_torch_tensor(x):
    """Whether x is a tensor of the torch the program imported. A module named torch whose
    Tensor is not a class of its own (object, or no class at all) has no tensors: everything
    would be an instance of it."""
    torch = torch_module()
    cls = getattr(torch, "Tensor", None) if torch is not None else None
    return isinstance(cls, type) and cls is not object and isinstance(x, cls)


# What mmaemu uses of a torch tensor; an object without them only looks like one.
_TENSOR_API = ("dtype", "element_size", "requires_grad", "detach", "device", "shape", "view")


def format_name(dtype, what="dtype"):
    """The short format name ("e4m3", "bf16", ...) of a format given as a string, a torch dtype
    or a NumPy / ml_dtypes dtype; ValueError naming `what` otherwise."""
    if isinstance(dtype, str):
        name = dtype[6:] if dtype.startswith("torch.") else dtype
        lowered = name.lower()
        if lowered in _SHORT:
            return lowered
        if lowered in _ALIASES:
            return _ALIASES[lowered]
        raise ValueError(f"{what}: {dtype!r} is not a format mmaemu knows "
                         "(e4m3, e5m2, fp16, bf16, fp32 or their torch names)")
    torch = torch_module()
    if torch is not None and isinstance(dtype, torch.dtype):
        return format_name(str(dtype), what)
    try:
        np_dtype = np.dtype(dtype)
    except TypeError:
        raise ValueError(f"{what}: {dtype!r} is not a dtype") from None
    return format_name(np_dtype.name, what)


def _codes_format(fmt, width, what):
    if fmt is None:
        raise ValueError(f"{what}: integer codes need fmt= naming their format "
                         "(e4m3 or e5m2 for FP8 codes)")
    name = format_name(fmt, "fmt")
    if _WIDTH[name] != width:
        raise ValueError(f"{what}: {width}-byte codes cannot hold {name} values")
    return name


def _torch_spec(t, what, fmt):
    missing = [n for n in _TENSOR_API if not hasattr(t, n)]
    if missing or not hasattr(torch_module(), "dtype"):
        raise TypeError(f"{what}: a {type(t).__name__} is an instance of torch.Tensor but not a "
                        f"torch tensor (it has no {', '.join(missing) or 'torch.dtype'})")
    try:
        return _torch_spec_of(t, what, fmt)
    except (AttributeError, KeyError) as e:
        raise TypeError(f"{what}: a {type(t).__name__} only looks like a torch tensor "
                        f"({type(e).__name__}: {e})") from None


def _torch_spec_of(t, what, fmt):
    torch = torch_module()
    dtype_name = str(t.dtype)[6:]
    width = t.element_size()
    if dtype_name in _TORCH_NAMES:
        name = _TORCH_NAMES[dtype_name]
    elif dtype_name in ("uint8", "int16", "int32"):
        name = _codes_format(fmt, width, what)
    else:
        raise TypeError(f"{what}: torch dtype {t.dtype} is not an FP8, float16, bfloat16 "
                        "or float32 tensor (or uint8 codes with fmt=)")
    requires_grad = bool(t.requires_grad)
    x = t.detach()
    if x.device.type != "cpu":
        # Copy exactly the storage span the view touches, so that the layout (strides,
        # padding) the call's checks look at is kept.
        span = 1 + sum((n - 1) * s for n, s in zip(x.shape, x.stride())) if x.numel() else 0
        flat = x.as_strided((span,), (1,), x.storage_offset()).cpu()
        x = flat.as_strided(tuple(x.shape), tuple(x.stride()), 0)
    int_dtype = {1: torch.uint8, 2: torch.int16, 4: torch.int32}[width]
    arr = x.view(int_dtype).numpy().view(_UINT[width])
    return (name, arr, requires_grad)


def _numpy_spec(a, what, fmt):
    a = np.asarray(a)
    name_of_dtype = a.dtype.name
    if name_of_dtype in _NUMPY_NAMES:
        name = _NUMPY_NAMES[name_of_dtype]
    elif a.dtype.kind in "ui" and a.dtype.itemsize in (1, 2, 4):
        name = _codes_format(fmt, a.dtype.itemsize, what)
    else:
        raise TypeError(f"{what}: NumPy dtype {a.dtype} is not float32, float16, an ml_dtypes "
                        "float8/bfloat16 type, or integer codes with fmt=")
    if any(s < 0 or s % a.itemsize for s in a.strides):
        a = np.ascontiguousarray(a)  # a layout torch cannot express
    return (name, a.view(_UINT[a.itemsize]), False)


def kind_of(*tensors):
    """("torch", device) or ("numpy", None) for the tensor arguments of a call; TypeError for a
    mixture."""
    kinds = set()
    device = None
    for t in tensors:
        if t is None:
            continue
        if is_torch_tensor(t):
            kinds.add("torch")
            if device is None:
                device = t.device
        elif isinstance(t, (np.ndarray, np.generic)):
            kinds.add("numpy")
    if len(kinds) > 1:
        raise TypeError("mmaemu: the tensor arguments mix torch tensors and NumPy arrays")
    return (kinds.pop() if kinds else "numpy"), device


def spec(x, what, fmt=None):
    """The core's description of a tensor argument (None stays None)."""
    if x is None:
        return None
    if is_torch_tensor(x):
        return _torch_spec(x, what, fmt)
    if isinstance(x, (float, int)) and not isinstance(x, bool):
        v = np.float32(x)
        if float(v) != float(x):
            raise ValueError(f"{what}: {x!r} is not exactly a float32 value; pass a float32 "
                             "tensor")
        return _numpy_spec(np.array(v, dtype=np.float32), what, None)
    if isinstance(x, (np.ndarray, np.generic)):
        return _numpy_spec(x, what, fmt)
    raise TypeError(f"{what}: expected a torch tensor or a NumPy array, got {type(x).__name__}")


def _ml_dtype(name):
    try:
        import ml_dtypes  # optional
    except ImportError:
        return None
    return {"e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2,
            "bf16": ml_dtypes.bfloat16}[name]


def numpy_result(codes, name):
    """An integer array of `name` codes as the NumPy user gets it: float32 / float16 arrays, and
    ml_dtypes arrays for bfloat16 and FP8 when ml_dtypes is installed (integer codes otherwise)."""
    if name == "fp32":
        return codes.view(np.float32)
    if name == "fp16":
        return codes.view(np.float16)
    ml = _ml_dtype(name)
    return codes.view(ml) if ml is not None else codes


def torch_dtype(name):
    torch = torch_module()
    return {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2, "fp16": torch.float16,
            "bf16": torch.bfloat16, "fp32": torch.float32}[name]


def torch_result(codes, name, device):
    """An integer array of `name` codes as a torch tensor of that dtype on `device` (the CPU
    tensor shares the array's memory)."""
    torch = torch_module()
    width = codes.dtype.itemsize
    signed = {1: np.uint8, 2: np.int16, 4: np.int32}[width]
    t = torch.from_numpy(codes.view(signed)).view(torch_dtype(name))
    if device is not None and getattr(device, "type", "cpu") != "cpu":
        t = t.to(device)
    return t


def result(codes, name, kind, device):
    if kind == "torch":
        return torch_result(codes, name, device)
    return numpy_result(codes, name)


def int_view(x):
    """The integer view of a tensor or array with the same element size, without a copy."""
    if is_torch_tensor(x):
        torch = torch_module()
        width = x.element_size()
        if x.dtype == torch.bool:
            return x.view(torch.uint8)
        return x.view({1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[width])
    a = np.asarray(x)
    width = a.dtype.itemsize
    return a.view({1: np.uint8, 2: np.int16, 4: np.int32, 8: np.int64}[width])


def copy_into(out, res, kind):
    """Writes the result into the caller's out= (bits, not values) and returns out."""
    if kind == "torch":
        if tuple(out.shape) != tuple(res.shape):
            out.resize_(res.shape)
        int_view(out).copy_(int_view(res).to(out.device))
        return out
    if out.shape != res.shape:
        raise ValueError(f"out: a NumPy array of shape {out.shape} cannot be resized to "
                         f"{res.shape}")
    int_view(out)[...] = int_view(res)
    return out
