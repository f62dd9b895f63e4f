// PROBE_LOAD(name, qualifiers): a 16-byte global load with PTX cache qualifiers, as a device function
// `Pack name(const void*)` returning the including probe's 16-byte `Pack` (adaln_probe.cu,
// rms128_probe.cu). volatile: the load stays where the probe wrote it.
#pragma once

#include <cuda_runtime.h>

#include <cstring>

#define PROBE_LOAD(name, qualifiers)                                      \
  __device__ __forceinline__ Pack name(const void* p) {                   \
    int4 v;                                                               \
    asm volatile("ld.global" qualifiers ".v4.s32 {%0, %1, %2, %3}, [%4];" \
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)             \
                 : "l"(p));                                               \
    static_assert(sizeof(Pack) == sizeof v);                              \
    Pack r;                                                               \
    std::memcpy(&r, &v, sizeof r);                                        \
    return r;                                                             \
  }
