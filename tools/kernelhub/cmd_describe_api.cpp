// kernelhub describe-api ORG/NAME|DIR [--revision R | --version N] [--trust-remote-code]
// [--torch SPEC] [--json]: a kernel's public functions and layers, as `kernels describe-api`
// (kernels 0.19.1, cli/describe_api.py) lists them, from the `build/<variant>/symbols.json` that
// kernel-builder writes (kernels/cmake/write_symbols.py writes ours) for the variant that runs here,
// without importing or loading anything. For C++ callers, each op of the kernel and the
// `kernel.op<...>("name")` signature to call it with, from the schemas in op_schemas.json when the
// variant has one (our builds do; kernel-builder's do not: `kernelhub get` lists them after loading).
//
// A repo is described at its latest version unless --revision or --version says otherwise. Only
// the listing, metadata.json and the two files are downloaded. --json prints symbols.json's object
// with kernels' "repo_id", "revision" (or "path") and "variant", plus "namespace" and "ops"
// ([{"name", "schema", "cpp_signature"}]) when known. Exit 0; 1 when there is no symbols.json, it
// is not schema_version 1, no variant runs here or the repo cannot be read; 2 on bad usage.
#include <cstdio>
#include <functional>
#include <nlohmann/json.hpp>

#include "command.hpp"
#include "error_json.hpp"
#include "kernel_target.hpp"
#include "kernelhub/base/internal/json_nesting.hpp"
#include "kernelhub/base/internal/read_file.hpp"
#include "kernelhub/binary_format/internal/op_schema_text.hpp"
#include "kernelhub/client/internal/hub_client.hpp"
#include "kernelhub/fetch/internal/fetch.hpp"
#include "selection_environment.hpp"

namespace kernelhub::cli {

namespace {

struct DescribeArguments {
  std::string target;
  std::optional<std::string> revision;
  std::optional<int> version;
  SelectionFlags selection;
  bool trust_remote_code = false;
  bool json = false;
};

// A file of the chosen variant, on disk: in the directory, or downloaded at the commit.
// nullopt when the variant has no such file.
using VariantFile = std::function<Result<std::optional<std::filesystem::path>>(const std::string& name)>;

Result<nlohmann::json> read_json(const std::filesystem::path& path) {
  KH_ASSIGN_OR_RETURN(const std::string body, read_file(path));
  if (!json_nesting_within(body, 32)) {
    return unexpected(ErrorCode::kCorruptFile, "`" + path.string() + "` is nested too deeply to be what it claims");
  }
  auto document = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded()) return unexpected(ErrorCode::kCorruptFile, "`" + path.string() + "` is not JSON");
  return document;
}

// symbols.json, checked as kernels checks it: schema_version 1, `functions` and `layers` lists of
// named objects, layer attributes booleans or null.
Result<nlohmann::json> read_symbols(const std::filesystem::path& path) {
  KH_ASSIGN_OR_RETURN(nlohmann::json symbols, read_json(path));
  const auto invalid = [&](const std::string& why) {
    return unexpected(ErrorCode::kCorruptFile, "Invalid symbols.json at " + path.string() + ": " + why);
  };
  if (!symbols.is_object() || symbols.value("schema_version", nlohmann::json()) != 1) {
    return unexpected(ErrorCode::kCorruptFile,
                      "Unsupported symbols.json schema at " + path.string() + "; expected schema_version 1");
  }
  for (const char* group : {"functions", "layers"}) {
    const auto found = symbols.find(group);
    if (found == symbols.end() || !found->is_array()) return invalid(std::string(group) + " must be a list");
    for (const auto& symbol : *found) {
      if (!symbol.is_object() || !symbol.contains("name") || !symbol["name"].is_string()) {
        return invalid(std::string(group) + " must be a list of named symbols");
      }
    }
  }
  for (const auto& layer : symbols["layers"]) {
    const auto attributes = layer.find("attributes");
    if (attributes == layer.end() || !attributes->is_object()) return invalid("layer attributes must be an object");
    for (const auto& [_, value] : attributes->items()) {
      if (!value.is_null() && !value.is_boolean()) return invalid("layer attributes must be booleans or null");
    }
  }
  return symbols;
}

// op_schemas.json's ops, each with the C++ signature for Kernel::op<...>(). An op whose schema
// does not parse keeps a null signature.
Result<nlohmann::json> read_ops(const std::filesystem::path& path, std::string& ns) {
  KH_ASSIGN_OR_RETURN(nlohmann::json document, read_json(path));
  if (!document.is_object() || !document.value("ops", nlohmann::json()).is_array()) {
    return unexpected(ErrorCode::kCorruptFile, "`" + path.string() + "` has no list of ops");
  }
  ns = document.value("namespace", std::string());
  nlohmann::json ops = nlohmann::json::array();
  for (const auto& op : document["ops"]) {
    if (!op.is_object() || !op.value("name", nlohmann::json()).is_string() ||
        !op.value("schema", nlohmann::json()).is_string()) {
      return unexpected(ErrorCode::kCorruptFile, "`" + path.string() + "`: each op needs a name and a schema");
    }
    auto parsed = binary_format::parse_op_schema(op["schema"].get<std::string>());
    ops.push_back({{"name", op["name"]},
                   {"schema", op["schema"]},
                   {"cpp_signature", parsed ? nlohmann::json(binary_format::cpp_signature_for(*parsed)) : nullptr}});
  }
  return ops;
}

void print_human(const nlohmann::json& info) {
  // Names from the kernel's files and its Hub: printed as printable.hpp shows them.
  const auto text = [](const nlohmann::json& value) { return printable(value.get<std::string>(), Lines::kEscaped); };
  if (info.contains("repo_id")) {
    std::printf("Repository: %s\nRevision: %s\n", text(info["repo_id"]).c_str(), text(info["revision"]).c_str());
  } else {
    std::printf("Path: %s\n", text(info["path"]).c_str());
  }
  std::printf("Variant: %s\n", text(info["variant"]).c_str());
  std::printf("\nFunctions:\n");
  for (const auto& function : info["functions"]) std::printf("  %s\n", text(function["name"]).c_str());
  if (info["functions"].empty()) std::printf("  (none)\n");
  std::printf("\nLayers:\n");
  for (const auto& layer : info["layers"]) {
    std::string flags;
    for (const char* name : {"has_backward", "can_torch_compile"}) {
      const auto& value = layer["attributes"].value(name, nlohmann::json());
      flags += std::string("  ") + name + "=" + (value.is_null() ? "unknown" : value.get<bool>() ? "True" : "False");
    }
    std::printf("  %s%s\n", text(layer["name"]).c_str(), flags.c_str());
  }
  if (info["layers"].empty()) std::printf("  (none)\n");
  if (!info.contains("ops")) return;
  std::printf("\nOps (torch.ops.%s), from C++ as kernel.op<Signature>(\"name\"):\n",
              printable(info.value("namespace", std::string()), Lines::kEscaped).c_str());
  for (const auto& op : info["ops"]) {
    const std::string name = text(op["name"]);
    std::printf("  %s\n", text(op["schema"]).c_str());
    if (op["cpp_signature"].is_string()) {
      std::printf("    kernel.op<%s>(\"%s\")\n", text(op["cpp_signature"]).c_str(), name.c_str());
    }
  }
  if (info["ops"].empty()) std::printf("  (none)\n");
}

int run_describe(const DescribeArguments& args, const CLI::App& app) {
  auto failed = [&](const Error& error) { return fail("kernelhub describe-api", error, args.json); };
  auto target = kernel_target(args.target, args.revision || args.version);
  if (!target) return usage_error(app, target.error().message);
  const bool is_dir = target->dir.has_value();
  auto selection = selection_environment(process_environment(), args.selection);
  if (!selection) return failed(selection.error());
  say_torch_free("kernelhub describe-api", *selection);
  auto settings = client::Settings::from_env(selection->env);
  if (!settings) return failed(settings.error());
  const client::HubClient hub(*settings);

  FetchRequest request;
  request.loadable = selection->loadable;  // with a torch: what Python would load too
  request.trust_remote_code = args.trust_remote_code;
  request.metadata_only = true;
  nlohmann::json source;
  std::string location;
  const auto& repo = target->repo;
  if (is_dir) {
    request.source = std::filesystem::path(args.target);
    source = {{"path", args.target}};
    location = args.target;
  } else {
    request.source = *repo;
    request.revision = args.revision;
    request.version = args.version;
    if (!args.revision && !args.version) {  // as kernels: the latest version
      auto latest = latest_version(hub, *repo);
      if (!latest) return failed(latest.error());
      if (!*latest) {
        return failed(Error{ErrorCode::kNotFound,
                            "No numbered versions found for " + repo->to_string() + ". Specify --revision explicitly.",
                            Missing::kVersion});
      }
      request.version = *latest;
    }
    const std::string revision = request.version ? "v" + std::to_string(*request.version) : *request.revision;
    source = {{"repo_id", repo->to_string()}, {"revision", revision}};
    location = repo->to_string() + (request.version ? " (version: " + std::to_string(*request.version) + ", " : " (") +
               "revision: " + revision + ")";
  }
  auto fetched = fetch_variant(request, FetchContext{selection->environment, selection->env});
  if (!fetched) return failed(fetched.error().with_context("Cannot resolve " + location));
  const VariantFile file = [&](const std::string& name) -> Result<std::optional<std::filesystem::path>> {
    if (is_dir) {
      const auto path = fetched->path / name;
      std::error_code missing;
      return std::filesystem::is_regular_file(path, missing) ? std::optional(path) : std::nullopt;
    }
    auto downloaded =
        hub.download_file(*repo, RepoType::kKernel, fetched->revision, "build/" + fetched->variant + "/" + name);
    if (!downloaded && downloaded.error().code == ErrorCode::kNotFound) return std::optional<std::filesystem::path>();
    if (!downloaded) return unexpected(downloaded.error());
    return std::optional(downloaded->path);
  };

  auto symbols_path = file("symbols.json");
  if (!symbols_path) return failed(symbols_path.error());
  if (!*symbols_path) {
    return failed(Error{ErrorCode::kNotFound,
                        "No symbols.json found in " + location + " (variant: " + fetched->variant +
                            "). Rebuild the kernel with a recent kernel-builder and the get_kernel check enabled.",
                        Missing::kFile});
  }
  auto symbols = read_symbols(**symbols_path);
  if (!symbols) return failed(symbols.error());
  nlohmann::json info = std::move(*symbols);
  info.update(source);
  info["variant"] = fetched->variant;
  auto ops_path = file("op_schemas.json");
  if (!ops_path) return failed(ops_path.error());
  if (*ops_path) {
    std::string ns;
    auto ops = read_ops(**ops_path, ns);
    if (!ops) return failed(ops.error());
    info["namespace"] = ns;
    info["ops"] = std::move(*ops);
  }
  if (args.json) {
    std::printf("%s\n", info.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  } else {
    print_human(info);
  }
  return kExitOk;
}

CommandRun define_describe_api(CLI::App& app) {
  auto args = std::make_shared<DescribeArguments>();
  app.description(
      "List a kernel's public functions and layers (and, for C++ callers, its ops and the\n"
      "kernel.op<...>() signature of each) from the symbols.json of the variant that runs here,\n"
      "without importing or loading anything, as `kernels describe-api` does. A repo is described\n"
      "at its latest version unless --revision or --version says otherwise.");
  app.add_option("ORG/NAME|DIR", args->target, "a Hub kernel repo, or a local kernel directory")->required();
  auto* revision = app.add_option("--revision", args->revision, "a branch, tag or commit (Hub only)")->option_text("R");
  auto* version = app.add_option("--version", args->version, "a version, branch vN (Hub only; default: the latest)")
                      ->option_text("N")
                      ->transform(whole_number());
  revision->excludes(version);
  app.add_flag("--trust-remote-code", args->trust_remote_code,
               "allow kernels from publishers the Hub does not mark as trusted (Hub only)");
  add_selection_options(app, args->selection);
  app.add_flag("--json", args->json,
               "print symbols.json's object with repo_id and revision (or path), variant, and the namespace and "
               "ops ([{\"name\", \"schema\", \"cpp_signature\"}]) when known");
  return [args, &app] { return run_describe(*args, app); };
}

}  // namespace

KERNELHUB_COMMAND("describe-api", "list a kernel's functions, layers and ops without loading it", &define_describe_api);

}  // namespace kernelhub::cli
