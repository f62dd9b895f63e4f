// get_kernel in one process, called N times: what each call cost (wall time, HTTP requests, bytes
// hashed, bytes the process read). Driven by bench/client/bench_get_kernel.py; not a test.
//
//   get_kernel_bench ORG/NAME (--version N | --revision R | --lockfile F) [--repeat N] [--backend B]
//
// Prints one JSON object per call on stdout.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>

#include "kernelhub/kernelhub.hpp"

namespace {

// Bytes this process has read through read(2) and friends so far (/proc/self/io `rchar`).
long long bytes_read_so_far() {
  std::ifstream io("/proc/self/io");
  std::string key;
  long long value = 0;
  while (io >> key >> value) {
    if (key == "rchar:") return value;
  }
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s ORG/NAME (--version N | --revision R | --lockfile F) [--repeat N] [--backend B]\n",
                 argv[0]);
    return 2;
  }
  kernelhub::GetKernelOptions options;
  int repeat = 1;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--version") options.version = std::stoi(value);
    else if (flag == "--revision") options.revision = value;
    else if (flag == "--lockfile") options.lockfile = value;
    else if (flag == "--repeat") repeat = std::stoi(value);
    else if (flag == "--backend") options.backend = value;
    else {
      std::fprintf(stderr, "unknown option %s\n", flag.c_str());
      return 2;
    }
  }
  for (int call = 0; call < repeat; ++call) {
    const long long read_before = bytes_read_so_far();
    const auto start = std::chrono::steady_clock::now();
    try {
      const kernelhub::Kernel kernel = kernelhub::get_kernel(argv[1], options);
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      const auto& t = kernel.timings();
      std::printf(
          "{\"call\": %d, \"wall_ms\": %.4f, \"requests\": %d, \"bytes_hashed\": %llu, \"bytes_read\": %lld, "
          "\"resolve_ms\": %.4f, \"download_ms\": %.4f, \"verify_ms\": %.4f, \"load_ms\": %.4f}\n",
          call, ms, t.requests, static_cast<unsigned long long>(t.bytes_hashed), bytes_read_so_far() - read_before,
          t.resolve * 1e3, t.download * 1e3, t.verify * 1e3, t.load * 1e3);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "get_kernel failed: %s\n", e.what());
      return 1;
    }
  }
  return 0;
}
