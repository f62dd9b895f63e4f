// Op schemas as text, without torch: what describe-api prints for C++ callers. The same mapping on
// a registered schema is checked against c10 in tests/kernelhub/kernel_builder_test.cpp.
#include "kernelhub/binary_format/internal/op_schema_text.hpp"

#include <catch2/catch.hpp>

namespace kernelhub::binary_format {
namespace {

std::string signature(std::string_view schema) {
  return cpp_signature_for(parse_op_schema(schema).value());
}

TEST_CASE("the reference kernels' schemas give the signatures Kernel::op<...> takes") {
  CHECK(signature("rms_norm(Tensor(a!) out, Tensor input, Tensor? weight, float eps) -> ()") ==
        "void(at::Tensor&, const at::Tensor&, const std::optional<at::Tensor>&, double)");
  CHECK(signature("_ns_cpu_abc::geglu(Tensor(a!) out, Tensor input, bool approximate_tanh, bool gate_first) -> ()") ==
        "void(at::Tensor&, const at::Tensor&, bool, bool)");
  CHECK(signature("ltx(Tensor(a!) q_out, Tensor(b!)? k_out, Tensor q, Tensor? k) -> ()") ==
        "void(at::Tensor&, const std::optional<at::Tensor>&, const at::Tensor&, const std::optional<at::Tensor>&)");
}

TEST_CASE("returns, lists, scalars, defaults, keyword-only arguments and overloads") {
  const auto parsed = parse_op_schema(
                          "ns::scale.out(Tensor x, SymInt[2] size, int[] dims=[0, 1], *, "
                          "Scalar s=1, str mode='a,b', ScalarType? dtype=None) -> (Tensor, Tensor[] parts)")
                          .value();
  CHECK(parsed.name == "scale.out");
  REQUIRE(parsed.arguments.size() == 6);
  CHECK(parsed.arguments[1].type == "SymInt[]");
  CHECK(parsed.arguments[4].name == "mode");
  CHECK(parsed.returns[1].name == "parts");
  CHECK(cpp_signature_for(parsed) ==
        "std::tuple<at::Tensor, std::vector<at::Tensor>>(const at::Tensor&, c10::SymIntArrayRef, at::IntArrayRef, "
        "const at::Scalar&, c10::string_view, std::optional<at::ScalarType>)");
  CHECK(signature("f(Tensor(a!) self) -> Tensor(a!)") == "at::Tensor&(at::Tensor&)");
  CHECK(signature("f(Tensor($0! -> ) self) -> ()") == "void(at::Tensor&)");  // c10's anonymous alias set
  CHECK(signature("f(float[] x, Tensor?[] y) -> int") ==
        "int64_t(at::ArrayRef<double>, at::ArrayRef<std::optional<at::Tensor>>)");
  CHECK(signature("f() -> str") == "std::string()");
}

TEST_CASE("what is not a schema is refused, saying why") {
  for (const char* bad : {"", "rms_norm", "f(Tensor x", "f(Tensor x) ->", "f(Tensor x) Tensor", "f(Tensor) -> ()",
                          "f(Tensor x y) -> ()", "f(,) -> ()", "b@d(Tensor x) -> ()", "f(Tensor(a! x) -> ()"}) {
    INFO(bad);
    const auto parsed = parse_op_schema(bad);
    REQUIRE_FALSE(parsed.has_value());
    CHECK(parsed.error().code == ErrorCode::kCorruptFile);
    CHECK_THAT(parsed.error().message, Catch::Contains("is not an op schema"));
  }
}

}  // namespace
}  // namespace kernelhub::binary_format
