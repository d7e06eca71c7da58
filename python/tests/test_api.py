# SPDX-License-Identifier: BSD-2-Clause
"""The seed's API on NumPy inputs. Expected bits are derived by hand in each test (FP8 and
binary32 encodings written out), never taken from the code under test."""

import threading
import warnings

import numpy as np
import pytest

import mmaemu

E4M3_ONE = 0x38  # 0.0111.000: 2^0
E4M3_TWO = 0x40
ONE = np.float32(1.0)


def ones(M, K, code=E4M3_ONE):
    return np.full((M, K), code, dtype=np.uint8)


def col_major(b_rows):
    """mat2 [K, N] column-major: the transposed view of row-major [N, K] rows."""
    return b_rows.T


def test_scaled_mm_fp32_bits_of_a_sum_of_ones():
    # 32 products 1 * 1: exactly 32.0 = 0x42000000.
    r = mmaemu.scaled_mm(ones(16, 32), col_major(ones(16, 32)), ONE, ONE, out_dtype="float32",
                         splitk=1, fmt="e4m3")
    assert r.dtype == np.float32 and r.shape == (16, 16)
    assert (mmaemu.testing.bits(r) == 0x42000000).all()


def test_scaled_mm_default_dtype_is_the_input_dtype_and_scales_apply():
    # 32 * 2 (scale_a) * 0.5 (scale_b) = 32 -> e4m3 0.1100.000 = 0x60 (uint8 codes without
    # ml_dtypes, or float8 with it).
    r = mmaemu.scaled_mm(ones(16, 32), col_major(ones(16, 32)), np.float32(2), np.float32(0.5),
                         splitk=1, fmt="e4m3")
    assert (mmaemu.testing.bits(r) == 0x60).all()


def test_scaled_mm_bf16_and_fp16_outputs():
    a, b = ones(16, 32, E4M3_TWO), col_major(ones(16, 32))  # 32 * 2 = 64
    bf = mmaemu.scaled_mm(a, b, ONE, ONE, out_dtype="bfloat16", splitk=1, fmt="e4m3")
    assert (mmaemu.testing.bits(bf) == 0x4280).all()  # bf16 64: exp 127+6
    hf = mmaemu.scaled_mm(a, b, ONE, ONE, out_dtype=np.float16, splitk=1, fmt="e4m3")
    assert hf.dtype == np.float16 and (mmaemu.testing.bits(hf) == 0x5400).all()


def test_out_receives_the_result():
    out = np.full((16, 16), np.nan, dtype=np.float32)
    r = mmaemu.scaled_mm(ones(16, 32), col_major(ones(16, 32)), ONE, ONE, out_dtype="float32",
                         out=out, splitk=1, fmt="e4m3")
    assert r is out and (mmaemu.testing.bits(out) == 0x42000000).all()


def test_strided_and_offset_inputs():
    # input: a padded row-major view at an offset; mat2: a padded column-major view.
    big = np.zeros((20, 48), dtype=np.uint8)
    big[2:18, 8:40] = E4M3_ONE
    a = big[2:18, 8:40]                     # strides (48, 1), offset 2*48+8
    wide = np.zeros((16, 40), dtype=np.uint8)
    wide[:, 4:36] = E4M3_ONE
    b = wide[:, 4:36].T                     # [32, 16], strides (1, 40)
    assert a.strides == (48, 1) and b.strides == (1, 40)
    r = mmaemu.scaled_mm(a, b, ONE, ONE, out_dtype="float32", splitk=1, fmt="e4m3")
    assert (mmaemu.testing.bits(r) == 0x42000000).all()


def test_read_only_operands_are_read_in_place():
    # The core borrows the operands' memory and never writes it: read-only arrays work and
    # keep their bits.
    a, b = ones(16, 32, E4M3_TWO), col_major(ones(16, 32))
    a.flags.writeable = False
    b.flags.writeable = False
    before = (a.copy(), b.copy())
    r = mmaemu.scaled_mm(a, b, ONE, ONE, out_dtype="float32", splitk=1, fmt="e4m3")
    assert (mmaemu.testing.bits(r) == 0x42800000).all()  # 32 * 2 = 64
    assert (a == before[0]).all() and (b == before[1]).all()


def test_layouts_torch_rejects_are_rejected():
    with pytest.raises(mmaemu.ReferenceRejectsError, match="row-major and column-major"):
        mmaemu.scaled_mm(ones(16, 32), ones(32, 16), ONE, ONE, splitk=1, fmt="e4m3")


def test_error_classes_and_their_bases():
    assert issubclass(mmaemu.ReferenceRejectsError, (mmaemu.MmaemuError, RuntimeError))
    assert issubclass(mmaemu.ReferenceRejectsError, RuntimeError)
    assert issubclass(mmaemu.UnsupportedFeatureError, mmaemu.MmaemuError)
    assert issubclass(mmaemu.UnsupportedFeatureError, NotImplementedError)
    assert issubclass(mmaemu.SplitKUnknownError, mmaemu.MmaemuError)
    assert issubclass(mmaemu.SplitKUnknownError, LookupError)
    assert issubclass(mmaemu.BackendUnavailableError, mmaemu.MmaemuError)
    assert issubclass(mmaemu.BackendUnavailableError, RuntimeError)
    assert issubclass(mmaemu.MmaemuError, Exception)
    a, b = ones(16, 32), col_major(ones(16, 32))
    bias = np.zeros(16, dtype=np.float16)
    with pytest.raises(mmaemu.UnsupportedFeatureError, match="bias"):
        mmaemu.scaled_mm(a, b, ONE, ONE, bias=bias, out_dtype="float16", splitk=1, fmt="e4m3")
    with pytest.raises(mmaemu.ReferenceRejectsError, match="Float8_e5m2"):
        mmaemu.scaled_mm(a, b, ONE, ONE, splitk=1, fmt="e5m2")
    with pytest.raises(mmaemu.SplitKUnknownError):
        mmaemu.scaled_mm(a, b, ONE, ONE, fmt="e4m3")  # the shipped tables are empty
    with pytest.raises(mmaemu.BackendUnavailableError):
        mmaemu.scaled_mm(a, b, ONE, ONE, splitk=1, backend="cuda", fmt="e4m3")
    with pytest.raises(ValueError, match="splitk"):
        mmaemu.scaled_mm(a, b, ONE, ONE, splitk="3", fmt="e4m3")
    with pytest.raises(ValueError):  # a scheme of another preset
        mmaemu.scaled_mm(a, b, ONE, ONE, splitk=(2, "serial"), fmt="e4m3")
    with pytest.raises(ValueError, match="fmt"):
        mmaemu.scaled_mm(a, b, ONE, ONE, splitk=1)  # uint8 codes without a format


def test_splits_and_resolve_splitk():
    a, b = ones(16, 256), col_major(ones(16, 256))
    for split in [(2, "contiguous"), mmaemu.SplitK(4, "contiguous")]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            r = mmaemu.scaled_mm(a, b, ONE, ONE, out_dtype="float32", splitk=split, fmt="e4m3")
        assert all(issubclass(w.category, mmaemu.UnverifiedSplitWarning) for w in caught)
        assert (mmaemu.testing.bits(r) == 0x43800000).all()  # 256.0
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        d = mmaemu.resolve_splitk(16, 16, 256, a_dtype="e4m3", b_dtype="e4m3",
                                  out_dtype="bfloat16", use_fast_accum=True, profile="ada",
                                  splitk=(2, "serial"), dry=True)
    assert isinstance(d, mmaemu.SplitDecision)
    assert (d.S, d.scheme, d.source) == (2, "serial", "explicit")
    with pytest.raises(mmaemu.SplitKUnknownError):
        mmaemu.resolve_splitk(16, 16, 256, a_dtype="e4m3", b_dtype="e4m3", out_dtype="bf16",
                              use_fast_accum=True)


def test_accumulate_has_no_scales_and_takes_rows():
    a = ones(3, 20)     # any K, any M
    b = ones(5, 20, E4M3_TWO)
    acc = mmaemu.accumulate(a, b, use_fast_accum=False, splitk=1, fmt="e4m3")
    assert acc.dtype == np.float32 and acc.shape == (3, 5)
    assert (mmaemu.testing.bits(acc) == 0x42200000).all()  # 40.0
    with pytest.raises(TypeError):
        mmaemu.accumulate(a, b, splitk=1, fmt="e4m3")  # use_fast_accum has no default


def test_explain_never_raises():
    a, b = ones(16, 32), col_major(ones(16, 32))
    plan = mmaemu.explain(a, b, ONE, ONE, splitk=1, fmt="e4m3")
    assert isinstance(plan, mmaemu.CallPlan)
    assert plan.validation == "ok" and plan.profile == "hopper" and plan.preset == "hopper"
    assert plan.preset_maturity == "validated" and plan.backend == "reference"
    assert plan.split.S == 1 and plan.split.source == "explicit"
    bad = mmaemu.explain(a, b, ONE, ONE, splitk=(2, "serial"), fmt="e4m3")
    assert bad.validation[0] == "ValueError"
    rej = mmaemu.explain(a, b, ONE, ONE, splitk=1, fmt="e5m2")
    assert rej.validation[0] == "ReferenceRejectsError"
    assert isinstance(plan.fallbacks, tuple) and isinstance(plan.warnings, tuple)


def test_presets_and_profiles():
    assert mmaemu.list_presets() == ["ada", "hopper", "b200_mma_sync", "volta_fp16",
                                     "ampere_fp16", "ampere_bf16", "ampere_tf32", "ada_fp16",
                                     "ada_bf16", "ada_tf32", "hopper_fp16", "hopper_bf16",
                                     "hopper_tf32"]
    ada = mmaemu.get_preset("ada")
    assert (ada.nfma, ada.maturity, ada.inputs, ada.half_out) == (16, "validated", "fp8", "none")
    h = mmaemu.get_preset("hopper_fp16")
    assert (h.nfma, h.frac, h.frac_out, h.inputs, h.half_out) == (16, 25, 23, "fp16",
                                                                  "sum_to_nearest")
    custom = mmaemu.Preset(name="mine", nfma=16, frac=13, frac_out=13)
    assert custom.maturity == "custom"
    with pytest.raises(ValueError):
        mmaemu.Preset(name="bad", nfma=0)
    for name in ("sm_120", "rtx_blackwell", "nope"):
        with pytest.raises(ValueError):
            mmaemu.get_preset(name)
    assert "hopper" in mmaemu.list_profiles() and "ada" in mmaemu.list_profiles()
    p = mmaemu.get_profile()
    assert isinstance(p, mmaemu.Profile) and p.name == "hopper" and p.preset == "hopper"
    assert mmaemu.get_profile(p) is p
    assert mmaemu.get_profile("ada").capability == "8.9"
    assert p.matches_device() is False  # no CUDA here (MMAEMU_DISABLE_CUDA=1 under ctest)
    with pytest.raises(ValueError):
        mmaemu.get_profile("no-such-profile")
    # A hand-built profile is refused by the calls, never replaced by the shipped one.
    import dataclasses
    mine = dataclasses.replace(p, sm_count=p.sm_count + 1)
    a = np.full((16, 32), E4M3_ONE, dtype=np.uint8)
    with pytest.raises(mmaemu.UnsupportedFeatureError, match="hand-built"):
        mmaemu.accumulate(a, a, use_fast_accum=True, profile=mine, splitk=1, fmt="e4m3")
    assert mmaemu.accumulate(a, a, use_fast_accum=True, profile=p, splitk=1,
                             fmt="e4m3").shape == (16, 16)
    plan = mmaemu.explain(a, a.T, ONE, ONE, profile=mine, fmt="e4m3")
    assert plan.validation[0] == "UnsupportedFeatureError"


def test_experimental_preset_warning_category_and_as_error():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mmaemu.get_preset("blackwell")  # the alias warns every time
    assert [w.category for w in caught] == [mmaemu.ExperimentalPresetWarning]
    assert issubclass(mmaemu.ExperimentalPresetWarning, UserWarning)
    assert issubclass(mmaemu.UnvalidatedEnvelopeWarning, mmaemu.UnverifiedSplitWarning)
    assert issubclass(mmaemu.UnverifiedSplitWarning, UserWarning)
    assert issubclass(mmaemu.BackendFallbackWarning, RuntimeWarning)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(mmaemu.ExperimentalPresetWarning):
            mmaemu.get_preset("blackwell")


def test_experimental_profile_warns_on_a_call():
    a, b = ones(16, 32), col_major(ones(16, 32))
    mmaemu._core.reset_warnings_once()  # "once per process": start from a fresh count
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mmaemu.scaled_mm(a, b, ONE, ONE, out_dtype="float32", splitk=1, fmt="e4m3",
                         profile="b200-mma-sync-experimental", use_fast_accum=True)
    assert mmaemu.ExperimentalPresetWarning in [w.category for w in caught]


def test_backends_status_and_selftest_without_a_device():
    st = mmaemu.backends_status()
    assert st["reference"].available and st["reference"].validated_here
    cuda = [s for n, s in st.items() if n.startswith("cuda:")]
    assert cuda and all(not s.available and s.reason for s in cuda)
    res = mmaemu.selftest()
    assert set(res) >= {"v1", "v4", "h1", "h4"} and all(v == [] for v in res.values())
    assert set(mmaemu.selftest(kernels=["v1"])) == {"v1"}
    with pytest.raises(ValueError):
        mmaemu.selftest(kernels="nope")


def test_calls_from_several_threads():
    a, b = ones(64, 512), col_major(ones(64, 512, E4M3_TWO))
    results, errors = [], []

    def work():
        try:
            for _ in range(3):
                results.append(mmaemu.scaled_mm(a, b, ONE, ONE, out_dtype="float32", splitk=1,
                                                fmt="e4m3"))
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(results) == 12
    for r in results:
        assert (mmaemu.testing.bits(r) == 0x44800000).all()  # 1024.0


def test_model_dot_forms():
    a = ones(3, 32)
    d = mmaemu.model.dot(a, a, fmt="e4m3", preset="hopper")
    assert d.shape == (3,) and (mmaemu.testing.bits(d) == 0x42000000).all()
    c = np.array([1.0, -32.0, 0.5], dtype=np.float32)
    d = mmaemu.model.dot(a, a, c, fmt="e4m3", preset="ada")
    assert list(mmaemu.testing.bits(d)) == [0x42040000, 0x00000000, 0x42020000]
    f64 = np.full((2, 4, 16), 0.5)  # float64 holding e4m3 values, batch dims kept
    d = mmaemu.model.dot(f64, f64, fmt="e4m3", preset=mmaemu.get_preset("ada"))
    assert d.shape == (2, 4) and (mmaemu.testing.bits(d) == 0x40800000).all()  # 4.0
    with pytest.raises(ValueError, match="not a e4m3 value"):
        mmaemu.model.dot(np.full((1, 16), 0.3), np.full((1, 16), 0.5), fmt="e4m3")
    with pytest.raises(ValueError):
        mmaemu.model.dot(ones(2, 16), ones(2, 32), fmt="e4m3")


def test_model_dot_16bit_and_tf32_forms():
    # 1 + 2^-10 (fp16 0x3C01) times 1, eight times, on Ampere (one block of 8): 8 + 2^-7 exactly.
    a = np.full((2, 8), 0x3C01, dtype=np.uint16)
    b = np.full((2, 8), 0x3C00, dtype=np.uint16)
    d = mmaemu.model.dot(a, b, fmt="fp16", preset="ampere_fp16")
    assert d.dtype == np.float32 and (d.view(np.uint32) == 0x41002000).all()
    # The same as float16 arrays (no fmt needed), and from a c of 1.0 in fp32.
    d = mmaemu.model.dot(a.view(np.float16), b.view(np.float16),
                         np.ones(2, dtype=np.float32), preset="ampere_fp16")
    assert (d.view(np.uint32) == 0x41102000).all()  # 9 + 2^-7
    # With an fp16 accumulator: 8 + 2^-7 rounds to nearest fp16 (ulp 2^-7 at 8): 0x4801.
    h = mmaemu.model.dot(a, b, np.zeros(2, dtype=np.float16), fmt="fp16",
                         preset="ampere_fp16", acc="fp16")
    assert h.dtype == np.float16 and (h.view(np.uint16) == 0x4801).all()
    # bf16 values as float64, tf32 values as float32: 1.5 * 2 + 0.25 * 4 = 4.
    v = np.array([[1.5, 0.25]])
    w = np.array([[2.0, 4.0]])
    assert mmaemu.model.dot(v, w, fmt="bf16", preset="ada_bf16").view(np.uint32)[0] == 0x40800000
    t = mmaemu.model.dot(v.astype(np.float32), w.astype(np.float32), fmt="tf32",
                         preset="hopper_tf32")
    assert t.view(np.uint32)[0] == 0x40800000
    with pytest.raises(ValueError, match="not a tf32 value"):
        mmaemu.model.dot(np.array([[1.0 + 2.0**-12]], dtype=np.float32),
                         np.ones((1, 1), dtype=np.float32), fmt="tf32", preset="ada_tf32")
    with pytest.raises(ValueError, match="takes bf16 x bf16"):
        mmaemu.model.dot(a, b, fmt="fp16", preset="ada_bf16")
    with pytest.raises(ValueError, match="takes e4m3 or e5m2"):
        mmaemu.model.dot(a, b, fmt="fp16", preset="ada")
    with pytest.raises(ValueError, match="acc"):
        mmaemu.model.dot(ones(2, 16), ones(2, 16), fmt="e4m3", acc="fp16")


def test_testing_helpers():
    x = np.array([0.0, 1.0, np.nan], dtype=np.float32)
    b = mmaemu.testing.bits(x)
    assert b.dtype == np.int32 and np.shares_memory(b, x)
    mmaemu.testing.assert_bitwise_equal(x, x.copy())
    y = np.array([-0.0, 2.0, np.nan], dtype=np.float32)
    with pytest.raises(AssertionError, match="zero_sign 1, .*value 1"):
        mmaemu.testing.assert_bitwise_equal(y, x)
    payload = x.copy()
    mmaemu.testing.bits(payload)[2] = 0x7FC00001
    with pytest.raises(AssertionError, match="nan_payload 1"):
        mmaemu.testing.assert_bitwise_equal(payload, x)
    mmaemu.testing.assert_bitwise_equal(payload, x, nan="mask")
    with pytest.raises(AssertionError, match="dtype"):
        mmaemu.testing.assert_bitwise_equal(x, x.astype(np.float64))
    with pytest.raises(AssertionError, match="shape"):
        mmaemu.testing.assert_bitwise_equal(x, x[:2])
    with pytest.raises(AssertionError, match="^ctx: "):
        mmaemu.testing.assert_bitwise_equal(y, x, msg="ctx")


def test_explain_lists_the_decisions_a_call_relies_on_with_their_status():
    a, b = ones(16, 256), col_major(ones(16, 256))
    plan = mmaemu.explain(a, b, ONE, ONE, out_dtype="bfloat16", use_fast_accum=False,
                          profile="h100-sxm", splitk=(2, "contiguous"), fmt="e4m3")
    assert plan.ok
    ids = {e.id: e for e in plan.evidence}
    assert isinstance(plan.evidence[0], mmaemu.DecisionEvidence)
    # The GEMM level of the measured platform, slow accumulation, a split: the measured ones.
    for d in ("plan.split_layout", "plan.slow_chunks", "plan.promotion", "plan.reduction",
              "plan.alpha_before_reduction", "epilogue.scale"):
        assert ids[d].status == "consistent", d
        assert ids[d].sources == ("bitequiv-h100-cublaslt-13.1.1",), d
    assert ids["epilogue.convert"].status == "unverified"
    assert "plan.fast_chain" not in ids  # slow accumulation
    assert "epilogue.scale_result" not in ids  # no scale_result
    gemm = [s for s in plan.evidence_summary if s.startswith("GEMM level:")]
    assert gemm == ["GEMM level: 6 consistent with bitequiv (H100, cuBLASLt 13.1.1), "
                    "2 unverified"]
    # E5M2 subnormal decoding is unverified (its mutant survives the replay of the recordings).
    mixed = mmaemu.explain(a, col_major(ones(16, 256)), ONE, ONE, out_dtype="bfloat16",
                           splitk=1, fmt=("e4m3", "e5m2"))
    sub = [e for e in mixed.evidence if e.id == "model.e5m2_subnormal_decoding"]
    assert sub and sub[0].status == "unverified"
    # Fast accumulation was not measured: nothing is consistent with the measurement there.
    fast = mmaemu.explain(a, b, ONE, ONE, out_dtype="bfloat16", use_fast_accum=True,
                          profile="h100-sxm", splitk=(2, "contiguous"), fmt="e4m3")
    assert all(e.status == "unverified" for e in fast.evidence if e.level == "GEMM")
