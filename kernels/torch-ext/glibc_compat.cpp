// The stand-in for glibc 2.32's `__libc_single_threaded` (see kernels/CMakeLists.txt): libstdc++
// reads it, under a macro-renamed name, to decide whether reference counts need atomics. Zero means
// "other threads may exist", which is always safe. Hidden: each kernel library has its own.
extern "C" {
__attribute__((visibility("hidden"))) char kh_libc_single_threaded = 0;
}
