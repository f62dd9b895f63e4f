#include "environment_json.hpp"

namespace kernelhub::cli {

namespace {
template <typename T>
nlohmann::json or_null(const std::optional<T>& v) {
  return v ? nlohmann::json(v->to_string()) : nlohmann::json(nullptr);
}
}  // namespace

nlohmann::json environment_to_json(const resolver::Environment& e) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& gpu : e.gpus) gpus.push_back({{"compute_capability", gpu.to_string()}});
  const bool cuda = e.torch_backend.kind == resolver::BackendKind::kCuda;
  nlohmann::json j = {
      {"os", e.os},
      {"cpu", e.cpu},
      {"glibc", or_null(e.glibc)},
      {"python", or_null(e.python)},
      {"python_free_threaded", e.python_free_threaded},
      {"tvm_ffi", or_null(e.tvm_ffi)},
      {"mlx", e.mlx},
      {"macos", or_null(e.macos)},
      {"torch", or_null(e.torch)},
      {"cxx11_abi", e.cxx11_abi ? nlohmann::json(*e.cxx11_abi) : nlohmann::json(nullptr)},
      {"torch_backend", e.torch_backend.to_environment()},
      {"torch_cuda", cuda ? or_null(e.torch_backend.version) : nlohmann::json(nullptr)},
      {"backend", e.backend.to_environment()},
      {"backend_reason", e.backend_reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.backend_reason)},
      {"cuda_driver", or_null(e.cuda_driver)},
      {"gpus", gpus},
  };
  auto native = e.native_variant();
  j["variant"] = native ? nlohmann::json(native->to_string()) : nlohmann::json(nullptr);
  return j;
}

}  // namespace kernelhub::cli
