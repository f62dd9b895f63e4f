#include "kernelhub/loader/internal/op_library.hpp"

#include <torch/torch.h>

#include <catch2/catch.hpp>

#include "kernelhub/loader/internal/python_stub.hpp"

namespace kernelhub::loader {
namespace {

TEST_CASE("a -z now kernel-builder library loads without Python and its op runs through the dispatcher") {
  REQUIRE_FALSE(process_has_python());
  const auto lib = OpLibrary::open(KERNELHUB_BINDNOW_FIXTURE, "_kh_bindnow_cpu_fixture", map_environment({})).value();
  REQUIRE(lib->ops().size() == 1);
  CHECK(lib->ops()[0].name == "rms_norm");
  CHECK_THAT(lib->ops()[0].schema, Catch::StartsWith("_kh_bindnow_cpu_fixture::rms_norm(") &&
                                       Catch::EndsWith("out, Tensor input, Tensor? weight, float eps) -> ()"));

  auto op = c10::Dispatcher::singleton()
                .findSchemaOrThrow("_kh_bindnow_cpu_fixture::rms_norm", "")
                .typed<void(at::Tensor&, const at::Tensor&, const std::optional<at::Tensor>&, double)>();
  const auto x = torch::randn({3, 7}, torch::kFloat64);
  auto out = torch::full_like(x, std::numeric_limits<double>::quiet_NaN());
  op.call(out, x, std::nullopt, 1e-6);
  const auto ref = x * torch::rsqrt(x.pow(2).mean(-1, true) + 1e-6);
  CHECK(torch::allclose(out, ref, 1e-12, 1e-12));

  SECTION("opening it again returns the same library") {
    const auto again = OpLibrary::open(KERNELHUB_BINDNOW_FIXTURE, "_kh_bindnow_cpu_fixture", map_environment({}));
    CHECK(again.value().get() == lib.get());
  }
  SECTION("opening it under another namespace is an error, not a second load") {
    const auto wrong = OpLibrary::open(KERNELHUB_BINDNOW_FIXTURE, "_other_ns", map_environment({}));
    REQUIRE_FALSE(wrong.has_value());
    CHECK(wrong.error().code == ErrorCode::kLoadFailed);
  }
}

TEST_CASE("two kernels with the same op names in different namespaces coexist") {
  using RmsNorm = void(at::Tensor&, const at::Tensor&, const std::optional<at::Tensor>&, double);
  const auto first = OpLibrary::open(KERNELHUB_BINDNOW_FIXTURE, "_kh_bindnow_cpu_fixture", map_environment({})).value();
  const auto twin = OpLibrary::open(KERNELHUB_BINDNOW_TWIN, "_kh_bindnow_cpu_twin", map_environment({})).value();
  CHECK(first.get() != twin.get());
  REQUIRE(twin->ops().size() == 1);
  CHECK(twin->ops()[0].name == "rms_norm");
  CHECK(first->ops()[0].name == "rms_norm");
  const auto x = torch::randn({4, 9}, torch::kFloat64);
  const auto w = torch::randn({9}, torch::kFloat64);
  const auto ref = x * torch::rsqrt(x.pow(2).mean(-1, true) + 1e-6) * w;
  for (const char* name : {"_kh_bindnow_cpu_fixture::rms_norm", "_kh_bindnow_cpu_twin::rms_norm"}) {
    INFO(name);
    auto op = c10::Dispatcher::singleton().findSchemaOrThrow(name, "").typed<RmsNorm>();
    auto out = torch::full_like(x, std::numeric_limits<double>::quiet_NaN());
    op.call(out, x, w, 1e-6);
    CHECK(torch::allclose(out, ref, 1e-12, 1e-12));
  }
}

}  // namespace
}  // namespace kernelhub::loader
