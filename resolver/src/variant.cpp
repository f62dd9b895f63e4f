#include "kernelhub/resolver/variant.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <vector>

namespace kernelhub::resolver {

namespace {

struct KindName {
  BackendKind kind;
  std::string_view name;
};
// Names as the `kernels` package spells them (backends.py); `cann` variants map to the npu kind
// in noarch names.
constexpr std::array<KindName, 9> kKindNames{{{BackendKind::kCpu, "cpu"},
                                              {BackendKind::kCuda, "cuda"},
                                              {BackendKind::kRocm, "rocm"},
                                              {BackendKind::kXpu, "xpu"},
                                              {BackendKind::kMetal, "metal"},
                                              {BackendKind::kCann, "cann"},
                                              {BackendKind::kNpu, "npu"},
                                              {BackendKind::kNeuron, "neuron"},
                                              {BackendKind::kTpu, "tpu"}}};

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// "128" → 12.8; the minor is the last digit, as the `kernels` regex splits it.
// Leading zeros are refused (kernel-builder never writes them), so that to_string() prints back
// exactly what parse() read: "torch106" would otherwise read as 1.6 and print as "torch16".
std::optional<Version> split_packed_version(std::string_view digits) {
  if (digits.size() < 2 || !all_digits(digits) || digits.size() > 9) return std::nullopt;
  if (digits.size() > 2 && digits[0] == '0') return std::nullopt;
  Version v;
  std::from_chars(digits.data(), digits.data() + digits.size() - 1, v.major);
  v.minor = digits.back() - '0';
  return v;
}

// torch versions: one-digit major, the rest is the minor ("215" → 2.15), regex torch(\d)(\d+).
std::optional<Version> split_framework_version(std::string_view digits) {
  if (digits.size() < 2 || !all_digits(digits) || digits.size() > 9) return std::nullopt;
  if (digits.size() > 2 && digits[1] == '0') return std::nullopt;
  Version v;
  v.major = digits[0] - '0';
  std::from_chars(digits.data() + 1, digits.data() + digits.size(), v.minor);
  return v;
}

std::string pack(const Version& v) { return std::to_string(v.major) + std::to_string(v.minor); }

Unexpected bad_variant(std::string_view name, std::string_view why) {
  return unexpected(ErrorCode::kInvalidArgument,
                    "`" + std::string(name) + "` is not a build variant name: " + std::string(why));
}

std::vector<std::string_view> split_dash(std::string_view s) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t dash = s.find('-', start);
    parts.push_back(s.substr(start, dash == std::string_view::npos ? std::string_view::npos : dash - start));
    if (dash == std::string_view::npos) break;
    start = dash + 1;
  }
  return parts;
}

bool is_known_cpu(std::string_view cpu) { return cpu == "x86_64" || cpu == "aarch64"; }
bool is_known_os(std::string_view os) { return os == "linux" || os == "darwin" || os == "windows"; }

}  // namespace

Result<Backend> Backend::parse_token(std::string_view token) {
  for (auto plain : {BackendKind::kCpu, BackendKind::kMetal, BackendKind::kNeuron, BackendKind::kTpu}) {
    if (token == Backend{plain, {}}.kind_name()) return Backend{plain, {}};
  }
  struct Prefix {
    std::string_view prefix;
    BackendKind kind;
  };
  for (auto [prefix, kind] : {Prefix{"cu", BackendKind::kCuda}, Prefix{"rocm", BackendKind::kRocm},
                              Prefix{"xpu", BackendKind::kXpu}, Prefix{"cann", BackendKind::kCann}}) {
    if (token.starts_with(prefix)) {
      if (auto v = split_packed_version(token.substr(prefix.size()))) return Backend{kind, *v};
    }
  }
  return unexpected(ErrorCode::kInvalidArgument, "unknown backend `" + std::string(token) + "`");
}

Result<Backend> Backend::parse_environment(std::string_view text) {
  for (const auto& [kind, name] : kKindNames) {
    if (!text.starts_with(name)) continue;
    const std::string_view rest = text.substr(name.size());
    const bool versioned = kind == BackendKind::kCuda || kind == BackendKind::kRocm ||
                           kind == BackendKind::kXpu || kind == BackendKind::kCann;
    if (rest.empty() && !versioned) return Backend{kind, {}};
    if (versioned && !rest.empty()) {
      auto v = Version::parse(rest);
      if (v) return Backend{kind, *v};
    }
  }
  return unexpected(ErrorCode::kInvalidArgument,
                    "`" + std::string(text) +
                        "` is not a backend; expected cpu, cuda<M.m>, rocm<M.m>, xpu<YYYY.m>, cann<M.m>, "
                        "metal, npu, neuron or tpu (e.g. cuda12.8)");
}

std::string_view Backend::kind_name() const {
  for (const auto& [k, name] : kKindNames) {
    if (k == kind) return name;
  }
  return "cpu";
}

std::string Backend::to_token() const {
  switch (kind) {
    case BackendKind::kCuda: return "cu" + pack(version.value_or(Version{}));
    case BackendKind::kRocm: return "rocm" + pack(version.value_or(Version{}));
    case BackendKind::kXpu: return "xpu" + pack(version.value_or(Version{}));
    case BackendKind::kCann: return "cann" + pack(version.value_or(Version{}));
    default: return std::string(kind_name());
  }
}

std::string Backend::to_environment() const {
  std::string out(kind_name());
  if (version) out += version->to_string();
  return out;
}

Result<Variant> Variant::parse(std::string_view name) {
  if (name.size() > 128) return bad_variant(name.substr(0, 32), "longer than 128 characters");
  if (name == "torch-universal") return Variant{Framework::kTorchUniversal, {}, {}, {}, {}, {}};

  const auto parts = split_dash(name);
  // torch-<kind> noarch
  if (parts.size() == 2 && parts[0] == "torch") {
    for (const auto& [kind, kname] : kKindNames) {
      if (parts[1] == kname && kind != BackendKind::kCann) {
        return Variant{Framework::kTorchNoarch, {}, {}, Backend{kind, {}}, {}, {}};
      }
    }
    return bad_variant(name, "unknown noarch backend `" + std::string(parts[1]) + "`");
  }

  Variant v;
  std::size_t next = 0;
  if (parts.size() >= 3 && parts[0] == "torch" && parts[1] == "stable" && parts[2].starts_with("abi")) {
    v.framework = Framework::kTorchStableAbi;
    auto ver = split_framework_version(parts[2].substr(3));
    if (!ver) return bad_variant(name, "bad stable-ABI version `" + std::string(parts[2]) + "`");
    v.framework_version = *ver;
    next = 3;
  } else if (parts.size() >= 2 && parts[0] == "tvm" && parts[1].starts_with("ffi")) {
    v.framework = Framework::kTvmFfi;
    const std::string_view digits = parts[1].substr(3);
    // Regex tvm-ffi(\d+?)(\d+) in the kernels package: the lazy first group takes one digit, so
    // the major is the first digit and the rest the minor ("01" = 0.1, "012" = 0.12).
    auto ver = split_framework_version(digits);
    if (!ver) return bad_variant(name, "bad tvm-ffi version `" + std::string(parts[1]) + "`");
    v.framework_version = *ver;
    next = 2;
  } else if (!parts.empty() && parts[0].starts_with("torch")) {
    v.framework = Framework::kTorch;
    auto ver = split_framework_version(parts[0].substr(5));
    if (!ver) return bad_variant(name, "bad torch version `" + std::string(parts[0]) + "`");
    v.framework_version = *ver;
    next = 1;
    if (next < parts.size() && (parts[next] == "cxx11" || parts[next] == "cxx98")) {
      v.cxx11_abi = parts[next] == "cxx11";
      ++next;
    }
  } else {
    return bad_variant(name, "expected it to start with torch, torch-stable-abi or tvm-ffi");
  }

  if (parts.size() - next != 3) return bad_variant(name, "expected <backend>-<cpu>-<os> after the framework");
  auto backend = Backend::parse_token(parts[next]);
  if (!backend) return bad_variant(name, backend.error().message);
  v.backend = *backend;
  v.cpu = std::string(parts[next + 1]);
  v.os = std::string(parts[next + 2]);
  if (!is_known_cpu(v.cpu)) return bad_variant(name, "unknown cpu `" + v.cpu + "`");
  if (!is_known_os(v.os)) return bad_variant(name, "unknown os `" + v.os + "`");
  return v;
}

std::string Variant::to_string() const {
  switch (framework) {
    case Framework::kTorchUniversal: return "torch-universal";
    case Framework::kTorchNoarch: return "torch-" + std::string(backend.kind_name());
    default: break;
  }
  std::string out;
  if (framework == Framework::kTorch) {
    out = "torch" + std::to_string(framework_version.major) + std::to_string(framework_version.minor);
    if (cxx11_abi) out += *cxx11_abi ? "-cxx11" : "-cxx98";
  } else if (framework == Framework::kTorchStableAbi) {
    out = "torch-stable-abi" + std::to_string(framework_version.major) + std::to_string(framework_version.minor);
  } else {
    out = "tvm-ffi" + std::to_string(framework_version.major) + std::to_string(framework_version.minor);
  }
  return out + "-" + backend.to_token() + "-" + cpu + "-" + os;
}

}  // namespace kernelhub::resolver
