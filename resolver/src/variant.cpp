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

bool canonical_number(std::string_view digits) {
  return all_digits(digits) && digits.size() <= 9 && (digits.size() == 1 || digits[0] != '0');
}

// "12.8" in an explicit-form name: digits, a dot, digits, no leading zeros (so it prints back).
std::optional<Version> parse_dotted(std::string_view text) {
  const std::size_t dot = text.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const std::string_view major = text.substr(0, dot);
  const std::string_view minor = text.substr(dot + 1);
  if (!canonical_number(major) || !canonical_number(minor)) return std::nullopt;
  Version v;
  std::from_chars(major.data(), major.data() + major.size(), v.major);
  std::from_chars(minor.data(), minor.data() + minor.size(), v.minor);
  return v;
}

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
  // ROCm 7.14 is the one two-digit minor of a legacy token (backends.py's rocm regex).
  if (token == "rocm714") return Backend{BackendKind::kRocm, Version{7, 14}};
  for (auto [prefix, kind] : {Prefix{"cu", BackendKind::kCuda}, Prefix{"rocm", BackendKind::kRocm},
                              Prefix{"xpu", BackendKind::kXpu}, Prefix{"cann", BackendKind::kCann}}) {
    if (token.starts_with(prefix)) {
      if (auto v = split_packed_version(token.substr(prefix.size()))) return Backend{kind, *v};
    }
  }
  return unexpected(ErrorCode::kInvalidArgument, "unknown backend `" + std::string(token) + "`");
}

Result<Backend> Backend::parse_explicit(std::string_view name, std::optional<std::string_view> version) {
  for (const auto& [kind, kname] : kKindNames) {
    if (name != kname || kind == BackendKind::kNpu) continue;
    Backend b{kind, {}};
    if (b.versioned() != version.has_value()) {
      return unexpected(ErrorCode::kInvalidArgument, b.versioned() ? "backend `" + std::string(name) +
                                                                         "` needs its version, e.g. cuda-12.8"
                                                                   : "backend `" + std::string(name) +
                                                                         "` takes no version");
    }
    if (!version) return b;
    auto v = parse_dotted(*version);
    if (!v) {
      return unexpected(ErrorCode::kInvalidArgument,
                        "bad " + std::string(name) + " version `" + std::string(*version) + "`, expected M.m");
    }
    b.version = *v;
    return b;
  }
  return unexpected(ErrorCode::kInvalidArgument, "unknown backend `" + std::string(name) + "`");
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

std::string Backend::to_explicit() const {
  std::string out(kind_name());
  if (versioned()) out += "-" + version.value_or(Version{}).to_string();
  return out;
}

std::string Backend::to_environment() const {
  std::string out(kind_name());
  if (version) out += version->to_string();
  return out;
}

namespace {

// The noarch kinds: any backend but the legacy `npu` spelling of CANN, which stays readable.
std::optional<BackendKind> noarch_kind(std::string_view name) {
  for (const auto& [kind, kname] : kKindNames) {
    if (name == kname) return kind;
  }
  return std::nullopt;
}

// Reads `cpython-<M.m>-<abi3|abi3t>` at parts[at..at+3).
Result<PythonAbi> parse_python(std::string_view name, const std::vector<std::string_view>& parts, std::size_t at) {
  if (parts.size() < at + 3 || parts[at] != "cpython") return bad_variant(name, "expected cpython-<M.m>-<abi>");
  auto version = parse_dotted(parts[at + 1]);
  if (!version) return bad_variant(name, "bad cpython version `" + std::string(parts[at + 1]) + "`");
  if (parts[at + 2] != "abi3" && parts[at + 2] != "abi3t") {
    return bad_variant(name, "unknown Python ABI `" + std::string(parts[at + 2]) + "`, expected abi3 or abi3t");
  }
  PythonAbi python{*version, parts[at + 2] == "abi3t"};
  if (python.abi3t && python.min < Version{3, 15}) return bad_variant(name, "abi3t needs cpython-3.15 or later");
  return python;
}

// Reads `<cpu>-<os>`, the last two parts.
Status parse_system(std::string_view name, const std::vector<std::string_view>& parts, std::size_t at, Variant& v) {
  if (parts.size() != at + 2) return bad_variant(name, "expected <cpu>-<os> at the end");
  v.cpu = std::string(parts[at]);
  v.os = std::string(parts[at + 1]);
  if (!is_known_cpu(v.cpu)) return bad_variant(name, "unknown cpu `" + v.cpu + "`");
  if (!is_known_os(v.os)) return bad_variant(name, "unknown os `" + v.os + "`");
  return {};
}

// An explicit-form backend at parts[at...], before `cpython`: one part, or a name and its version.
Result<Backend> parse_explicit_backend(std::string_view name, const std::vector<std::string_view>& parts,
                                       std::size_t at, std::size_t end) {
  if (end == at) return bad_variant(name, "missing backend before cpython");
  if (end - at > 2) return bad_variant(name, "expected <backend>[-<M.m>] before cpython");
  auto backend =
      Backend::parse_explicit(parts[at], end - at == 2 ? std::optional<std::string_view>(parts[at + 1]) : std::nullopt);
  if (!backend) return bad_variant(name, backend.error().message);
  return *backend;
}

std::size_t find_part(const std::vector<std::string_view>& parts, std::string_view part, std::size_t from) {
  for (std::size_t i = from; i < parts.size(); ++i) {
    if (parts[i] == part) return i;
  }
  return parts.size();
}

// `<backend>-cpython-<M.m>-<abi>-<cpu>-<os>` from parts[at...], as explicit arch and sdk names end.
Status parse_explicit_tail(std::string_view name, const std::vector<std::string_view>& parts, std::size_t at,
                           Variant& v, bool backend_optional) {
  const std::size_t py = find_part(parts, "cpython", at);
  if (py == parts.size()) return bad_variant(name, "missing cpython-<M.m>-<abi> (the explicit form names the Python)");
  if (py == at && backend_optional) {
    v.any_backend = true;
  } else {
    KH_ASSIGN_OR_RETURN(v.backend, parse_explicit_backend(name, parts, at, py));
  }
  KH_ASSIGN_OR_RETURN(v.python, parse_python(name, parts, py));
  return parse_system(name, parts, py + 3, v);
}

Result<Variant> parse_sdk(std::string_view name, const std::vector<std::string_view>& parts) {
  Variant v;
  v.framework = Framework::kSdk;
  v.form = NameForm::kExplicit;
  if (parts.size() == 1) {
    v.any_backend = true;
    return v;
  }
  if (find_part(parts, "cpython", 1) == parts.size()) {
    if (parts.size() != 2) return bad_variant(name, "expected sdk-<backend kind> or sdk-...-cpython-...");
    auto kind = noarch_kind(parts[1]);
    if (!kind) return bad_variant(name, "unknown sdk backend `" + std::string(parts[1]) + "`");
    v.backend = Backend{*kind, {}};
    return v;
  }
  KH_RETURN_IF_ERROR(parse_explicit_tail(name, parts, 1, v, /*backend_optional=*/true));
  return v;
}

}  // namespace

Result<Variant> Variant::parse(std::string_view name) {
  if (name.size() > 128) return bad_variant(name.substr(0, 32), "longer than 128 characters");
  if (name == "torch-universal") {
    Variant v;
    v.framework = Framework::kTorchUniversal;
    return v;
  }

  const auto parts = split_dash(name);
  if (parts[0] == "sdk") return parse_sdk(name, parts);
  // torch-<kind> and mlx-<kind> noarch
  const bool torch_noarch = parts.size() == 2 && parts[0] == "torch" && !parts[1].starts_with("stable") &&
                            !parts[1].empty() && !std::isdigit(static_cast<unsigned char>(parts[1][0]));
  if (torch_noarch || (parts.size() == 2 && parts[0] == "mlx")) {
    auto kind = noarch_kind(parts[1]);
    if (!kind) return bad_variant(name, "unknown noarch backend `" + std::string(parts[1]) + "`");
    Variant v;
    v.framework = parts[0] == "mlx" ? Framework::kMlxNoarch : Framework::kTorchNoarch;
    v.backend = Backend{*kind, {}};
    return v;
  }

  Variant v;
  std::size_t next = 0;
  const auto read_cxx_tag = [&] {
    if (next < parts.size() && (parts[next] == "cxx11" || parts[next] == "cxx98")) {
      v.cxx11_abi = parts[next] == "cxx11";
      ++next;
    }
  };
  if (parts.size() >= 4 && parts[0] == "torch" && parts[1] == "stable" && parts[2] == "abi") {
    v.framework = Framework::kTorchStableAbi;
    v.form = NameForm::kExplicit;
    auto ver = parse_dotted(parts[3]);
    if (!ver) return bad_variant(name, "bad stable-ABI version `" + std::string(parts[3]) + "`");
    v.framework_version = *ver;
    next = 4;
  } else if (parts.size() >= 3 && parts[0] == "torch" && parts[1] == "stable" && parts[2].starts_with("abi")) {
    v.framework = Framework::kTorchStableAbi;
    auto ver = split_framework_version(parts[2].substr(3));
    if (!ver) return bad_variant(name, "bad stable-ABI version `" + std::string(parts[2]) + "`");
    v.framework_version = *ver;
    next = 3;
  } else if (parts.size() >= 3 && parts[0] == "tvm" && parts[1] == "ffi") {
    v.framework = Framework::kTvmFfi;
    v.form = NameForm::kExplicit;
    auto ver = parse_dotted(parts[2]);
    if (!ver) return bad_variant(name, "bad tvm-ffi version `" + std::string(parts[2]) + "`");
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
  } else if (parts.size() >= 2 && parts[0] == "torch") {
    v.framework = Framework::kTorch;
    v.form = NameForm::kExplicit;
    auto ver = parse_dotted(parts[1]);
    if (!ver) return bad_variant(name, "bad torch version `" + std::string(parts[1]) + "`");
    v.framework_version = *ver;
    next = 2;
    read_cxx_tag();
  } else if (!parts.empty() && parts[0].starts_with("torch")) {
    v.framework = Framework::kTorch;
    auto ver = split_framework_version(parts[0].substr(5));
    if (!ver) return bad_variant(name, "bad torch version `" + std::string(parts[0]) + "`");
    v.framework_version = *ver;
    next = 1;
    read_cxx_tag();
  } else {
    return bad_variant(name, "expected it to start with torch, torch-stable-abi, tvm-ffi, mlx or sdk");
  }

  if (v.form == NameForm::kExplicit) {
    KH_RETURN_IF_ERROR(parse_explicit_tail(name, parts, next, v, /*backend_optional=*/false));
    return v;
  }
  if (parts.size() - next != 3) return bad_variant(name, "expected <backend>-<cpu>-<os> after the framework");
  auto backend = Backend::parse_token(parts[next]);
  if (!backend) return bad_variant(name, backend.error().message);
  v.backend = *backend;
  KH_RETURN_IF_ERROR(parse_system(name, parts, next + 1, v));
  return v;
}

std::string Variant::to_string() const {
  const auto python_and_system = [&] {
    return "cpython-" + python.min.to_string() + (python.abi3t ? "-abi3t-" : "-abi3-") + cpu + "-" + os;
  };
  switch (framework) {
    case Framework::kTorchUniversal: return "torch-universal";
    case Framework::kTorchNoarch: return "torch-" + std::string(backend.kind_name());
    case Framework::kMlxNoarch: return "mlx-" + std::string(backend.kind_name());
    case Framework::kSdk: {
      std::string out = "sdk";
      if (!is_compiled_sdk()) return any_backend ? out : out + "-" + std::string(backend.kind_name());
      if (!any_backend) out += "-" + backend.to_explicit();
      return out + "-" + python_and_system();
    }
    default: break;
  }
  const bool legacy = form == NameForm::kLegacy;
  const std::string version =
      legacy ? pack(framework_version) : "-" + framework_version.to_string();
  std::string out;
  if (framework == Framework::kTorch) {
    out = "torch" + version;
    if (cxx11_abi) out += *cxx11_abi ? "-cxx11" : "-cxx98";
  } else if (framework == Framework::kTorchStableAbi) {
    out = "torch-stable-abi" + version;
  } else {
    out = "tvm-ffi" + version;
  }
  if (legacy) return out + "-" + backend.to_token() + "-" + cpu + "-" + os;
  return out + "-" + backend.to_explicit() + "-" + python_and_system();
}

}  // namespace kernelhub::resolver
