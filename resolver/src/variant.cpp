#include "kernelhub/resolver/variant.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <vector>

namespace kernelhub::resolver {

namespace {

struct KindName {
  BackendKind kind;
  std::string_view name;
};
// Names as the `kernels` package spells them (backends.py `Backend.name`).
constexpr std::array<KindName, 8> kKindNames{{{BackendKind::kCpu, "cpu"},
                                              {BackendKind::kCuda, "cuda"},
                                              {BackendKind::kRocm, "rocm"},
                                              {BackendKind::kXpu, "xpu"},
                                              {BackendKind::kMetal, "metal"},
                                              {BackendKind::kCann, "cann"},
                                              {BackendKind::kNeuron, "neuron"},
                                              {BackendKind::kTpu, "tpu"}}};

// The most digits a version number may have: 999999999 fits an int, so nothing wraps around.
constexpr std::size_t kMaxDigits = 9;
// A directory name is at most NAME_MAX (255) bytes on Linux; no listing has a longer one.
constexpr std::size_t kMaxNameLength = 255;

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool starts_with_digit(std::string_view s) {
  return !s.empty() && s[0] >= '0' && s[0] <= '9';
}

// One number of a version, as a variant name writes it. Errors name `what` and say what is wrong:
// not digits, more than kMaxDigits of them, or a leading zero (which would not print back as read).
Result<int> read_number(std::string_view digits, std::string_view what) {
  const std::string quoted = "`" + std::string(digits.substr(0, 32)) + (digits.size() > 32 ? "...`" : "`");
  if (!all_digits(digits)) return unexpected(ErrorCode::kInvalidArgument, "bad " + std::string(what) + " " + quoted);
  if (digits.size() > kMaxDigits) {
    return unexpected(ErrorCode::kInvalidArgument, std::string(what) + " number " + quoted +
                                                       " is out of range (at most " + std::to_string(kMaxDigits) +
                                                       " digits)");
  }
  if (digits.size() > 1 && digits[0] == '0') {
    return unexpected(ErrorCode::kInvalidArgument,
                      std::string(what) + " number " + quoted +
                          " has a leading zero; kernel-builder writes numbers without one (2.10, not 2.010)");
  }
  int value = 0;
  std::from_chars(digits.data(), digits.data() + digits.size(), value);
  return value;
}

Result<Version> read_version(std::string_view major, std::string_view minor, std::string_view what) {
  KH_ASSIGN_OR_RETURN(int ma, read_number(major, what));
  KH_ASSIGN_OR_RETURN(int mi, read_number(minor, what));
  return Version{ma, mi};
}

// "12.8": regex (\d+)\.(\d+).
Result<Version> read_dotted(std::string_view text, std::string_view what) {
  const std::size_t dot = text.find('.');
  if (dot == std::string_view::npos || !all_digits(text.substr(0, dot)) || !all_digits(text.substr(dot + 1))) {
    return unexpected(ErrorCode::kInvalidArgument,
                      "bad " + std::string(what) + " version `" + std::string(text) + "`, expected M.m");
  }
  return read_version(text.substr(0, dot), text.substr(dot + 1), what);
}

// "128" → 12.8: regex (\d+)(\d+), whose greedy first group leaves the last digit to the minor.
Result<Version> read_packed_last_minor(std::string_view digits, std::string_view what) {
  if (digits.size() < 2 || !all_digits(digits)) {
    return unexpected(ErrorCode::kInvalidArgument, "bad " + std::string(what) + " version `" + std::string(digits) +
                                                       "`, expected digits such as 128 (12.8)");
  }
  return read_version(digits.substr(0, digits.size() - 1), digits.substr(digits.size() - 1), what);
}

// "215" → 2.15: regex (\d)(\d+) (and tvm-ffi's (\d+?)(\d+)), the major is the first digit.
Result<Version> read_packed_first_major(std::string_view digits, std::string_view what) {
  if (digits.size() < 2 || !all_digits(digits)) {
    return unexpected(ErrorCode::kInvalidArgument, "bad " + std::string(what) + " version `" + std::string(digits) +
                                                       "`, expected digits such as 215 (2.15)");
  }
  return read_version(digits.substr(0, 1), digits.substr(1), what);
}

std::string pack(const Version& v) {
  return std::to_string(v.major) + std::to_string(v.minor);
}

Unexpected bad_variant(std::string_view name, std::string_view why) {
  return unexpected(ErrorCode::kInvalidArgument,
                    "`" + std::string(name) + "` is not a build variant name: " + std::string(why));
}

using Parts = std::vector<std::string_view>;

Parts split_dash(std::string_view s) {
  Parts parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t dash = s.find('-', start);
    parts.push_back(s.substr(start, dash == std::string_view::npos ? std::string_view::npos : dash - start));
    if (dash == std::string_view::npos) break;
    start = dash + 1;
  }
  return parts;
}

std::string join(const Parts& parts, std::size_t from, std::size_t to) {
  std::string out;
  for (std::size_t i = from; i < to && i < parts.size(); ++i) {
    if (i > from) out += '-';
    out += parts[i];
  }
  return out;
}

std::optional<BackendKind> kind_named(std::string_view name) {
  for (const auto& [kind, kname] : kKindNames) {
    if (name == kname) return kind;
  }
  return std::nullopt;
}

}  // namespace

Result<Backend> Backend::parse_token(std::string_view token) {
  for (auto plain : {BackendKind::kCpu, BackendKind::kMetal, BackendKind::kNeuron, BackendKind::kTpu}) {
    if (token == Backend{plain, {}}.kind_name()) return Backend{plain, {}};
  }
  struct Prefix {
    std::string_view prefix;
    BackendKind kind;
  };
  // backends.py tries the prefixes in this order; `cu` first, so `cuda` is a bad CUDA token.
  for (auto [prefix, kind] : {Prefix{"cu", BackendKind::kCuda}, Prefix{"rocm", BackendKind::kRocm},
                              Prefix{"xpu", BackendKind::kXpu}, Prefix{"cann", BackendKind::kCann}}) {
    if (!token.starts_with(prefix)) continue;
    const std::string_view digits = token.substr(prefix.size());
    // ROCm 7.14 is the one two-digit minor of a legacy token (backends.py's rocm regex).
    if (kind == BackendKind::kRocm && digits == "714") return Backend{kind, Version{7, 14}};
    auto version = read_packed_last_minor(digits, Backend{kind, {}}.kind_name());
    if (!version) return unexpected(version.error());
    return Backend{kind, *version};
  }
  return unexpected(ErrorCode::kInvalidArgument, "unknown backend `" + std::string(token) + "`");
}

Result<Backend> Backend::parse_explicit(std::string_view name, std::optional<std::string_view> version) {
  const auto kind = kind_named(name);
  if (!kind) return unexpected(ErrorCode::kInvalidArgument, "unknown backend `" + std::string(name) + "`");
  Backend b{*kind, {}};
  if (b.versioned() != version.has_value()) {
    return unexpected(ErrorCode::kInvalidArgument,
                      b.versioned() ? "backend `" + std::string(name) + "` needs its version, e.g. cuda-12.8"
                                    : "backend `" + std::string(name) + "` takes no version");
  }
  if (!version) return b;
  KH_ASSIGN_OR_RETURN(b.version, read_dotted(*version, name));
  return b;
}

Result<Backend> Backend::parse_environment(std::string_view text) {
  for (const auto& [kind, name] : kKindNames) {
    if (!text.starts_with(name)) continue;
    const std::string_view rest = text.substr(name.size());
    const Backend plain{kind, {}};
    if (rest.empty() && !plain.versioned()) return plain;
    if (plain.versioned() && !rest.empty()) {
      auto v = Version::parse(rest);
      if (v) return Backend{kind, *v, release_text(rest) == v->to_string() ? "" : release_text(rest)};
    }
  }
  return unexpected(ErrorCode::kInvalidArgument,
                    "`" + std::string(text) +
                        "` is not a backend; expected cpu, cuda<M.m>, rocm<M.m>, xpu<YYYY.m>, cann<M.m>, "
                        "metal, neuron or tpu (e.g. cuda12.8)");
}

std::string_view Backend::kind_name() const {
  for (const auto& [k, name] : kKindNames) {
    if (k == kind) return name;
  }
  return "cpu";
}

std::string Backend::to_token() const {
  if (!versioned()) return std::string(kind_name());
  const std::string_view prefix = kind == BackendKind::kCuda ? "cu" : kind_name();
  return std::string(prefix) + pack(version.value_or(Version{}));
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

// `cpython-<M.m>-<abi3|abi3t>`: exactly these three parts (variants.py `Python.parse`).
Result<PythonAbi> parse_python(const Parts& parts) {
  if (parts.size() != 3) {
    return unexpected(ErrorCode::kInvalidArgument, "expected cpython-<M.m>-<abi3|abi3t> before <cpu>-<os>");
  }
  KH_ASSIGN_OR_RETURN(Version min, read_dotted(parts[1], "cpython"));
  if (parts[2] != "abi3" && parts[2] != "abi3t") {
    return unexpected(ErrorCode::kInvalidArgument,
                      "unknown Python ABI `" + std::string(parts[2]) + "`, expected abi3 or abi3t");
  }
  PythonAbi python{min, parts[2] == "abi3t"};
  if (python.abi3t && python.min < Version{3, 15}) {
    return unexpected(ErrorCode::kInvalidArgument,
                      "abi3t requires Python 3.15 or later, not " + python.min.to_string());
  }
  return python;
}

// The explicit form's tail after the framework: `[<backend>]-cpython-<M.m>-<abi>-<cpu>-<os>`
// (variants.py `_split_system`, then `_split_python`, then the backend from what is left).
Status parse_explicit_tail(const Parts& tail, Variant& v, bool backend_optional) {
  if (tail.size() < 2) return unexpected(ErrorCode::kInvalidArgument, "expected <cpu>-<os> at the end");
  v.compiled = true;
  v.cpu = std::string(tail[tail.size() - 2]);
  v.os = std::string(tail[tail.size() - 1]);
  const Parts rest(tail.begin(), tail.end() - 2);
  const auto marker = std::find(rest.begin(), rest.end(), std::string_view("cpython"));
  if (marker == rest.end()) {
    return unexpected(ErrorCode::kInvalidArgument,
                      "missing cpython-<M.m>-<abi3|abi3t> (the explicit form names the Python)");
  }
  KH_ASSIGN_OR_RETURN(v.python, parse_python(Parts(marker, rest.end())));
  const Parts backend(rest.begin(), marker);
  if (backend.empty()) {
    if (!backend_optional) return unexpected(ErrorCode::kInvalidArgument, "missing backend before cpython");
    v.any_backend = true;
    return {};
  }
  if (backend.size() > 2) {
    return unexpected(ErrorCode::kInvalidArgument,
                      "expected <backend>[-<M.m>] before cpython, not `" + join(backend, 0, backend.size()) + "`");
  }
  KH_ASSIGN_OR_RETURN(
      v.backend, Backend::parse_explicit(
                     backend[0], backend.size() == 2 ? std::optional<std::string_view>(backend[1]) : std::nullopt));
  return {};
}

// The legacy form's tail: `<token>-<cpu>-<os>`.
Status parse_legacy_tail(const Parts& tail, Variant& v) {
  if (tail.size() < 2) return unexpected(ErrorCode::kInvalidArgument, "expected <backend>-<cpu>-<os> at the end");
  if (tail.size() == 2) return unexpected(ErrorCode::kInvalidArgument, "missing backend before <cpu>-<os>");
  if (tail.size() != 3) {
    return unexpected(ErrorCode::kInvalidArgument,
                      "expected one backend token before <cpu>-<os>, not `" + join(tail, 0, tail.size() - 2) +
                          "` (an explicit-form name starts torch-<M.m>, torch-stable-abi-<M.m> or tvm-ffi-<M.m>)");
  }
  KH_ASSIGN_OR_RETURN(v.backend, Backend::parse_token(tail[0]));
  v.compiled = true;
  v.cpu = std::string(tail[1]);
  v.os = std::string(tail[2]);
  return {};
}

// variants.py `parse_sdk_variant`: sdk, sdk-<name>, sdk[-<backend>]-cpython-...-<cpu>-<os>.
Status parse_sdk(const Parts& parts, Variant& v) {
  v.framework = Framework::kSdk;
  v.form = NameForm::kExplicit;
  const Parts rest(parts.begin() + 1, parts.end());
  if (std::find(rest.begin(), rest.end(), std::string_view("cpython")) != rest.end()) {
    return parse_explicit_tail(rest, v, /*backend_optional=*/true);
  }
  if (rest.empty()) {
    v.any_backend = true;
    return {};
  }
  if (rest.size() != 1) {
    return unexpected(ErrorCode::kInvalidArgument,
                      "expected sdk, sdk-<backend name> or sdk[-<backend>]-cpython-<M.m>-<abi>-<cpu>-<os>");
  }
  v.noarch_backend = std::string(rest[0]);
  return {};
}

// The framework part and its length in parts, in the order variants.py `parse_variant` tries them.
Status parse_framework(std::string_view name, const Parts& parts, Variant& v, std::size_t& used) {
  const auto tag = [&](std::size_t at) {
    if (at < parts.size() && (parts[at] == "cxx11" || parts[at] == "cxx98")) {
      v.cxx11_abi = parts[at] == "cxx11";
      return true;
    }
    return false;
  };
  // The framework, its form, its length in parts and its version: `<M.m>` in the explicit form,
  // packed digits in the legacy one.
  const auto framework_at = [&](Framework framework, bool explicit_form, std::size_t length, std::string_view version,
                                std::string_view what) -> Status {
    v.framework = framework;
    v.form = explicit_form ? NameForm::kExplicit : NameForm::kLegacy;
    used = length;
    KH_ASSIGN_OR_RETURN(v.framework_version,
                        explicit_form ? read_dotted(version, what) : read_packed_first_major(version, what));
    return {};
  };
  if (name.starts_with("torch-stable-abi")) {
    const bool explicit_form = parts.size() > 3 && parts[2] == "abi";
    return framework_at(Framework::kTorchStableAbi, explicit_form, explicit_form ? 4 : 3,
                        explicit_form ? parts[3] : parts[2].substr(3), "stable-ABI");
  }
  if (parts[0] == "torch" && parts.size() >= 2 && starts_with_digit(parts[1])) {
    return framework_at(Framework::kTorch, true, tag(2) ? 3 : 2, parts[1], "torch");
  }
  if (parts[0].starts_with("torch") && parts[0] != "torch") {
    return framework_at(Framework::kTorch, false, tag(1) ? 2 : 1, parts[0].substr(5), "torch");
  }
  if (parts[0] == "tvm" && parts.size() >= 2 && parts[1].starts_with("ffi")) {
    const bool explicit_form = parts.size() > 2 && parts[1] == "ffi";
    return framework_at(Framework::kTvmFfi, explicit_form, explicit_form ? 3 : 2,
                        explicit_form ? parts[2] : parts[1].substr(3), "tvm-ffi");
  }
  return unexpected(ErrorCode::kInvalidArgument,
                    "unknown framework; expected it to start with torch, torch-stable-abi, tvm-ffi, mlx or sdk");
}

}  // namespace

Result<Variant> Variant::parse(std::string_view name) {
  if (name.size() > kMaxNameLength) {
    return bad_variant(std::string(name.substr(0, 32)) + "...",
                       "longer than " + std::to_string(kMaxNameLength) + " characters");
  }
  const Parts parts = split_dash(name);
  Variant v;
  const auto failed = [&](const Error& error) { return bad_variant(name, error.message); };
  if (parts[0] == "sdk") {
    if (Status s = parse_sdk(parts, v); !s) return failed(s.error());
    return v;
  }
  // Noarch: torch-<name> (unless torch-stable-abi... or torch-<digit>...), mlx-<name>; the name is
  // the rest of the string, dashes included. (`torch` alone is not one: the `kernels` package
  // reads it as `torch-` and then fetches a folder of that name.)
  const bool torch_noarch =
      parts[0] == "torch" && parts.size() >= 2 && !name.starts_with("torch-stable-abi") && !starts_with_digit(parts[1]);
  if (torch_noarch || (parts[0] == "mlx" && parts.size() >= 2 && !starts_with_digit(parts[1]))) {
    v.framework = torch_noarch ? Framework::kTorchNoarch : Framework::kMlxNoarch;
    v.form = NameForm::kExplicit;
    v.noarch_backend = join(parts, 1, parts.size());
    return v;
  }
  std::size_t used = 0;
  if (Status s = parse_framework(name, parts, v, used); !s) return failed(s.error());
  const Parts tail(parts.begin() + static_cast<std::ptrdiff_t>(std::min(used, parts.size())), parts.end());
  Status s = v.form == NameForm::kExplicit ? parse_explicit_tail(tail, v, /*backend_optional=*/false)
                                           : parse_legacy_tail(tail, v);
  if (!s) return failed(s.error());
  return v;
}

std::string Variant::to_string() const {
  const auto python_and_system = [&] {
    return "cpython-" + python.min.to_string() + (python.abi3t ? "-abi3t-" : "-abi3-") + cpu + "-" + os;
  };
  switch (framework) {
    case Framework::kTorchNoarch: return "torch-" + noarch_backend.value_or("");
    case Framework::kMlxNoarch: return "mlx-" + noarch_backend.value_or("");
    case Framework::kSdk: {
      if (noarch_backend) return "sdk-" + *noarch_backend;
      if (!compiled) return "sdk";
      return "sdk-" + (any_backend ? std::string() : backend.to_explicit() + "-") + python_and_system();
    }
    default: break;
  }
  const bool legacy = form == NameForm::kLegacy;
  const std::string version = legacy ? pack(framework_version) : "-" + framework_version.to_string();
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

bool Variant::same_build(const Variant& other) const {
  Variant a = *this;
  a.form = other.form;
  return a == other;
}

}  // namespace kernelhub::resolver
