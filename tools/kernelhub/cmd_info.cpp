// kernelhub info ORG/NAME|DIR [--revision R | --version N] [--dep-tree] [--torch SPEC] [--json]:
// what a kernel is, as `kernels info` (kernels 0.19.1, cli/info.py) describes it: the variant that
// runs here and its metadata.json (name, version, minimum kernels version, license, upstream,
// source), every kernel it depends on (kernel-depends, recursively: kernelhub/fetch/internal/kernel_tree.hpp),
// the Python packages they all need and the backends the repo has builds for. Only the listings
// and the chosen variants' metadata.json are downloaded; nothing is loaded. A repo is described at
// its latest version unless --revision or --version says otherwise (`main` when it has none).
//
// --json prints kernels' object ({"repo_id", "revision"} or {"path"}, "variant", "name",
// "version", "kernels_minver", "license", "upstream", "source", "python_depends",
// "kernel_depends", "backends", and with --dep-tree "dependency_tree", nested {repo: {...}}) with
// the resolved "commit" added. Exit 0, 1 when the kernel or a dependency cannot be described
// (no variant runs here, a cycle, a missing repo), 2 on bad usage. With no torch, the variant is
// the one kernelhub loads without torch (selection_environment.hpp).
#include <cstdio>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>

#include "command.hpp"
#include "error_json.hpp"
#include "kernel_target.hpp"
#include "kernelhub/client/internal/hub_client.hpp"
#include "kernelhub/fetch/internal/kernel_tree.hpp"
#include "selection_environment.hpp"

namespace kernelhub::cli {

namespace {

struct InfoArguments {
  std::string target;  // ORG/NAME or DIR
  std::optional<std::string> revision;
  std::optional<int> version;
  SelectionFlags selection;
  bool dep_tree = false;
  bool json = false;
};

// The backends a kernel has builds for, by name, as kernels lists them (`cuda`, `cpu`, `universal`
// for torch-universal; sdk variants that name no backend and names that do not parse left out).
std::vector<std::string> backends_of(const std::vector<resolver::Decision>& decisions) {
  std::set<std::string> names;
  for (const auto& d : decisions) {
    if (!d.variant || d.variant->any_backend) continue;
    if (d.variant->is_noarch() && d.variant->noarch_backend) {
      names.insert(*d.variant->noarch_backend);  // cuda, ..., universal
    } else {
      names.insert(std::string(d.variant->backend.kind_name()));
    }
  }
  return {names.begin(), names.end()};
}

nlohmann::json optional_text(const std::optional<std::string>& text) {
  return text ? nlohmann::json(*text) : nlohmann::json(nullptr);
}

// The description of `tree`'s kernel in kernels' fields.
nlohmann::json describe(const KernelTree& tree, bool dep_tree) {
  const KernelTreeNode& root = tree.root();
  const Metadata& m = root.fetched.metadata;
  std::set<std::string> python_depends(m.python_depends.begin(), m.python_depends.end());
  std::set<std::string> kernel_depends;
  // {repo: {its dependencies}}, sorted by repo, for every path through the tree.
  std::function<nlohmann::json(const KernelTreeNode&)> visit = [&](const KernelTreeNode& node) {
    nlohmann::json out = nlohmann::json::object();
    for (std::size_t i : node.dependencies) {
      const KernelTreeNode& dependency = tree.nodes[i];
      kernel_depends.insert(dependency.name);
      python_depends.insert(dependency.fetched.metadata.python_depends.begin(),
                            dependency.fetched.metadata.python_depends.end());
      out[dependency.name] = visit(dependency);
    }
    return out;
  };
  nlohmann::json dependencies = visit(root);
  nlohmann::json info{
      {"variant", root.fetched.variant},
      {"commit", root.fetched.revision == "local" ? nlohmann::json(nullptr) : nlohmann::json(root.fetched.revision)},
      {"name", m.name},
      {"version", m.version ? nlohmann::json(*m.version) : nlohmann::json(nullptr)},
      {"kernels_minver", optional_text(m.kernels_minver)},
      {"license", m.license.empty() ? nlohmann::json(nullptr) : nlohmann::json(m.license)},
      {"upstream", optional_text(m.upstream)},
      {"source", optional_text(m.source)},
      {"python_depends", python_depends},
      {"kernel_depends", kernel_depends},
      {"backends", backends_of(root.fetched.decisions)}};
  if (dep_tree) info["dependency_tree"] = std::move(dependencies);
  return info;
}

// kernels' ASCII tree: "|-- a", "`-- b", nested with "|   " and "    ".
void print_tree(const nlohmann::json& tree, const std::string& prefix) {
  std::size_t index = 0;
  for (const auto& [repo, dependencies] : tree.items()) {
    const bool last = ++index == tree.size();
    std::printf("%s%s%s\n", prefix.c_str(), last ? "`-- " : "|-- ", printable(repo, Lines::kEscaped).c_str());
    print_tree(dependencies, prefix + (last ? "    " : "|   "));
  }
}

void print_human(const nlohmann::json& info) {
  // What metadata.json says is the publisher's text: printed as printable.hpp shows it.
  auto text = [&](const char* key) {
    const auto& value = info.at(key);
    if (value.is_null()) return std::string("-");
    return printable(value.is_string() ? value.get<std::string>() : value.dump(), Lines::kEscaped);
  };
  auto joined = [&](const char* key) {
    std::string out;
    for (const auto& item : info.at(key)) out += (out.empty() ? "" : ", ") + item.get<std::string>();
    return out.empty() ? std::string("-") : printable(out, Lines::kEscaped);
  };
  if (info.contains("repo_id")) {
    std::printf("Repository: %s\nRevision: %s\n", text("repo_id").c_str(), text("revision").c_str());
    std::printf("Commit: %s\n", text("commit").c_str());
  } else {
    std::printf("Path: %s\n", text("path").c_str());
  }
  std::printf("Variant: %s\n", text("variant").c_str());
  std::printf("Name: %s\n", text("name").c_str());
  std::printf("Version: %s\n", text("version").c_str());
  std::printf("Minimum kernels version: %s\n", text("kernels_minver").c_str());
  std::printf("License: %s\n", text("license").c_str());
  std::printf("Upstream: %s\n", text("upstream").c_str());
  std::printf("Source: %s\n", text("source").c_str());
  if (info.contains("dependency_tree")) {
    std::printf("Kernel dependencies:\n%s\n", text(info.contains("repo_id") ? "repo_id" : "path").c_str());
    print_tree(info.at("dependency_tree"), "");
  } else {
    std::printf("Kernel dependencies: %s\n", joined("kernel_depends").c_str());
  }
  std::printf("Python dependencies: %s\n", joined("python_depends").c_str());
  std::printf("Backends: %s\n", joined("backends").c_str());
}

int run_info(const InfoArguments& args, const CLI::App& app) {
  auto failed = [&](const Error& error) { return fail("kernelhub info", error, args.json); };
  auto target = kernel_target(args.target, args.revision || args.version);
  if (!target) return usage_error(app, target.error().message);
  const bool is_dir = target->dir.has_value();
  const auto& repo = target->repo;
  auto selection = selection_environment(process_environment(), args.selection);
  if (!selection) return failed(selection.error());
  say_torch_free("kernelhub info", *selection);

  FetchRequest request;
  request.loadable = selection->loadable;  // with a torch: what Python would load too
  request.trust_remote_code = true;        // nothing runs: describing a kernel needs no trust
  request.metadata_only = true;
  nlohmann::json source;
  if (is_dir) {
    request.source = std::filesystem::path(args.target);
    source = {{"path", args.target}};
  } else {
    request.source = *repo;
    request.revision = args.revision;
    request.version = args.version;
    if (!args.revision && !args.version) {  // as kernels: the latest version, else main
      auto settings = client::Settings::from_env(selection->env);
      if (!settings) return failed(settings.error());
      auto latest = latest_version(client::HubClient(*settings), *repo);
      if (!latest) return failed(latest.error());
      if (*latest) {
        request.version = *latest;
      } else {
        request.revision = "main";
      }
    }
    source = {{"repo_id", repo->to_string()},
              {"revision", request.version ? "v" + std::to_string(*request.version) : *request.revision}};
  }
  auto tree = fetch_kernel_tree(request, FetchContext{selection->environment, selection->env});
  if (!tree) return failed(tree.error());
  nlohmann::json info = describe(*tree, args.dep_tree);
  info.update(source);
  if (args.json) {
    std::printf("%s\n", info.dump(2).c_str());
  } else {
    print_human(info);
  }
  return kExitOk;
}

CommandRun define_info(CLI::App& app) {
  auto args = std::make_shared<InfoArguments>();
  app.description(
      "Describe a Hub kernel (or the kernel in DIR) as `kernels info` does: the variant that runs\n"
      "here, its metadata.json, the kernels it depends on (recursively) and the Python packages\n"
      "they need, and the backends it has builds for. Downloads only listings and metadata.json;\n"
      "loads nothing. The torch to select for: --torch, KERNELHUB_TORCH or the Python environment's;\n"
      "with none, the builds kernelhub loads without torch (tvm-ffi).");
  app.add_option("ORG/NAME|DIR", args->target, "a Hub kernel repo, or a local kernel directory")->required();
  auto* revision = app.add_option("--revision", args->revision,
                                  "a branch, tag or commit (default: the latest "
                                  "version, else main)")
                       ->option_text("R");
  auto* version =
      app.add_option("--version", args->version, "a version (branch vN)")->option_text("N")->transform(whole_number());
  revision->excludes(version);
  app.add_flag("--dep-tree", args->dep_tree,
               "show the kernel dependencies as a tree (with --json: \"dependency_tree\", nested objects)");
  add_selection_options(app, args->selection);
  app.add_flag("--json", args->json,
               "print one JSON object: kernels' fields (repo_id, revision or path, variant, name, version, "
               "kernels_minver, license, upstream, source, python_depends, kernel_depends, backends, "
               "dependency_tree) and the commit");
  return [args, &app] { return run_info(*args, app); };
}

}  // namespace

KERNELHUB_COMMAND("info", "describe a kernel: its variant here, metadata, dependencies and backends", &define_info);

}  // namespace kernelhub::cli
