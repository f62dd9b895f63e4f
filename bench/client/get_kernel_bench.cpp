// get_kernel in one process, called N times: what each call cost (wall time, HTTP requests, bytes
// hashed, bytes the process read). Driven by bench/client/bench_get_kernel.py; not a test.
//
//   get_kernel_bench ORG/NAME (--version N | --revision R | --lockfile F) [--repeat N] [--backend B]
//                    [--init-cuda 1] [--transport-per-call 1]
//
// Prints one JSON object per call on stdout; `connections` is the TCP connections the call opened.
// `--transport-per-call 1` gives get_kernel a Session whose transport is a new libcurl transport
// for every batch of requests, as get_kernel had before the process kept one (a warm call makes
// one batch): everything else, listings, trust answers and verification records, is kept as the
// process's Session keeps it (bench/client/bench_connection_reuse.py compares the two).
// `--init-cuda 1` first initialises CUDA through torch (as a program that already runs on the
// GPU has), to show that get_kernel then forks no probe:
// `children_cpu_ms` is the CPU time of child processes this process waited for (a probe child
// that initialises CUDA takes a good part of a second).
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>

#include <sys/resource.h>
#include <torch/torch.h>

#include "kernelhub/base/internal/process_io.hpp"
#include "kernelhub/binary_format/internal/torch_libraries.hpp"
#include "kernelhub/client/internal/transport.hpp"
#include "kernelhub/fetch/internal/session.hpp"
#include "kernelhub/internal/load.hpp"
#include "kernelhub/kernelhub.hpp"

namespace {

// A new libcurl transport for each run(): no connection outlives its batch of requests.
class TransportPerRun final : public kernelhub::client::Transport {
 public:
  void run(kernelhub::client::Workload& work, int max_parallel) override {
    const auto transport = kernelhub::client::make_curl_transport();
    transport->run(work, max_parallel);
    connections_ += transport->connections_opened();
  }
  std::uint64_t connections_opened() const override { return connections_.load(); }

 private:
  std::atomic<std::uint64_t> connections_{0};
};

long long bytes_read_so_far() {
  return static_cast<long long>(kernelhub::bytes_read_by_process().value_or(0));
}

double children_cpu_ms() {
  rusage usage{};
  getrusage(RUSAGE_CHILDREN, &usage);
  return (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e3 +
         (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e3;
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
  bool init_cuda = false;
  bool transport_per_call = false;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--version")
      options.version = std::stoi(value);
    else if (flag == "--revision")
      options.revision = value;
    else if (flag == "--lockfile")
      options.lockfile = value;
    else if (flag == "--repeat")
      repeat = std::stoi(value);
    else if (flag == "--backend")
      options.backend = value;
    else if (flag == "--init-cuda")
      init_cuda = value == "1";
    else if (flag == "--transport-per-call")
      transport_per_call = value == "1";
    else {
      std::fprintf(stderr, "unknown option %s\n", flag.c_str());
      return 2;
    }
  }
  if (init_cuda) {
    if (!kernelhub::binary_format::ensure_torch_cuda_loaded() || !torch::cuda::is_available()) {
      std::fprintf(stderr, "--init-cuda: torch sees no CUDA device\n");
      return 1;
    }
    (void)torch::ones({1}, torch::kCUDA).sum().item<float>();  // CUDA initialised by torch
  }
  std::shared_ptr<kernelhub::Session> own_session;  // none: the process's, as get_kernel uses
  if (transport_per_call) {
    own_session = std::make_shared<kernelhub::Session>(
        kernelhub::SessionOptions{.transport = std::make_shared<TransportPerRun>()});
  }
  const kernelhub::Session& session = own_session ? *own_session : kernelhub::Session::process_default();
  for (int call = 0; call < repeat; ++call) {
    const std::uint64_t connections_before = session.connections_opened();
    const double children_before = children_cpu_ms();
    const long long read_before = bytes_read_so_far();
    const auto start = std::chrono::steady_clock::now();
    try {
      const kernelhub::Kernel kernel =
          kernelhub::get_kernel(argv[1], options, kernelhub::process_environment(), own_session);
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      const auto& t = kernel.timings();
      std::printf(
          "{\"call\": %d, \"wall_ms\": %.4f, \"requests\": %d, \"bytes_hashed\": %llu, \"bytes_read\": %lld, "
          "\"resolve_ms\": %.4f, \"download_ms\": %.4f, \"verify_ms\": %.4f, \"load_ms\": %.4f, "
          "\"children_cpu_ms\": %.1f, \"connections\": %llu, \"variant\": \"%s\"}\n",
          call, ms, t.requests, static_cast<unsigned long long>(t.bytes_hashed), bytes_read_so_far() - read_before,
          t.resolve * 1e3, t.download * 1e3, t.verify * 1e3, t.load * 1e3, children_cpu_ms() - children_before,
          static_cast<unsigned long long>(session.connections_opened() - connections_before), kernel.variant().c_str());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "get_kernel failed: %s\n", e.what());
      return 1;
    }
  }
  return 0;
}
