// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/kernels/module_loader.hpp"

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include "kernel_module.hpp"
#include "mmaemu/kernels/cache_dir.hpp"
#include "mmaemu/kernels/fatbin_manifest.hpp"
#include "mmaemu/kernels/kernel_sources.hpp"
#include "mmaemu/kernels/nvrtc_api.hpp"
#include "mmaemu/support/atomic_write.hpp"
#include "mmaemu/support/digest.hpp"
#include "mmaemu/support/input_file.hpp"
#include "mmaemu/support/text.hpp"

namespace mmaemu::kernels {

using detail::module_of;

namespace {

namespace fs = std::filesystem;
using driver::check;

// A cached cubin larger than this is not read (a real one is well under 1 MiB).
constexpr std::uint64_t kMaxCubinBytes = 64u << 20;

struct Cache {
  std::mutex mu;
  std::map<std::tuple<int, unsigned long long, std::string>, std::unique_ptr<LoadedModule>> modules;
  std::map<std::string, std::string> cubins; // NVRTC key -> cubin, this process
};

Cache& cache() {
  static Cache* c = new Cache; // modules outlive static destructors
  return *c;
}

std::atomic<unsigned> g_grid_y_limit{0};

std::string shown(const fs::path& p) {
  return support::printable(p.string(), 256);
}

std::string arch_list(const FatbinEntry& e) {
  std::string s;
  for (int a : e.sass)
    s += (s.empty() ? "sm_" : ", sm_") + std::to_string(a);
  if (e.ptx)
    s += (s.empty() ? "" : ", ") + std::string("compute_") + std::to_string(*e.ptx);
  return s;
}

// A step of the ladder that did not give a module.
struct StepFailed {
  std::string reason;
};

// cuModuleLoadData + cuModuleGetFunction; the module is unloaded when the symbol is missing.
void load_image(const KernelSpec& spec, const std::string& image, LoadedModule& out) {
  const driver::Api& a = driver::api();
  driver::CUmodule mod = nullptr;
  check(a.cuModuleLoadData(&mod, image.data()), "cuModuleLoadData");
  driver::CUfunction fn = nullptr;
  const std::string symbol(spec.symbol);
  const driver::CUresult r = a.cuModuleGetFunction(&fn, mod, symbol.c_str());
  if (r != driver::kCudaSuccess) {
    a.cuModuleUnload(mod);
    check(r, ("cuModuleGetFunction(" + symbol + ")").c_str());
  }
  out.module = mod;
  out.function = fn;
  out.image_sha256 = support::sha256_hex(image);
  out.image_bytes = image.size();
}

void try_fatbin(const KernelSpec& spec, const driver::Device& device, LoadedModule& out) {
  if (forced_failure("fatbin"))
    throw StepFailed{"forced by MMAEMU_TEST_FORCE_FAIL=fatbin"};
  const fs::path dir = fatbin_dir();
  FatbinManifest m;
  try {
    m = read_manifest(dir / kManifestName);
  } catch (const ManifestError& e) {
    throw StepFailed{e.what()};
  }
  const std::string module = module_of(spec);
  const FatbinEntry* e = m.find(module);
  if (!e)
    throw StepFailed{"module " + module + " has no entry in " + shown(dir / kManifestName)};
  if (m.source_sha256 != sources_sha256()) {
    throw StepFailed{"stale fatbin: " + shown(dir / kManifestName) + " has source_sha256 " +
                     m.source_sha256 + ", the embedded kernel sources hash to " + sources_sha256()};
  }
  if (!can_run(*e, device.cc)) {
    throw StepFailed{"module " + module + " (" + arch_list(*e) + ") cannot run on sm_" +
                     std::to_string(device.cc)};
  }
  const fs::path file = dir / e->file;
  std::string image;
  try {
    image = support::read_input_file(file, kMaxFatbinBytes, "fatbin");
  } catch (const support::FileError& err) {
    throw StepFailed{err.what()};
  }
  const std::string got = support::sha256_hex(image);
  if (got != e->sha256) {
    throw StepFailed{shown(file) + " has sha256 " + got + ", the manifest says " + e->sha256};
  }
  try {
    load_image(spec, image, out);
  } catch (const driver::DriverError& err) {
    throw StepFailed{shown(file) + ": " + err.what()};
  }
  out.source = "fatbin";
  out.image_path = file.string();
}

// The cached cubin at `path` if it loads; otherwise false with `note` saying why.
bool try_cached_cubin(const KernelSpec& spec, const fs::path& path, LoadedModule& out,
                      std::string& note) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(path, ec)))
    return false;
  std::string image;
  try {
    image = support::read_input_file(path, kMaxCubinBytes, "cached cubin");
  } catch (const support::FileError& e) {
    note = std::string("recompiled: ") + e.what();
    return false;
  }
  if (image.empty()) {
    note = "recompiled: cached cubin " + shown(path) + " is empty";
    return false;
  }
  try {
    load_image(spec, image, out);
  } catch (const driver::DriverError& e) {
    note = "recompiled: cached cubin " + shown(path) + " failed to load (" + e.what() + ")";
    return false;
  }
  return true;
}

void try_nvrtc(const KernelSpec& spec, const driver::Device& device, LoadedModule& out) {
  if (forced_failure("nvrtc"))
    throw StepFailed{"forced by MMAEMU_TEST_FORCE_FAIL=nvrtc"};
  std::pair<int, int> version;
  try {
    version = nvrtc::nvrtc_version();
  } catch (const BackendUnavailableError& e) {
    throw StepFailed{e.what()};
  }
  const int arch = device.cc;
  const std::string key = nvrtc_cubin_key(spec, arch, version.first, version.second);
  out.source = "nvrtc";
  Cache& c = cache();

  // This process compiled it already (for another context, or the cache is unwritable).
  if (auto it = c.cubins.find(key); it != c.cubins.end()) {
    try {
      load_image(spec, it->second, out);
      out.nvrtc_cache = "memory hit";
      return;
    } catch (const driver::DriverError& e) {
      throw StepFailed{"NVRTC cubin for sm_" + std::to_string(arch) + ": " + e.what()};
    }
  }

  std::optional<fs::path> path;
  std::string note;
  try {
    path = cache_subdir("nvrtc") / (key + ".cubin");
  } catch (const std::exception& e) {
    note = std::string("in memory only: ") + e.what();
  }
  if (path) {
    std::string cached_note;
    if (try_cached_cubin(spec, *path, out, cached_note)) {
      out.nvrtc_cache = "disk hit";
      out.image_path = path->string();
      return;
    }
    note = cached_note;
  }

  nvrtc::CompileResult compiled;
  try {
    std::vector<nvrtc::Header> headers;
    for (const SourceFile& h : kernel_headers())
      headers.push_back({std::string(h.name), std::string(h.content)});
    compiled = nvrtc::compile(std::string(spec.source), std::string(kernel_source(spec.source)),
                              headers, arch);
  } catch (const MmaemuError& e) {
    throw StepFailed{e.what()};
  }
  c.cubins[key] = compiled.cubin;
  if (path) {
    try {
      support::write_file_atomic(*path, compiled.cubin, 0600);
      out.image_path = path->string();
      note = note.empty() ? "stored" : "stored; " + note;
    } catch (const std::exception& e) {
      note = std::string("in memory only: ") + e.what() + (note.empty() ? "" : "; " + note);
    }
  }
  out.nvrtc_cache = note;
  try {
    load_image(spec, compiled.cubin, out);
  } catch (const driver::DriverError& e) {
    throw StepFailed{"NVRTC cubin for sm_" + std::to_string(arch) + ": " + e.what()};
  }
}

// Device memory freed on every path.
class DeviceBuffer {
public:
  explicit DeviceBuffer(std::size_t bytes) {
    check(driver::api().cuMemAlloc(&ptr_, std::max<std::size_t>(bytes, 1)), "cuMemAlloc");
  }
  ~DeviceBuffer() {
    if (ptr_)
      driver::api().cuMemFree(ptr_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  driver::CUdeviceptr get() const { return ptr_; }

private:
  driver::CUdeviceptr ptr_ = 0;
};

// `rows` rows of `cols` bytes, `ld` apart on the host, into contiguous device memory.
void upload_rows(const DeviceBuffer& dst, const std::uint8_t* src, std::size_t rows,
                 std::size_t cols, std::size_t ld) {
  const std::size_t bytes = rows * cols;
  if (bytes == 0)
    return;
  if (ld == cols) {
    check(driver::api().cuMemcpyHtoD(dst.get(), src, bytes), "cuMemcpyHtoD");
    return;
  }
  std::vector<std::uint8_t> staged(bytes);
  for (std::size_t r = 0; r < rows; ++r)
    std::memcpy(staged.data() + r * cols, src + r * ld, cols);
  check(driver::api().cuMemcpyHtoD(dst.get(), staged.data(), bytes), "cuMemcpyHtoD");
}

void check_dim(std::int64_t v, const char* name) {
  if (v < 0 || v > INT_MAX) {
    throw ValueError(std::string(name) + " = " + std::to_string(v) +
                     " is outside 0..2147483647 (the kernel ABI takes int)");
  }
}

} // namespace

bool forced_failure(std::string_view step) {
  const char* v = std::getenv("MMAEMU_TEST_FORCE_FAIL");
  if (!v)
    return false;
  std::string_view list(v);
  while (!list.empty()) {
    const auto comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    while (!item.empty() && item.front() == ' ')
      item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ')
      item.remove_suffix(1);
    if (item == step)
      return true;
    if (comma == std::string_view::npos)
      break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

std::string nvrtc_cubin_key(const KernelSpec& spec, int arch, int nvrtc_major, int nvrtc_minor) {
  std::string bytes;
  auto field = [&bytes](std::string_view s) {
    bytes.append(s);
    bytes.push_back('\0');
  };
  field("mmaemu-nvrtc/1");
  field(spec.source);
  field(kernel_source(spec.source));
  for (const SourceFile& h : kernel_headers()) {
    field(h.name);
    field(h.content);
  }
  for (const std::string& o : nvrtc::fixed_options(arch))
    field(o);
  field(std::to_string(arch));
  field(std::to_string(nvrtc_major) + "." + std::to_string(nvrtc_minor));
  return support::sha256_hex(bytes);
}

const LoadedModule& load_module(const KernelSpec& spec, const driver::Device& device) {
  const driver::CUcontext ctx = driver::make_current(device);
  const unsigned long long ctx_id = driver::context_id(ctx);
  Cache& c = cache();
  std::lock_guard lock(c.mu);
  const auto key = std::make_tuple(device.ordinal, ctx_id, std::string(spec.name));
  if (auto it = c.modules.find(key); it != c.modules.end())
    return *it->second;

  auto out = std::make_unique<LoadedModule>();
  out->kernel = std::string(spec.name);
  out->device_ordinal = device.ordinal;
  out->context_id = ctx_id;
  std::string fatbin_why;
  try {
    try_fatbin(spec, device, *out);
  } catch (const StepFailed& f) {
    fatbin_why = f.reason;
  }
  if (fatbin_why.empty()) {
    auto [it, inserted] = c.modules.emplace(key, std::move(out));
    (void)inserted;
    return *it->second;
  }
  out->fatbin_reason = fatbin_why;
  try {
    try_nvrtc(spec, device, *out);
  } catch (const StepFailed& f) {
    throw BackendUnavailableError("cuda:" + std::string(spec.name) +
                                  " cannot be loaded on device " + std::to_string(device.ordinal) +
                                  " (" + device.name + ", sm_" + std::to_string(device.cc) +
                                  "): fatbin: " + fatbin_why + "; nvrtc: " + f.reason);
  }
  auto [it, inserted] = c.modules.emplace(key, std::move(out));
  (void)inserted;
  return *it->second;
}

void run_kernel(const KernelSpec& spec, const LoadedModule& loaded, const driver::Device& device,
                const std::uint8_t* a, std::size_t lda, const std::uint8_t* b, std::size_t ldb,
                std::int64_t M, std::int64_t N, std::int64_t K, float* out) {
  check_dim(M, "M");
  check_dim(N, "N");
  check_dim(K, "K");
  if (static_cast<std::uint64_t>(K) >= spec.k_max) {
    throw ValueError("K = " + std::to_string(K) + " is not below cuda:" + std::string(spec.name) +
                     "'s limit k_max = " + std::to_string(spec.k_max));
  }
  const auto m = static_cast<std::size_t>(M);
  const auto n = static_cast<std::size_t>(N);
  const auto k = static_cast<std::size_t>(K);
  std::size_t out_bytes = 0;
  if (__builtin_mul_overflow(m, n, &out_bytes) ||
      __builtin_mul_overflow(out_bytes, sizeof(float), &out_bytes) ||
      out_bytes > (std::size_t{1} << 62)) {
    throw ValueError("M = " + std::to_string(M) + ", N = " + std::to_string(N) +
                     ": the output would exceed 2^62 bytes");
  }
  if (m == 0 || n == 0)
    return;
  if (lda < k || ldb < k) {
    throw ValueError("lda = " + std::to_string(lda) + ", ldb = " + std::to_string(ldb) +
                     ": both must be at least K = " + std::to_string(K));
  }
  if (k == 0) {
    std::fill(out, out + m * n, 0.0f);
    return;
  }
  if (!a || !b || !out)
    throw ValueError("run_kernel: an operand or the output pointer is null");
  if (spec.dynamic_smem > device.smem_optin &&
      spec.dynamic_smem > driver::kDefaultDynamicSmemLimit) {
    throw BackendUnavailableError(
        "cuda:" + std::string(spec.name) + " needs " + std::to_string(spec.dynamic_smem) +
        " bytes of dynamic shared memory; device " + std::to_string(device.ordinal) + " (" +
        device.name + ") allows " + std::to_string(device.smem_optin));
  }
  const driver::Api& api = driver::api();
  driver::make_current(device);
  if (spec.dynamic_smem > driver::kDefaultDynamicSmemLimit) {
    check(api.cuFuncSetAttribute(loaded.function, driver::kFuncAttrMaxDynamicSharedSizeBytes,
                                 spec.dynamic_smem),
          "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
  }

  DeviceBuffer da(m * k);
  DeviceBuffer db(n * k);
  DeviceBuffer dc(out_bytes);
  upload_rows(da, a, m, k, lda);
  upload_rows(db, b, n, k, ldb);

  unsigned grid_y_max = static_cast<unsigned>(std::max(device.max_grid_y, 1));
  if (const unsigned hook = g_grid_y_limit.load(); hook != 0)
    grid_y_max = std::min(grid_y_max, hook);
  const std::size_t tile_m = static_cast<std::size_t>(spec.tile_m);
  const std::size_t tile_n = static_cast<std::size_t>(spec.tile_n);
  const std::size_t rows_per_launch = static_cast<std::size_t>(grid_y_max) * tile_m;
  const auto grid_x = static_cast<unsigned>((n + tile_n - 1) / tile_n);
  for (std::size_t row0 = 0; row0 < m; row0 += rows_per_launch) {
    const std::size_t rows = std::min(rows_per_launch, m - row0);
    driver::CUdeviceptr pa = da.get() + row0 * k;
    driver::CUdeviceptr pb = db.get();
    driver::CUdeviceptr pc = dc.get() + row0 * n * sizeof(float);
    int im = static_cast<int>(rows);
    int in = static_cast<int>(n);
    int ik = static_cast<int>(k);
    void* params[] = {&pa, &pb, &pc, &im, &in, &ik};
    const auto grid_y = static_cast<unsigned>((rows + tile_m - 1) / tile_m);
    check(api.cuLaunchKernel(loaded.function, grid_x, grid_y, 1,
                             static_cast<unsigned>(spec.threads), 1, 1,
                             static_cast<unsigned>(spec.dynamic_smem), nullptr, params, nullptr),
          "cuLaunchKernel");
  }
  check(api.cuCtxSynchronize(), "cuCtxSynchronize");
  check(api.cuMemcpyDtoH(out, dc.get(), out_bytes), "cuMemcpyDtoH");
}

namespace detail {

void set_grid_y_limit_for_testing(unsigned limit) {
  g_grid_y_limit = limit;
}

void reset_module_cache_for_testing() {
  Cache& c = cache();
  std::lock_guard lock(c.mu);
  if (const driver::Api* a = driver::try_api()) {
    for (auto& entry : c.modules) {
      if (entry.second->module)
        a->cuModuleUnload(entry.second->module);
    }
  }
  c.modules.clear();
  c.cubins.clear();
}

} // namespace detail

} // namespace mmaemu::kernels
