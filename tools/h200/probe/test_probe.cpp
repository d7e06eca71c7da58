// SPDX-License-Identifier: BSD-2-Clause
// The split-K probe without a GPU: the dlopen failure path, the descriptor it builds and the
// answers it reads (through a stub function table, no real library), the query parser, and the
// mapping of answers into split-K table entries.

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

namespace lt = kernels::cublaslt;

struct Layout {
  int type;
  std::uint64_t rows, cols;
  std::int64_t ld;
};

struct Stub {
  std::map<int, std::vector<unsigned char>> desc_attrs; // attribute -> bytes set
  std::vector<Layout> layouts;                          // in creation order
  std::uint64_t workspace = 0;
  int requested = 0;
  int compute = -1;
  int scale_type = -1;
  lt::Status heuristic_status = lt::kStatusSuccess;
  int returned = 1;
  std::map<int, std::uint64_t> config; // algo config attribute -> value
  std::size_t config_bytes = 4;        // bytes each config attribute writes
  int live_objects = 0;                // created minus destroyed
};
Stub* g = nullptr;

// Opaque handles: any distinct non-null addresses.
char desc_obj, pref_obj, layout_objs[8];

lt::Status desc_create(lt::MatmulDesc* d, int c, int s) {
  g->compute = c;
  g->scale_type = s;
  ++g->live_objects;
  *d = reinterpret_cast<lt::MatmulDesc>(&desc_obj);
  return lt::kStatusSuccess;
}
lt::Status desc_set(lt::MatmulDesc, int a, const void* buf, size_t n) {
  const auto* p = static_cast<const unsigned char*>(buf);
  g->desc_attrs[a] = std::vector<unsigned char>(p, p + n);
  return lt::kStatusSuccess;
}
lt::Status desc_destroy(lt::MatmulDesc) {
  --g->live_objects;
  return lt::kStatusSuccess;
}
lt::Status layout_create(lt::MatrixLayout* l, int t, uint64_t r, uint64_t c, int64_t ld) {
  *l = reinterpret_cast<lt::MatrixLayout>(&layout_objs[g->layouts.size() % 8]);
  g->layouts.push_back({t, r, c, ld});
  ++g->live_objects;
  return lt::kStatusSuccess;
}
lt::Status layout_destroy(lt::MatrixLayout) {
  --g->live_objects;
  return lt::kStatusSuccess;
}
lt::Status pref_create(lt::Preference* p) {
  ++g->live_objects;
  *p = reinterpret_cast<lt::Preference>(&pref_obj);
  return lt::kStatusSuccess;
}
lt::Status pref_set(lt::Preference, int a, const void* buf, size_t n) {
  if (a == lt::kPrefMaxWorkspaceBytes && n == sizeof(std::uint64_t))
    std::memcpy(&g->workspace, buf, n);
  return lt::kStatusSuccess;
}
lt::Status pref_destroy(lt::Preference) {
  --g->live_objects;
  return lt::kStatusSuccess;
}
lt::Status heuristic(lt::Handle, lt::MatmulDesc, lt::MatrixLayout, lt::MatrixLayout,
                     lt::MatrixLayout, lt::MatrixLayout, lt::Preference, int requested,
                     lt::HeuristicResult* results, int* returned) {
  g->requested = requested;
  if (g->heuristic_status != lt::kStatusSuccess)
    return g->heuristic_status;
  results[0] = lt::HeuristicResult{};
  results[0].waves_count = 0.5f;
  *returned = g->returned;
  return lt::kStatusSuccess;
}
lt::Status config_get(const lt::Algo*, int a, void* buf, size_t n, size_t* written) {
  const std::uint64_t v = g->config.count(a) ? g->config[a] : 0;
  const std::size_t k = std::min(n, g->config_bytes);
  std::memset(buf, 0xAB, n); // bytes beyond what is written are garbage
  std::memcpy(buf, &v, k);
  *written = k;
  return lt::kStatusSuccess;
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
    stub.config = {{lt::kConfigId, 66},
                   {lt::kConfigSplitkNum, 4},
                   {lt::kConfigReductionScheme, lt::kReductionComputeType},
                   {lt::kConfigTileId, 21},
                   {lt::kConfigStagesId, 9}};
  }
  void TearDown() override { g = nullptr; }
  template <class T> T desc_value(int a) {
    const auto& bytes = stub.desc_attrs.at(a);
    EXPECT_EQ(bytes.size(), sizeof(T));
    T v{};
    std::memcpy(&v, bytes.data(), sizeof(T));
    return v;
  }
  Stub stub;
  LtApi api = stub_api();
  LtHandle handle = reinterpret_cast<LtHandle>(&desc_obj);
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
  EXPECT_EQ(stub.compute, lt::kCompute32F);
  EXPECT_EQ(stub.scale_type, lt::kTypeR32F);
  EXPECT_EQ(desc_value<int>(lt::kDescTransA), lt::kOpT);
  EXPECT_EQ(desc_value<int>(lt::kDescTransB), lt::kOpN);
  EXPECT_EQ(desc_value<std::int8_t>(lt::kDescFastAccum), 1);
  EXPECT_EQ(stub.desc_attrs.count(lt::kDescAScalePointer), 1u);
  EXPECT_EQ(stub.desc_attrs.count(lt::kDescBScalePointer), 1u);
  EXPECT_EQ(stub.desc_attrs.count(lt::kDescDScalePointer), 0u);
  // A = mat2 (e5m2, stored K x N, ld K), B = mat1 (e4m3, K x M, ld K), C and D N x M.
  ASSERT_EQ(stub.layouts.size(), 4u);
  EXPECT_EQ(stub.layouts[0].type, lt::kTypeR8FE5M2);
  EXPECT_EQ(stub.layouts[0].rows, 4096u);
  EXPECT_EQ(stub.layouts[0].cols, 48u);
  EXPECT_EQ(stub.layouts[0].ld, 4096);
  EXPECT_EQ(stub.layouts[1].type, lt::kTypeR8FE4M3);
  EXPECT_EQ(stub.layouts[1].rows, 4096u);
  EXPECT_EQ(stub.layouts[1].cols, 16u);
  EXPECT_EQ(stub.layouts[2].type, lt::kTypeR16BF);
  EXPECT_EQ(stub.layouts[2].rows, 48u);
  EXPECT_EQ(stub.layouts[2].cols, 16u);
  EXPECT_EQ(stub.layouts[2].ld, 48);
  EXPECT_EQ(stub.layouts[3].type, lt::kTypeR16BF);
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
  EXPECT_EQ(desc_value<std::int8_t>(lt::kDescFastAccum), 0);
  EXPECT_EQ(stub.desc_attrs.count(lt::kDescDScalePointer), 1u);
  ASSERT_EQ(stub.layouts.size(), 4u);
  EXPECT_EQ(stub.layouts[2].type, lt::kTypeR16F);
  EXPECT_EQ(stub.layouts[3].type, lt::kTypeR8FE4M3);
}

TEST_F(StubProbe, EightByteAttributesAreReadWhole) {
  stub.config_bytes = 8;
  stub.config[lt::kConfigSplitkNum] = 16;
  const ProbeAnswer r = probe_one(api, handle, query(16, 16, 16384, "fp32", false));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.splitk_num, 16);
}

TEST_F(StubProbe, HeuristicFailureNamesTheStep) {
  stub.heuristic_status = 15; // CUBLAS_STATUS_NOT_SUPPORTED
  const ProbeAnswer r = probe_one(api, handle, query(16, 16, 16, "bf16", false));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("cublasLtMatmulAlgoGetHeuristic"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("15"), std::string::npos) << r.error;
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
  const MappedSplit fp16 = table_entry_from_probe(fields(4, "output_type", "fp16"));
  EXPECT_FALSE(fp16.entry);
  EXPECT_NE(fp16.why.find("output_type"), std::string::npos) << fp16.why;
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

// The live-query step of resolve_splitk with nothing installed (the emulator library alone; the
// mmaemu command and the Python module install kernels::install_splitk_live_query, tested in
// kernels/tests/test_splitk_live_query.cpp): the step is skipped as before.
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
