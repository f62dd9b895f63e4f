#include "kernelhub/base/environment_variables.hpp"

#include <algorithm>
#include <array>

#include "kernelhub/base/internal/clock.hpp"

namespace kernelhub {

namespace {

using namespace env_vars;

constexpr std::array kTable = {
    // The Hugging Face cache and Hub, with huggingface_hub's fallback chains and truthy set
    // (1, ON, YES, TRUE in any case).
    EnvironmentVariable{kHfHome, "root of all Hugging Face state (the cache, the token file)",
                        "$XDG_CACHE_HOME/huggingface, else ~/.cache/huggingface", "client, python"},
    EnvironmentVariable{kXdgCacheHome, "where HF_HOME is when it is unset", "~/.cache", "client"},
    EnvironmentVariable{kHome,
                        "`~` in any path variable; the default of HF_HOME, the state and config folders and the "
                        "Python user site-packages",
                        "none (`~` is `/`)", "client, resolver, fetch, signing"},
    EnvironmentVariable{kHfHubCache, "the Hugging Face hub cache", "$HUGGINGFACE_HUB_CACHE, else $HF_HOME/hub",
                        "client, python"},
    EnvironmentVariable{kHuggingfaceHubCache, "the hub cache, legacy spelling of HF_HUB_CACHE", "$HF_HOME/hub",
                        "client"},
    EnvironmentVariable{kKernelsCache, "the kernels package's cache for kernel repos only", "the hub cache",
                        "client, python"},
    EnvironmentVariable{kHfEndpoint, "the Hub's URL (http or https; a trailing `/` is dropped)",
                        "https://huggingface.co", "client"},
    EnvironmentVariable{kHfToken, "the Hub token", "$HUGGING_FACE_HUB_TOKEN, else the file $HF_TOKEN_PATH", "client",
                        true},
    EnvironmentVariable{kHuggingFaceHubToken, "the Hub token, legacy spelling of HF_TOKEN", "the file $HF_TOKEN_PATH",
                        "client", true},
    EnvironmentVariable{kHfTokenPath, "the file holding the Hub token", "$HF_HOME/token", "client"},
    EnvironmentVariable{kHfHubDisableImplicitToken, "truthy: send no token at all, from any of the three", "off",
                        "client"},
    EnvironmentVariable{kHfHubOffline, "truthy: no request at all; everything from the cache", "off", "client"},
    EnvironmentVariable{kTransformersOffline, "truthy: as HF_HUB_OFFLINE (legacy spelling)", "off", "client"},
    EnvironmentVariable{kHfHubDisableTelemetry, "truthy: the user agent names no os, arch or version", "off", "client"},
    EnvironmentVariable{kDisableTelemetry, "truthy: as HF_HUB_DISABLE_TELEMETRY", "off", "client"},
    EnvironmentVariable{kDoNotTrack, "truthy: as HF_HUB_DISABLE_TELEMETRY", "off", "client"},
    EnvironmentVariable{kHfHubEtagTimeout, "seconds a metadata or API request may take", "10", "client"},
    EnvironmentVariable{kHfHubDownloadTimeout, "seconds a download may go without a byte", "10", "client"},
    EnvironmentVariable{kHfHubUserAgentOrigin, "appended to the user agent as `origin/<value>`", "none", "client"},
    EnvironmentVariable{kKernelhubMaxParallel, "files downloaded at once (1 to 256)", "8", "client"},
    EnvironmentVariable{kKernelhubConnectTimeout, "seconds to connect to the Hub", "10", "client"},
    EnvironmentVariable{kKernelhubFsync, "fdatasync each blob before it becomes visible (0, off, no, false: don't)",
                        "on", "client"},
    EnvironmentVariable{kKernelhubHashThreads, "threads hashing downloads beside the transfer (0 to 64; 0: inline)",
                        "half the cores, at most 4; none below 4 cores", "client"},
    EnvironmentVariable{kKernelhubTransferThreads, "threads running downloads (1 to 64)",
                        "a quarter of the cores, at most 4; 1 below 8 cores", "client"},

    // What is loaded and trusted.
    EnvironmentVariable{kLocalKernels,
                        "`org/name=DIR` entries separated by `:`: those repos load from DIR instead of the Hub", "none",
                        "fetch, python"},
    EnvironmentVariable{kUnstableKernelsAllLatest,
                        "truthy: every kernel loads at its repo's highest `v<N>`, whatever the call names", "off",
                        "fetch, python"},
    EnvironmentVariable{kKernelhubTrusted,
                        "orgs and repo ids separated by `,` trusted as publishers without the Hub's flag", "none",
                        "fetch"},
    EnvironmentVariable{kKernelhubStateDir,
                        "where one process keeps what the next reuses (never in the cache): verification stamps, "
                        "signature records, this boot's GPUs",
                        "$XDG_STATE_HOME/kernelhub, else ~/.local/state/kernelhub", "fetch, resolver"},
    EnvironmentVariable{kXdgStateHome, "the default of KERNELHUB_STATE_DIR and of the signature serial store",
                        "~/.local/state", "fetch, resolver, signing"},
    EnvironmentVariable{kKernelhubTrustedKeys,
                        "`scope=key` entries separated by `,` (scope: org or org/name; key: base64 or a file)",
                        "none (the trusted_keys file only)", "signing"},
    EnvironmentVariable{kKernelhubRequireSignature,
                        "truthy: refuse a variant whose signature no configured signer (or the kernels package's "
                        "default policy) accepts, or that has none",
                        "off (warn, as the kernels package does)", "fetch, signing"},
    EnvironmentVariable{kKernelhubSigners,
                        "the signers file: who may sign the kernels of an org or repo (`[[signer]]` tables with "
                        "`scope` and an identity or `public-key`; docs/SIGNING.md)",
                        "$XDG_CONFIG_HOME/kernelhub/signers.toml", "fetch"},
    EnvironmentVariable{kXdgConfigHome,
                        "where the trusted_keys and signers.toml files are: $XDG_CONFIG_HOME/kernelhub/", "~/.config",
                        "fetch, signing"},
    EnvironmentVariable{kKernelhubSigstoreTrustedRoot,
                        "a Sigstore `trusted_root.json` to verify bundles against instead of the embedded public-good "
                        "one",
                        "the public-good root embedded in the library (sigstore/data/)", "sigstore"},

    // The machine, as variant selection sees it: each overrides what is detected.
    EnvironmentVariable{kKernelhubOs, "the os", "uname", "resolver"},
    EnvironmentVariable{kKernelhubCpu, "the cpu (x86_64, aarch64; AMD64 means x86_64)", "uname", "resolver"},
    EnvironmentVariable{kKernelhubGlibc, "the glibc version, MAJOR.MINOR", "this process's glibc", "resolver"},
    EnvironmentVariable{kKernelhubTorch,
                        "the torch: 2.13, or torch's full version (2.13.0+cu130, which names the target machine's "
                        "backend)",
                        "the LibTorch of the process; without one, the Python environment's torch", "resolver, tools"},
    EnvironmentVariable{kKernelhubCxx11Abi, "torch's C++ ABI: 0 or 1", "torch's", "resolver"},
    EnvironmentVariable{kKernelhubBackend, "the backend selected: cpu, cuda12.8, rocm7.1, xpu2025.3, metal, ...",
                        "torch's backend; cpu for a CUDA torch without a driver", "resolver, tvm_ffi, python"},
    EnvironmentVariable{kKernelhubCudaDriver, "the CUDA driver version, MAJOR.MINOR (none: no driver)",
                        "the driver's (libcuda.so.1)", "resolver"},
    EnvironmentVariable{kKernelhubGpus, "the GPUs' compute capabilities separated by `,`, e.g. 9.0,8.0",
                        "the GPUs CUDA sees (asked once per boot, then kept in KERNELHUB_STATE_DIR)", "resolver"},
    EnvironmentVariable{kKernelhubPython, "the Python: 3.12, or 3.13t for a free-threaded build",
                        "the interpreter's; the CLI: the Python environment's; C++: none", "resolver, tools"},
    EnvironmentVariable{kKernelhubTvmFfi, "the tvm-ffi version, MAJOR.MINOR",
                        "the loaded TVM-FFI runtime's, else the Python environment's", "resolver, tvm_ffi, tools"},
    EnvironmentVariable{kKernelhubMlx, "whether MLX is there: 0 or 1", "the Python environment's", "resolver"},
    EnvironmentVariable{kKernelhubMacos, "the macOS version, MAJOR.MINOR", "none", "resolver"},
    EnvironmentVariable{kCudaVisibleDevices, "the GPUs CUDA sees, read as CUDA reads it (indices or UUIDs)",
                        "every GPU", "resolver"},

    // The Python environment a process without Python or LibTorch selects for.
    EnvironmentVariable{kVirtualEnv, "the Python environment whose torch and Python are selected for",
                        "python3 on PATH", "resolver"},
    EnvironmentVariable{kPath, "where python3 is looked for when VIRTUAL_ENV is unset", "none", "resolver"},
    EnvironmentVariable{kPythonNoUserSite, "set: that Python's user site-packages are not looked in", "unset",
                        "resolver"},

    // Loading.
    EnvironmentVariable{kLdLibraryPath,
                        "where the pre-flight looks for a library's NEEDED libraries, after its RUNPATH", "none",
                        "loader"},
    EnvironmentVariable{kKernelhubTvmFfiLibrary, "the libtvm_ffi.so to load",
                        "one already loaded, else the one the program was built with (its RUNPATH), else the "
                        "Python environment's apache-tvm-ffi, else the library path",
                        "tvm_ffi_loader"},

    // The Python package.
    EnvironmentVariable{kHfHubDisableProgressBars, "truthy: no download progress bars", "off", "python"},

    // Test seams: what lets a test move time instead of waiting for it. Never set outside tests.
    EnvironmentVariable{kKernelhubTestClockAheadS,
                        "test seam: this process's clock reads this many seconds ahead (0 to 86400), so files "
                        "written by an earlier process are as old as if the test had waited",
                        "0 (the real clock)", "client, fetch"},
};

// Names are the table's key: each once.
constexpr bool names_are_unique() {
  for (std::size_t i = 0; i < kTable.size(); ++i) {
    for (std::size_t j = i + 1; j < kTable.size(); ++j) {
      if (kTable[i].name == kTable[j].name) return false;
    }
  }
  return true;
}
static_assert(names_are_unique(), "an environment variable is listed twice");
static_assert(std::all_of(kTable.begin(), kTable.end(),
                          [](const EnvironmentVariable& v) {
                            return !v.name.empty() && !v.meaning.empty() && !v.default_value.empty() &&
                                   !v.read_by.empty();
                          }),
              "every environment variable says what it means, its default and what reads it");

}  // namespace

std::span<const EnvironmentVariable> environment_variables() {
  return kTable;
}

const EnvironmentVariable* find_environment_variable(std::string_view name) {
  const auto it =
      std::find_if(kTable.begin(), kTable.end(), [&](const EnvironmentVariable& v) { return v.name == name; });
  return it == kTable.end() ? nullptr : &*it;
}

}  // namespace kernelhub
