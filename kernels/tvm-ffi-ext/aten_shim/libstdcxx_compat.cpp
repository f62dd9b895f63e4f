// Keeps the tvm-ffi libraries' libstdc++ needs to what GCC 9's provides (GLIBCXX_3.4.26, which
// TVM-FFI's headers need for std::ostringstream's default constructor): GCC 11+'s allocators call
// std::__throw_bad_array_new_length, a GLIBCXX_3.4.29 symbol; this hidden definition, in each kernel
// library of its own, throws the same exception without it. (The C++ standard is 17 for the same
// reason: C++20's std::stringbuf::str() const& is GLIBCXX_3.4.29 too.)
#include <new>

namespace std {
__attribute__((visibility("hidden"), noreturn)) void __throw_bad_array_new_length() {
  throw bad_array_new_length();
}
}  // namespace std
