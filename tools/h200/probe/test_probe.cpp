// SPDX-License-Identifier: BSD-2-Clause
// The split-K probe without a GPU: the dlopen failure path, the descriptor it builds and the
// answers it reads (through a stub function table, no real library), the query parser, and the
// mapping of answers into split-K table entries and live-query decisions.

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/emulator/profile.hpp"
#include "mmaemu/emulator/splitk.hpp"
#include "probe_map.hpp"
#include "splitk_probe.hpp"

namespace mmaemu::h200 {
namespace {

// ---- a stub cuBLASLt: records what the probe sets, answers what the test says ----------------

struct Layout {
  cudaDataType type;
  std::uint64_t rows, cols;
  std::int64_t ld;
};

struct Stub {
  std::map<int, std::vector<unsigned char>> desc_attrs; // attribute -> bytes set
  std::vector<Layout> layouts;                          // in creation order
  std::uint64_t workspace = 0;
  int requested = 0;
  cublasComputeType_t compute{};
  cudaDataType_t scale_type{};
  cublasStatus_t heuristic_status = CUBLAS_STATUS_SUCCESS;
  int returned = 1;
  std::map<int, std::uint64_t> config; // algo config attribute -> value
  std::size_t config_bytes = 4;        // bytes each config attribute writes
  int live_objects = 0;                // created minus destroyed
};
Stub* g = nullptr;

// Opaque handles: any distinct non-null addresses.
char desc_obj, pref_obj, layout_objs[8];

cublasStatus_t desc_create(cublasLtMatmulDesc_t* d, cublasComputeType_t c, cudaDataType_t s) {
  g->compute = c;
  g->scale_type = s;
  ++g->live_objects;
  *d = reinterpret_cast<cublasLtMatmulDesc_t>(&desc_obj);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t desc_set(cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t a, const void* buf,
                        size_t n) {
  const auto* p = static_cast<const unsigned char*>(buf);
  g->desc_attrs[static_cast<int>(a)] = std::vector<unsigned char>(p, p + n);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t desc_destroy(cublasLtMatmulDesc_t) {
  --g->live_objects;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t layout_create(cublasLtMatrixLayout_t* l, cudaDataType t, uint64_t r, uint64_t c,
                             int64_t ld) {
  *l = reinterpret_cast<cublasLtMatrixLayout_t>(&layout_objs[g->layouts.size() % 8]);
  g->layouts.push_back({t, r, c, ld});
  ++g->live_objects;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t layout_destroy(cublasLtMatrixLayout_t) {
  --g->live_objects;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t pref_create(cublasLtMatmulPreference_t* p) {
  ++g->live_objects;
  *p = reinterpret_cast<cublasLtMatmulPreference_t>(&pref_obj);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t pref_set(cublasLtMatmulPreference_t, cublasLtMatmulPreferenceAttributes_t a,
                        const void* buf, size_t n) {
  if (a == CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES && n == sizeof(std::uint64_t))
    std::memcpy(&g->workspace, buf, n);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t pref_destroy(cublasLtMatmulPreference_t) {
  --g->live_objects;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t heuristic(cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t,
                         cublasLtMatrixLayout_t, cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                         cublasLtMatmulPreference_t, int requested,
                         cublasLtMatmulHeuristicResult_t* results, int* returned) {
  g->requested = requested;
  if (g->heuristic_status != CUBLAS_STATUS_SUCCESS)
    return g->heuristic_status;
  results[0] = cublasLtMatmulHeuristicResult_t{};
  results[0].wavesCount = 0.5f;
  *returned = g->returned;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t config_get(const cublasLtMatmulAlgo_t*, cublasLtMatmulAlgoConfigAttributes_t a,
                          void* buf, size_t n, size_t* written) {
  const std::uint64_t v = g->config.count(a) ? g->config[a] : 0;
  const std::size_t k = std::min(n, g->config_bytes);
  std::memset(buf, 0xAB, n); // bytes beyond what is written are garbage
  std::memcpy(buf, &v, k);
  *written = k;
  return CUBLAS_STATUS_SUCCESS;
}

LtApi stub_api() {
  LtApi api;
  api.desc_create = desc_create;
  api.desc_set = desc_set;
  api.desc_destroy = desc_destroy;
  api.layout_create = layout_create;
  api.layout_destroy = layout_destroy;
  api.pref_create = pref_create;
  api.pref_set = pref_set;
  api.pref_destroy = pref_destroy;
  api.heuristic = heuristic;
  api.algo_config_get = config_get;
  return api;
}

class StubProbe : public ::testing::Test {
protected:
  void SetUp() override {
    g = &stub;
    stub.config = {{CUBLASLT_ALGO_CONFIG_ID, 66},
                   {CUBLASLT_ALGO_CONFIG_SPLITK_NUM, 4},
                   {CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE},
                   {CUBLASLT_ALGO_CONFIG_TILE_ID, 21},
                   {CUBLASLT_ALGO_CONFIG_STAGES_ID, 9}};
  }
  void TearDown() override { g = nullptr; }
  template <class T> T desc_value(cublasLtMatmulDescAttributes_t a) {
    const auto& bytes = stub.desc_attrs.at(static_cast<int>(a));
    EXPECT_EQ(bytes.size(), sizeof(T));
    T v{};
    std::memcpy(&v, bytes.data(), sizeof(T));
    return v;
  }
  Stub stub;
  LtApi api = stub_api();
  cublasLtHandle_t handle = reinterpret_cast<cublasLtHandle_t>(&desc_obj);
};

ProbeQuery query(std::int64_t M, std::int64_t N, std::int64_t K, const char* out, bool fast,
                 bool sr = false) {
  ProbeQuery q;
  q.M = M;
  q.N = N;
  q.K = K;
  q.a = "e4m3";
  q.b = "e5m2";
  q.out = out;
  q.fast = fast;
  q.scale_result = sr;
  q.workspace = 33554432;
  return q;
}

TEST_F(StubProbe, DescriptorIsTorchsScaledGemm) {
  const ProbeAnswer r = probe_one(api, handle, query(16, 48, 4096, "bf16", true));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(stub.compute, CUBLAS_COMPUTE_32F);
  EXPECT_EQ(stub.scale_type, CUDA_R_32F);
  EXPECT_EQ(desc_value<cublasOperation_t>(CUBLASLT_MATMUL_DESC_TRANSA), CUBLAS_OP_T);
  EXPECT_EQ(desc_value<cublasOperation_t>(CUBLASLT_MATMUL_DESC_TRANSB), CUBLAS_OP_N);
  EXPECT_EQ(desc_value<std::int8_t>(CUBLASLT_MATMUL_DESC_FAST_ACCUM), 1);
  EXPECT_EQ(stub.desc_attrs.count(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER), 1u);
  EXPECT_EQ(stub.desc_attrs.count(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER), 1u);
  EXPECT_EQ(stub.desc_attrs.count(CUBLASLT_MATMUL_DESC_D_SCALE_POINTER), 0u);
  // A = mat2 (e5m2, stored K x N, ld K), B = mat1 (e4m3, K x M, ld K), C and D N x M.
  ASSERT_EQ(stub.layouts.size(), 4u);
  EXPECT_EQ(stub.layouts[0].type, CUDA_R_8F_E5M2);
  EXPECT_EQ(stub.layouts[0].rows, 4096u);
  EXPECT_EQ(stub.layouts[0].cols, 48u);
  EXPECT_EQ(stub.layouts[0].ld, 4096);
  EXPECT_EQ(stub.layouts[1].type, CUDA_R_8F_E4M3);
  EXPECT_EQ(stub.layouts[1].rows, 4096u);
  EXPECT_EQ(stub.layouts[1].cols, 16u);
  EXPECT_EQ(stub.layouts[2].type, CUDA_R_16BF);
  EXPECT_EQ(stub.layouts[2].rows, 48u);
  EXPECT_EQ(stub.layouts[2].cols, 16u);
  EXPECT_EQ(stub.layouts[2].ld, 48);
  EXPECT_EQ(stub.layouts[3].type, CUDA_R_16BF);
  EXPECT_EQ(stub.workspace, 33554432u);
  EXPECT_EQ(stub.requested, 1);
  EXPECT_EQ(r.splitk_num, 4);
  EXPECT_EQ(reduction_scheme_name(r.reduction_scheme), "compute_type");
  EXPECT_EQ(r.tile_id, 21u);
  EXPECT_EQ(r.stages_id, 9u);
  EXPECT_EQ(r.algo_id, 66);
  EXPECT_EQ(stub.live_objects, 0) << "every descriptor is destroyed";
}

TEST_F(StubProbe, Fp8OutputHasHalfCAndScaleResultSetsDScale) {
  const ProbeAnswer r = probe_one(api, handle, query(32, 32, 64, "e4m3", false, true));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(desc_value<std::int8_t>(CUBLASLT_MATMUL_DESC_FAST_ACCUM), 0);
  EXPECT_EQ(stub.desc_attrs.count(CUBLASLT_MATMUL_DESC_D_SCALE_POINTER), 1u);
  ASSERT_EQ(stub.layouts.size(), 4u);
  EXPECT_EQ(stub.layouts[2].type, CUDA_R_16F);
  EXPECT_EQ(stub.layouts[3].type, CUDA_R_8F_E4M3);
}

TEST_F(StubProbe, EightByteAttributesAreReadWhole) {
  stub.config_bytes = 8;
  stub.config[CUBLASLT_ALGO_CONFIG_SPLITK_NUM] = 16;
  const ProbeAnswer r = probe_one(api, handle, query(16, 16, 16384, "fp32", false));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.splitk_num, 16);
}

TEST_F(StubProbe, HeuristicFailureNamesTheStep) {
  stub.heuristic_status = CUBLAS_STATUS_NOT_SUPPORTED;
  const ProbeAnswer r = probe_one(api, handle, query(16, 16, 16, "bf16", false));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("cublasLtMatmulAlgoGetHeuristic"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find(std::to_string(static_cast<int>(CUBLAS_STATUS_NOT_SUPPORTED))),
            std::string::npos);
  EXPECT_EQ(stub.live_objects, 0);
}

TEST_F(StubProbe, NoAlgorithmReturnedIsAnError) {
  stub.returned = 0;
  const ProbeAnswer r = probe_one(api, handle, query(16, 16, 16, "bf16", false));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("no algorithm"), std::string::npos) << r.error;
}

TEST(SplitKProbeLoad, WithoutDriverNamesLibcuda) {
  if (void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD | RTLD_LOCAL);
      h || dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
    GTEST_SKIP() << "a CUDA driver is present: the failure path cannot be reached here";
  }
  LtApi api;
  const auto why = load_lt_api(api);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->what.find("libcuda.so.1"), std::string::npos) << why->what;
  EXPECT_EQ(api.heuristic, nullptr);
}

TEST(SplitKProbeQueries, ParsesLinesAndRefusesBadOnes) {
  const auto q = parse_queries("# M N K a b out fast sr\n16 32 64 e4m3 e5m2 fp32 1 0\n\n"
                               "1 5760 1920 e5m2 e4m3 e4m3 0 1  # decode\n",
                               123);
  ASSERT_EQ(q.size(), 2u);
  EXPECT_EQ(q[0].N, 32);
  EXPECT_EQ(q[0].b, "e5m2");
  EXPECT_TRUE(q[0].fast);
  EXPECT_FALSE(q[0].scale_result);
  EXPECT_EQ(q[0].workspace, 123u);
  EXPECT_TRUE(q[1].scale_result);
  EXPECT_THROW(parse_queries("16 32 64 e4m3 e5m2 fp64 1 0\n", 1), std::runtime_error);
  EXPECT_THROW(parse_queries("16 32 64 e4m3 e5m2 fp32 2 0\n", 1), std::runtime_error);
  EXPECT_THROW(parse_queries("16 32 64 e4m3 e5m2 fp32 1 0 extra\n", 1), std::runtime_error);
  EXPECT_THROW(parse_queries("x\n", 1), std::runtime_error);
}

// ---- mapping into mmaemu's vocabulary -------------------------------------------------------

ProbeFields fields(int S, const char* red, const char* out, bool ok = true) {
  ProbeFields p;
  p.M = 16;
  p.N = 64;
  p.K = 16384;
  p.a = "e4m3";
  p.b = "e4m3";
  p.out = out;
  p.fast = true;
  p.ok = ok;
  p.splitk_num = S;
  p.reduction_scheme = red;
  p.evidence = "stub";
  return p;
}

TEST(SplitKProbeMapping, UnsplitIsSOneSchemeNone) {
  for (int s : {0, 1}) {
    const MappedSplit m = table_entry_from_probe(fields(s, "none", "bf16"));
    ASSERT_TRUE(m.entry) << m.why;
    EXPECT_EQ(m.entry->S, 1);
    EXPECT_EQ(m.entry->scheme, "none");
    EXPECT_FALSE(m.entry->verified);
  }
}

TEST(SplitKProbeMapping, Fp32PartialsAreContiguous) {
  MappedSplit m = table_entry_from_probe(fields(4, "compute_type", "bf16"));
  ASSERT_TRUE(m.entry) << m.why;
  EXPECT_EQ(m.entry->S, 4);
  EXPECT_EQ(m.entry->scheme, "contiguous");
  EXPECT_EQ(m.entry->out, Format::bf16);
  EXPECT_FALSE(m.entry->verified);
  m = table_entry_from_probe(fields(3, "inplace", "fp32"));
  ASSERT_TRUE(m.entry) << m.why;
  EXPECT_EQ(m.entry->scheme, "contiguous");
}

TEST(SplitKProbeMapping, OutputTypePartialsAndFailuresHaveNoEntry) {
  EXPECT_FALSE(table_entry_from_probe(fields(4, "output_type", "bf16")).entry);
  EXPECT_FALSE(table_entry_from_probe(fields(4, "inplace", "e4m3")).entry);
  EXPECT_FALSE(table_entry_from_probe(fields(4, "compute_type", "bf16", false)).entry);
  ProbeFields sr = fields(1, "none", "bf16");
  sr.scale_result = true;
  EXPECT_FALSE(table_entry_from_probe(sr).entry);
  std::string why;
  EXPECT_FALSE(decision_from_probe(fields(4, "output_type", "fp16"), &why));
  EXPECT_NE(why.find("output_type"), std::string::npos) << why;
}

TEST(SplitKProbeMapping, LiveQueryDecisionIsUnverified) {
  const auto d = decision_from_probe(fields(2, "compute_type", "fp32"));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->source, "live-query");
  EXPECT_EQ(d->S, 2);
  EXPECT_EQ(d->scheme, "contiguous");
  EXPECT_FALSE(d->verified);
}

TEST(SplitKProbeMapping, EntryInTheH200TableDecidesAuto) {
  Profile p = get_profile("h200");
  const MappedSplit m = table_entry_from_probe(fields(4, "compute_type", "bf16"));
  ASSERT_TRUE(m.entry);
  p.splitk_table.entries.push_back(*m.entry);
  SplitKQuery q;
  q.M = 16;
  q.N = 64;
  q.K = 16384;
  q.a_dtype = Format::e4m3;
  q.b_dtype = Format::e4m3;
  q.out_dtype = Format::bf16;
  q.use_fast_accum = true;
  const SplitDecision d = resolve_splitk(q, p, SplitKRequest::automatic(), true, true);
  EXPECT_EQ(d.source, "table");
  EXPECT_EQ(d.S, 4);
  EXPECT_EQ(d.scheme, "contiguous");
}

// The live-query step of resolve_splitk with the probe's mapping behind it (a stub answer in
// place of cuBLASLt): installed, it decides; removed, the step is skipped as before.
class LiveQueryHook : public ::testing::Test {
protected:
  void TearDown() override { set_splitk_live_query(nullptr); }
  static SplitKQuery big_k() {
    SplitKQuery q;
    q.M = 16;
    q.N = 64;
    q.K = 16384;
    q.out_dtype = Format::bf16;
    q.use_fast_accum = true;
    return q;
  }
};

TEST_F(LiveQueryHook, InstalledProbeDecidesAndWarns) {
  set_splitk_live_query([](const SplitKQuery& q, const Profile&, std::string& why) {
    ProbeFields f = fields(4, "compute_type", "bf16");
    f.M = q.M;
    f.N = q.N;
    f.K = q.K;
    return decision_from_probe(f, &why);
  });
  const SplitDecision d =
      resolve_splitk(big_k(), get_profile("h200"), SplitKRequest::automatic(), true, true);
  EXPECT_EQ(d.source, "live-query");
  EXPECT_EQ(d.S, 4);
  EXPECT_EQ(d.scheme, "contiguous");
  EXPECT_FALSE(d.verified);
  ASSERT_EQ(d.warnings.size(), 1u);
  EXPECT_EQ(d.warnings[0].cls, WarningClass::unverified_split);
}

TEST_F(LiveQueryHook, UnmappableAnswerIsNamedInTheError) {
  set_splitk_live_query([](const SplitKQuery&, const Profile&, std::string& why) {
    return decision_from_probe(fields(4, "output_type", "bf16"), &why);
  });
  try {
    resolve_splitk(big_k(), get_profile("h200"), SplitKRequest::automatic(), true, true);
    FAIL() << "expected SplitKUnknownError";
  } catch (const SplitKUnknownError& e) {
    EXPECT_NE(std::string(e.what()).find("live-query: split-K 4 with reduction 'output_type'"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(LiveQueryHook, NoneInstalledSkipsTheStepAsBefore) {
  set_splitk_live_query(nullptr);
  try {
    resolve_splitk(big_k(), get_profile("h200"), SplitKRequest::automatic(), true, true);
    FAIL() << "expected SplitKUnknownError";
  } catch (const SplitKUnknownError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "live-query unavailable (no CUDA device with the profile's GPU NVIDIA H200)"),
              std::string::npos)
        << e.what();
  }
}

} // namespace
} // namespace mmaemu::h200
