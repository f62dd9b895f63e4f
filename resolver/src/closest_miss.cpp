#include "kernelhub/resolver/internal/closest_miss.hpp"

#include <algorithm>
#include <tuple>

#include "overloaded.hpp"

namespace kernelhub::resolver {

namespace {

// A variant is checked again at most this often; every grant changes a different field, so a
// list this long means a grant that did not take.
constexpr std::size_t kMaxBlocking = 16;

// "CUDA 12.8", "ROCm 7.1", "CPU", "Metal".
std::string backend_words(const Backend& b) {
  std::string name;
  switch (b.kind) {
    case BackendKind::kCpu: return "CPU";
    case BackendKind::kMetal: return "Metal";
    case BackendKind::kNeuron: return "Neuron";
    case BackendKind::kTpu: return "TPU";
    case BackendKind::kCuda: name = "CUDA"; break;
    case BackendKind::kRocm: name = "ROCm"; break;
    case BackendKind::kXpu: name = "XPU"; break;
    case BackendKind::kCann: name = "CANN"; break;
  }
  return b.version ? name + " " + b.version->to_string() : name;
}

std::string torch_words(const std::optional<Version>& torch) {
  return torch ? "torch " + torch->to_string() : "no torch";
}

std::string abi_words(bool cxx11) {
  return cxx11 ? "the C++11 ABI" : "the pre-C++11 ABI";
}

// "CUDA 12.8 or a newer 12.x": what a CUDA or ROCm build of that version accepts.
std::string toolkit_range(std::string_view name, const std::optional<Version>& v) {
  if (!v) return std::string(name) + " of an unknown version";
  return std::string(name) + " " + v->to_string() + " or a newer " + std::to_string(v->major) + ".x";
}

// "a", "a and b", "a, b and c".
std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
  }
  return out;
}

// Grants rejection `r` of `v`: changes `env` or `loadable` as the change that lifts it would.
// False where no change here lifts it (see the header).
bool grant(const Reason& r, const Variant& v, Environment& env, Loadable& loadable) {
  switch (reason_code(r)) {
    case ReasonCode::kFreeThreadedPython: env.python_free_threaded = false; return true;
    case ReasonCode::kPythonTooOld: env.python = v.python.min; return true;
    case ReasonCode::kCpu: env.cpu = v.cpu; return true;
    case ReasonCode::kOs: env.os = v.os; return true;
    case ReasonCode::kTorchVersion:
    case ReasonCode::kStableAbiTooNew: env.torch = v.framework_version; return true;
    case ReasonCode::kCxxAbi:
      // Off Linux no torch says its ABI, so no torch there loads an ABI-tagged build.
      if (!std::get<reason::CxxAbi>(r).system) return false;
      env.cxx11_abi = v.cxx11_abi;
      return true;
    case ReasonCode::kNoLibTorch: loadable.libtorch = true; return true;
    case ReasonCode::kTvmFfiNotLoadable: loadable.tvm_ffi = true; return true;
    case ReasonCode::kTvmFfiVersion: env.tvm_ffi = v.framework_version; return true;
    case ReasonCode::kCudaVersion:
    case ReasonCode::kRocmVersion:
      if (!v.backend.version) return false;
      env.backend.version = v.backend.version;
      return true;
    case ReasonCode::kBackend: env.backend = v.backend; return true;
    case ReasonCode::kMetalMacos: env.macos = kMetalMinMacos; return true;
    case ReasonCode::kPurePython:
    case ReasonCode::kSdkNotLoadable: loadable.python = true; return true;
    case ReasonCode::kMlxMissing: env.mlx = true; return true;
    case ReasonCode::kNoarchBackend:  // any text names the backend: no environment to make of it
    case ReasonCode::kDriverTooOld:
    case ReasonCode::kPtxNeedsNewerDriver:
    case ReasonCode::kNoCodeForGpu:
    case ReasonCode::kUnparsableName:
    case ReasonCode::kCompatible: return false;
  }
  return false;
}

// Every check `d` fails here: its reason, then each next one once the last is granted.
std::vector<Reason> blocking_of(const Decision& d, Environment env, Loadable loadable) {
  std::vector<Reason> out{d.reason};
  while (out.size() < kMaxBlocking && grant(out.back(), *d.variant, env, loadable)) {
    Reason next = check_variant(*d.variant, env, loadable);
    if (is_accepted(next)) break;
    out.push_back(std::move(next));
  }
  return out;
}

// The variant as the publisher would build it for this environment: `v` with the field of each
// rejection set to this environment's. None where a rejection has no such field (the process,
// the machine, the GPU), or where the result would still not be accepted here.
std::optional<Variant> build_for_here(const Variant& v, const std::vector<Reason>& blocking, const Environment& env,
                                      const Loadable& loadable) {
  Variant out = v;
  for (const Reason& r : blocking) {
    const bool named = std::visit(Overloaded{
                                      [&](const reason::PythonTooOld& m) {
                                        out.python.min = m.system;
                                        return true;
                                      },
                                      [&](const reason::CpuMismatch& m) { return !(out.cpu = m.system).empty(); },
                                      [&](const reason::OsMismatch& m) { return !(out.os = m.system).empty(); },
                                      [&](const reason::TorchVersion& m) {
                                        if (m.system) out.framework_version = *m.system;
                                        return m.system.has_value();
                                      },
                                      [&](const reason::StableAbiTooNew& m) {
                                        if (m.system) out.framework_version = *m.system;
                                        return m.system.has_value();
                                      },
                                      [&](const reason::CxxAbi& m) {
                                        if (m.system) out.cxx11_abi = m.system;
                                        return m.system.has_value();
                                      },
                                      [&](const reason::TvmFfiVersion& m) {
                                        if (m.system) out.framework_version = *m.system;
                                        return m.system.has_value();
                                      },
                                      [&](const reason::CudaVersion& m) {
                                        if (m.system) out.backend.version = m.system;
                                        return m.system.has_value();
                                      },
                                      [&](const reason::RocmVersion& m) {
                                        if (m.system) out.backend.version = m.system;
                                        return m.system.has_value();
                                      },
                                      [&](const reason::BackendMismatch& m) {
                                        out.backend = Backend{m.system.kind, m.system.version};
                                        return true;
                                      },
                                      [&](const reason::NoarchBackend& m) {
                                        out.noarch_backend = std::string(Backend{m.system, {}}.kind_name());
                                        return true;
                                      },
                                      [](const auto&) { return false; },
                                  },
                                  r);
    if (!named) return std::nullopt;
  }
  // Only a name that reads back as itself and would be chosen here is worth asking for.
  auto parsed = Variant::parse(out.to_string());
  if (!parsed || !(*parsed == out) || !is_accepted(check_variant(out, env, loadable))) return std::nullopt;
  return out;
}

// What a rejection needs, with what is here: "torch 2.15 (here: torch 2.11)".
std::string needs(const Reason& r) {
  return std::visit(
      Overloaded{
          [](const reason::UnparsableName& u) { return u.message; },
          [](const reason::FreeThreadedPython&) {
            return std::string("a Python with the GIL (here: a free-threaded Python)");
          },
          [](const reason::PythonTooOld& m) {
            return "Python " + m.variant.to_string() + " or newer (here: Python " + m.system.to_string() + ")";
          },
          [](const reason::CpuMismatch& m) { return "CPU " + m.variant + " (here: " + m.system + ")"; },
          [](const reason::OsMismatch& m) { return "OS " + m.variant + " (here: " + m.system + ")"; },
          [](const reason::TorchVersion& m) {
            return "torch " + m.variant.to_string() + " (here: " + torch_words(m.system) + ")";
          },
          [](const reason::CxxAbi& m) {
            const std::string wanted = "a torch built with " + abi_words(m.variant.value_or(true));
            if (!m.system) return wanted + " (here: not Linux, where no torch says its ABI)";
            return wanted + " (here: " + abi_words(*m.system) + ")";
          },
          [](const reason::StableAbiTooNew& m) {
            return "torch " + m.variant.to_string() + " or newer (here: " + torch_words(m.system) + ")";
          },
          [](const reason::NoLibTorch&) { return std::string("LibTorch (here: a process without it)"); },
          [](const reason::TvmFfiNotLoadable&) {
            return std::string("a TVM-FFI loader (here: a process without one)");
          },
          [](const reason::TvmFfiVersion& m) {
            return "tvm-ffi " + m.variant.to_string() +
                   " (here: " + (m.system ? "tvm-ffi " + m.system->to_string() : std::string("no tvm-ffi")) + ")";
          },
          [](const reason::CudaVersion& m) {
            return "a torch built for " + toolkit_range("CUDA", m.variant) +
                   " (here: " + (m.system ? "CUDA " + m.system->to_string() : std::string("no CUDA version")) + ")";
          },
          [](const reason::RocmVersion& m) {
            const std::string here = !m.system_text.empty() ? "ROCm " + m.system_text
                                     : m.system             ? "ROCm " + m.system->to_string()
                                                            : std::string("no ROCm version");
            return "a torch built for " + toolkit_range("ROCm", m.variant) + " (here: " + here + ")";
          },
          [](const reason::BackendMismatch& m) {
            return "a torch built for " + backend_words(m.variant) + " (here: " + backend_words(m.system) + ")";
          },
          [](const reason::MetalMacos& m) {
            return "macOS 26 or newer (here: " + (m.system ? "macOS " + m.system->to_string() : std::string("none")) +
                   ")";
          },
          [](const reason::PurePython&) { return std::string("a Python process (here: a process without Python)"); },
          [](const reason::NoarchBackend& m) {
            return "the " + m.variant + " backend (here: " + std::string(Backend{m.system, {}}.kind_name()) + ")";
          },
          [](const reason::MlxMissing&) { return std::string("MLX (here: not installed)"); },
          [](const reason::SdkNotLoadable&) {
            return std::string("a Python process (here: a process without Python)");
          },
          [](const reason::GpuMismatch& m) {
            const std::string here = " (here: " + to_string(m.fit) + ")";
            if (m.fit.kind == GpuFitKind::kNoCodeForGpu) return "code for this GPU" + here;
            if (m.fit.kind == GpuFitKind::kDriverTooOld && m.fit.input.toolkit) {
              return "a driver for CUDA " + std::to_string(m.fit.input.toolkit->major) + ".x" + here;
            }
            return "a newer driver" + here;
          },
          [](const reason::Compatible&) { return std::string("nothing"); },
      },
      r);
}

// What the user can do about a rejection; empty where only the publisher can.
std::string user_action(const Reason& r) {
  return std::visit(
      Overloaded{
          [](const reason::FreeThreadedPython&) { return std::string("run it with a Python that has the GIL"); },
          [](const reason::PythonTooOld& m) { return "run it with Python " + m.variant.to_string() + " or newer"; },
          [](const reason::TorchVersion& m) { return "install torch " + m.variant.to_string(); },
          [](const reason::CxxAbi& m) {
            if (!m.system) return std::string();
            return "install a torch built with " + abi_words(m.variant.value_or(true));
          },
          [](const reason::StableAbiTooNew& m) { return "install torch " + m.variant.to_string() + " or newer"; },
          [](const reason::NoLibTorch&) {
            return std::string("load it where LibTorch is (kernelhub-get, the C++ API, or Python with torch)");
          },
          [](const reason::TvmFfiNotLoadable&) {
            return std::string(
                "load it where a TVM-FFI loader is (Python with apache-tvm-ffi, or kernelhub "
                "built with the TVM-FFI loader)");
          },
          [](const reason::TvmFfiVersion& m) { return "install apache-tvm-ffi " + m.variant.to_string(); },
          [](const reason::CudaVersion& m) { return "install a torch built for " + toolkit_range("CUDA", m.variant); },
          [](const reason::RocmVersion& m) { return "install a torch built for " + toolkit_range("ROCm", m.variant); },
          [](const reason::BackendMismatch& m) {
            return "install a torch built for " + backend_words(m.variant) + " (on a machine that has it)";
          },
          [](const reason::MetalMacos&) { return std::string("run it on macOS 26 or newer"); },
          [](const reason::PurePython&) { return std::string("load it from Python"); },
          [](const reason::MlxMissing&) { return std::string("install mlx"); },
          [](const reason::SdkNotLoadable&) { return std::string("load it from Python"); },
          [](const reason::GpuMismatch& m) {
            return m.fit.kind == GpuFitKind::kNoCodeForGpu ? std::string() : std::string("update the NVIDIA driver");
          },
          [](const auto&) { return std::string(); },
      },
      r);
}

}  // namespace

Change change_for(ReasonCode code) {
  switch (code) {
    case ReasonCode::kTorchVersion:
    case ReasonCode::kStableAbiTooNew:
    case ReasonCode::kTvmFfiVersion:
    case ReasonCode::kCxxAbi:
    case ReasonCode::kCudaVersion:
    case ReasonCode::kRocmVersion:
    case ReasonCode::kMlxMissing: return Change::kPackage;
    case ReasonCode::kPythonTooOld:
    case ReasonCode::kFreeThreadedPython:
    case ReasonCode::kNoLibTorch:
    case ReasonCode::kTvmFfiNotLoadable:
    case ReasonCode::kPurePython:
    case ReasonCode::kSdkNotLoadable: return Change::kProcess;
    case ReasonCode::kBackend:
    case ReasonCode::kDriverTooOld:
    case ReasonCode::kPtxNeedsNewerDriver:
    case ReasonCode::kMetalMacos: return Change::kMachine;
    case ReasonCode::kNoCodeForGpu:
    case ReasonCode::kNoarchBackend:
    case ReasonCode::kCpu:
    case ReasonCode::kOs:
    case ReasonCode::kUnparsableName:
    case ReasonCode::kCompatible: return Change::kPublisher;
  }
  return Change::kPublisher;
}

int change_rank(ReasonCode code) {
  static constexpr ReasonCode kOrder[] = {
      ReasonCode::kTorchVersion,
      ReasonCode::kStableAbiTooNew,
      ReasonCode::kTvmFfiVersion,
      ReasonCode::kCxxAbi,
      ReasonCode::kCudaVersion,
      ReasonCode::kRocmVersion,
      ReasonCode::kMlxMissing,
      ReasonCode::kPythonTooOld,
      ReasonCode::kFreeThreadedPython,
      ReasonCode::kNoLibTorch,
      ReasonCode::kTvmFfiNotLoadable,
      ReasonCode::kPurePython,
      ReasonCode::kSdkNotLoadable,
      ReasonCode::kBackend,
      ReasonCode::kDriverTooOld,
      ReasonCode::kPtxNeedsNewerDriver,
      ReasonCode::kMetalMacos,
      ReasonCode::kNoCodeForGpu,
      ReasonCode::kNoarchBackend,
      ReasonCode::kCpu,
      ReasonCode::kOs,
  };
  const auto* it = std::find(std::begin(kOrder), std::end(kOrder), code);
  return static_cast<int>(it - std::begin(kOrder));
}

std::optional<ClosestMiss> closest_miss(const std::vector<Decision>& decisions, const Environment& env,
                                        const Loadable& loadable) {
  if (chosen(decisions) != nullptr) return std::nullopt;
  std::optional<ClosestMiss> best;
  std::tuple<Change, std::size_t, int> best_key{};
  for (const Decision& d : decisions) {
    if (!d.variant) continue;
    std::vector<Reason> blocking = blocking_of(d, env, loadable);
    Change hardest = Change::kPackage;
    for (const Reason& r : blocking) hardest = std::max(hardest, change_for(reason_code(r)));
    const std::tuple key{hardest, blocking.size(), change_rank(reason_code(blocking.front()))};
    // Strictly less: on a tie the earlier decision, in the trace's order, stays.
    if (best && !(key < best_key)) continue;
    best_key = key;
    best = ClosestMiss{d.name, *d.variant, std::move(blocking), std::nullopt};
  }
  if (best) best->for_here = build_for_here(best->variant, best->blocking, env, loadable);
  return best;
}

std::string to_string(const ClosestMiss& miss) {
  std::vector<std::string> wanted;
  std::vector<std::string> actions;
  for (const Reason& r : miss.blocking) {
    wanted.push_back(needs(r));
    if (std::string action = user_action(r); !action.empty()) actions.push_back(std::move(action));
  }
  std::string out = "the closest is `" + miss.name + "`, which needs " + join(wanted);
  std::string ask;
  if (miss.for_here) {
    ask = "ask the publisher for a `" + miss.for_here->to_string() + "` build";
  } else if (const auto* gpu = std::get_if<reason::GpuMismatch>(&miss.blocking.back());
             gpu != nullptr && gpu->fit.kind == GpuFitKind::kNoCodeForGpu) {
    ask = "ask the publisher for a build with code for this GPU";
  }
  // The user's changes only where they lift every rejection; else only the publisher can help.
  if (!actions.empty() && actions.size() == miss.blocking.size()) {
    out += "; " + join(actions) + (ask.empty() ? "" : ", or " + ask);
  } else if (!ask.empty()) {
    out += "; " + ask;
  }
  return out;
}

std::string no_variant_message(std::string_view what, const std::vector<Decision>& decisions, const Environment& env,
                               const Loadable& loadable) {
  std::string out = "no variant of " + std::string(what) + " runs here";
  if (const auto miss = closest_miss(decisions, env, loadable)) out += ": " + to_string(*miss);
  return out + "\n\n" + format_trace(decisions);
}

}  // namespace kernelhub::resolver
