// The fatbinary reader against what nvcc writes and cuobjdump reads: libraries built by
// tests/binary_format/CMakeLists.txt (kh_fatbin_case) for several arch sets, with and without
// compression. Each is compared to the targets its case asked nvcc for, and, when cuobjdump is
// there, to `cuobjdump --list-elf` / `--list-ptx` entry by entry.
//
// cuobjdump names: PTX as `sm_XY` (we say compute_XY); an `f` cubin without its `f` (`sm_100`,
// while its PTX is `sm_100f`) — so ELF names are compared with `f` dropped.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "kernelhub/binary_format/internal/fatbin.hpp"
#include "kernelhub/resolver/gpu_fit.hpp"
#include "kernelhub/resolver/reason.hpp"
#include "support/file_bytes.hpp"

namespace kernelhub::binary_format {
namespace {

struct FixtureCase {
  std::string name;
  std::filesystem::path library;
  std::set<std::string> expected;
  std::string compression;  // any, none, some
};

// Reads KERNELHUB_FATBIN_CASES; none when nvcc was not found (the file says why).
std::vector<FixtureCase> load_cases(std::string& skip_reason) {
  std::vector<FixtureCase> out;
  std::ifstream in(KERNELHUB_FATBIN_CASES);
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with("# skip: ")) skip_reason = line.substr(8);
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> fields;
    std::stringstream s(line);
    for (std::string f; std::getline(s, f, '|');) fields.push_back(f);
    REQUIRE(fields.size() == 4);
    FixtureCase c{fields[0], fields[1], {}, fields[3]};
    std::stringstream targets(fields[2]);
    for (std::string t; targets >> t;) c.expected.insert(t);
    out.push_back(std::move(c));
  }
  return out;
}

// cuobjdump from the build's configuration, else from PATH; empty when there is none.
std::string cuobjdump_path() {
  std::string configured = KERNELHUB_CUOBJDUMP;
  if (!configured.empty() && std::filesystem::exists(configured)) return configured;
  std::string found;
  if (FILE* p = ::popen("command -v cuobjdump 2>/dev/null", "r")) {
    char buf[4096];
    while (std::fgets(buf, sizeof buf, p) != nullptr) found += buf;
    ::pclose(p);
  }
  while (!found.empty() && (found.back() == '\n' || found.back() == '\r')) found.pop_back();
  return found;
}

// The names cuobjdump lists, in order: "ELF file    1: x.1.sm_90a.cubin" → "sm_90a".
std::vector<std::string> cuobjdump_list(const std::string& tool, const char* option, const std::filesystem::path& lib) {
  const std::string command = "'" + tool + "' " + option + " '" + lib.string() + "' 2>&1";
  std::string output;
  if (FILE* p = ::popen(command.c_str(), "r")) {
    char buf[4096];
    while (std::fgets(buf, sizeof buf, p) != nullptr) output += buf;
    ::pclose(p);
  }
  INFO(command << "\n" << output);
  std::vector<std::string> names;
  std::stringstream s(output);
  for (std::string line; std::getline(s, line);) {
    if (!line.starts_with("ELF file") && !line.starts_with("PTX file")) continue;
    const auto dot = line.rfind('.');
    const auto prev = line.rfind('.', dot - 1);
    REQUIRE(dot != std::string::npos);
    REQUIRE(prev != std::string::npos);
    names.push_back(line.substr(prev + 1, dot - prev - 1));
  }
  CHECK_THAT(output, !Catch::Contains("rror"));
  return names;
}

// Our entries named as cuobjdump names them.
std::vector<std::string> as_cuobjdump_names(const std::vector<FatbinEntry>& entries, resolver::CudaCodeKind kind) {
  std::vector<std::string> out;
  for (const auto& e : entries) {
    if (e.target.kind != kind) continue;
    std::string name = "sm_" + std::to_string(e.target.sm());
    if (e.target.suffix == resolver::CudaArchSuffix::kArchSpecific) name += 'a';
    if (e.target.suffix == resolver::CudaArchSuffix::kFamily && kind == resolver::CudaCodeKind::kPtx) name += 'f';
    out.push_back(name);
  }
  return out;
}

TEST_CASE("the fatbin reader agrees with nvcc's targets and with cuobjdump", "[nvcc]") {
  std::string skip_reason;
  const auto cases = load_cases(skip_reason);
  if (cases.empty()) {
    WARN("fatbinary cross-check skipped: " << (skip_reason.empty() ? "no fixture was built" : skip_reason));
    return;
  }
  const std::string tool = cuobjdump_path();
  if (tool.empty()) WARN("cuobjdump not found: comparing to the targets recorded at configure time only");
  for (const auto& c : cases) {
    INFO("case " << c.name << ": " << c.library.string());
    const auto entries = Fatbin::read(c.library);
    REQUIRE(entries.has_value());
    std::set<std::string> ours;
    for (const auto& e : *entries) ours.insert(e.target.to_string());
    CHECK(ours == c.expected);

    bool any_compressed = false;
    for (const auto& e : *entries) {
      any_compressed |= e.compressed;
      CHECK(e.size > 0);
      CHECK(e.uncompressed_size >= e.size);
      if (e.target.kind == resolver::CudaCodeKind::kPtx) {
        // nvcc writes its own PTX ISA: CUDA 13.0 → 9.0; the PTX ISA maps back to a CUDA release.
        REQUIRE(e.target.ptx_isa.has_value());
        CHECK(resolver::min_cuda_for_ptx_isa(*e.target.ptx_isa).has_value());
      }
    }
    if (c.compression == "none") CHECK_FALSE(any_compressed);
    if (c.compression == "some") CHECK(any_compressed);

    if (!tool.empty()) {
      CHECK(as_cuobjdump_names(*entries, resolver::CudaCodeKind::kSass) ==
            cuobjdump_list(tool, "--list-elf", c.library));
      CHECK(as_cuobjdump_names(*entries, resolver::CudaCodeKind::kPtx) ==
            cuobjdump_list(tool, "--list-ptx", c.library));
    }
  }
}

TEST_CASE("a real library's fatbin decides GPU fit", "[nvcc]") {
  std::string skip_reason;
  std::filesystem::path sm80_sm90;
  std::filesystem::path ptx_only;
  for (const auto& c : load_cases(skip_reason)) {
    if (c.name == "sm80_sm90") sm80_sm90 = c.library;
    if (c.name == "ptx_only") ptx_only = c.library;
  }
  if (sm80_sm90.empty() || ptx_only.empty()) {
    WARN("skipped: the nvcc fixtures were not built");
    return;
  }
  const auto code = targets_of(Fatbin::read(sm80_sm90).value());
  const auto on_120 = resolver::fit_gpus({code, {{12, 0}}, resolver::Version{13, 0}, resolver::Version{13, 0}});
  CHECK_FALSE(on_120.runs());
  CHECK(resolver::to_string(on_120) == "built for sm_80, sm_90; this GPU is sm_120 and no PTX is included");
  CHECK(resolver::fit_gpus({code, {{8, 9}}, resolver::Version{13, 0}, resolver::Version{13, 0}}).kind ==
        resolver::GpuFitKind::kCompatibleSass);

  // PTX ISA 9.0 from the bytes: JIT on a CUDA 13 driver, not on a 12.9 one.
  const auto ptx = targets_of(Fatbin::read(ptx_only).value());
  CHECK(resolver::fit_gpus({ptx, {{12, 0}}, resolver::Version{13, 0}, resolver::Version{13, 0}}).kind ==
        resolver::GpuFitKind::kPtxJit);
  CHECK(resolver::fit_gpus({ptx, {{12, 0}}, resolver::Version{12, 9}, std::nullopt}).kind ==
        resolver::GpuFitKind::kPtxNeedsNewerDriver);
}

TEST_CASE("a corrupted fatbin inside a real library is reported with its section", "[nvcc]") {
  std::string skip_reason;
  const auto cases = load_cases(skip_reason);
  if (cases.empty()) {
    WARN("skipped: the nvcc fixtures were not built");
    return;
  }
  std::string bytes = testing::read_bytes(cases.front().library);
  const std::string magic("\x50\xed\x55\xba", 4);
  const auto at = bytes.find(magic);
  REQUIRE(at != std::string::npos);
  REQUIRE(Fatbin::from_elf(bytes).has_value());
  bytes[at + 15] = '\x7f';  // the first fatbin now claims far more entry bytes than the section holds
  const auto r = Fatbin::from_elf(bytes);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == ErrorCode::kCorruptFile);
  CHECK_THAT(r.error().message, Catch::StartsWith("section `.nv_fatbin`: not a valid CUDA fatbinary"));
}

}  // namespace
}  // namespace kernelhub::binary_format
