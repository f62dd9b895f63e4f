// Timing for the standalone CUDA probes (adaln_probe.cu, launch_probe.cu, ltx_grid_probe.cu,
// rms128_probe.cu): a checked CUDA call and the median of event-timed launches, as triton's do_bench
// times them (a memset of a large buffer before each run flushes L2 and the instruction caches).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                             \
  do {                                                                                       \
    cudaError_t e = (x);                                                                     \
    if (e != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e)); \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

// Median of launch() in microseconds over `runs` runs after `warmups`, each after flush(rep).
template <typename Flush, typename F>
float median_us_after(Flush&& flush, int warmups, int runs, F&& launch) {
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  std::vector<float> us;
  for (int rep = 0; rep < warmups + runs; ++rep) {
    flush(rep);
    CHECK(cudaEventRecord(start));
    launch();
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    if (rep >= warmups) us.push_back(ms * 1000);
  }
  CHECK(cudaGetLastError());
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

// The same after a memset of `flush` (flush_bytes) unless `flush` is null.
template <typename F>
float median_us(void* flush, size_t flush_bytes, int warmups, int runs, F&& launch) {
  return median_us_after(
      [&](int rep) {
        if (flush != nullptr) CHECK(cudaMemsetAsync(flush, rep & 0xff, flush_bytes));
      },
      warmups, runs, launch);
}
