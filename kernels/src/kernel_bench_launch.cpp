// SPDX-License-Identifier: BSD-2-Clause
// Timed launches of `mmaemu bench kernels`: device buffers and CUDA events freed on every path,
// one product C = A x B^T of the raw kernel in row chunks, and launches queued back to back
// between events until a time is reached.

#include <algorithm>
#include <cstddef>

#include "kernel_bench_internal.hpp"

namespace mmaemu::kernels::detail {

using driver::check;
using driver::CUdeviceptr;

DeviceMem::DeviceMem(std::size_t bytes) {
  check(driver::api().cuMemAlloc(&ptr_, std::max<std::size_t>(bytes, 1)), "cuMemAlloc");
}

DeviceMem::~DeviceMem() {
  if (ptr_)
    driver::api().cuMemFree(ptr_);
}

Event::Event() {
  check(driver::api().cuEventCreate(&ev_, 0), "cuEventCreate");
}

Event::~Event() {
  if (ev_)
    driver::api().cuEventDestroy(ev_);
}

void Event::record() const {
  check(driver::api().cuEventRecord(ev_, nullptr), "cuEventRecord");
}

void Event::sync() const {
  check(driver::api().cuEventSynchronize(ev_), "cuEventSynchronize");
}

double Event::since(const Event& start) const {
  float ms = 0;
  check(driver::api().cuEventElapsedTime(&ms, start.ev_, ev_), "cuEventElapsedTime");
  return static_cast<double>(ms) / 1e3;
}

void Launcher::operator()() const {
  const driver::Api& api = driver::api();
  const auto tile_m = static_cast<std::size_t>(spec->tile_m);
  const auto tile_n = static_cast<std::size_t>(spec->tile_n);
  const std::size_t rows_per_launch = static_cast<std::size_t>(grid_y_max) * tile_m;
  const auto grid_x = static_cast<unsigned>((n + tile_n - 1) / tile_n);
  for (std::size_t row0 = 0; row0 < m; row0 += rows_per_launch) {
    const std::size_t rows = std::min(rows_per_launch, m - row0);
    CUdeviceptr pa = a + row0 * k;
    CUdeviceptr pb = b;
    CUdeviceptr pc = c + row0 * n * sizeof(float);
    int im = static_cast<int>(rows);
    int in = static_cast<int>(n);
    int ik = static_cast<int>(k);
    void* params[] = {&pa, &pb, &pc, &im, &in, &ik};
    const auto grid_y = static_cast<unsigned>((rows + tile_m - 1) / tile_m);
    check(api.cuLaunchKernel(loaded->function, grid_x, grid_y, 1,
                             static_cast<unsigned>(spec->threads), 1, 1,
                             static_cast<unsigned>(spec->dynamic_smem), nullptr, params, nullptr),
          "cuLaunchKernel");
  }
}

Timed run_timed(const Launcher& launch, double min_s, std::int64_t batch) {
  Event start, ev[2];
  start.record();
  Timed t;
  int cur = 0;
  bool have_prev = false;
  for (;;) {
    for (std::int64_t i = 0; i < batch; ++i)
      launch();
    t.launches += batch;
    ev[cur].record();
    if (!have_prev && min_s <= 0) {
      ev[cur].sync();
      t.seconds = ev[cur].since(start);
      return t;
    }
    if (have_prev) {
      ev[cur ^ 1].sync();
      if (ev[cur ^ 1].since(start) >= min_s) {
        ev[cur].sync();
        t.seconds = ev[cur].since(start);
        return t;
      }
    }
    have_prev = true;
    cur ^= 1;
  }
}

} // namespace mmaemu::kernels::detail
