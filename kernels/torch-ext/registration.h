// Registration macros in the shape kernel-builder generates (templates/torch/registration.h):
// macro-expanding wrappers so TORCH_EXTENSION_NAME can name the op namespace, and a PyInit_<ns>
// so that Python's import of the library (from _ops.py) runs the TORCH_LIBRARY initialisers.
// Built with the limited API (abi3), so one binary serves every Python >= 3.9.
#pragma once

#include <Python.h>
#include <torch/library.h>

#define KH_CONCAT_(A, B) A##B
#define KH_CONCAT(A, B) KH_CONCAT_(A, B)
#define KH_STRINGIFY_(A) #A
#define KH_STRINGIFY(A) KH_STRINGIFY_(A)

#define TORCH_LIBRARY_EXPAND(NAME, MODULE) TORCH_LIBRARY(NAME, MODULE)
#define TORCH_LIBRARY_IMPL_EXPAND(NAME, DEVICE, MODULE) TORCH_LIBRARY_IMPL(NAME, DEVICE, MODULE)

// An empty Python module: the ops live in torch.ops.<NAME>, not in the module.
#define REGISTER_EXTENSION(NAME)                                                        \
  PyMODINIT_FUNC KH_CONCAT(PyInit_, NAME)() {                                           \
    static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, KH_STRINGIFY(NAME), nullptr, 0, \
                                        nullptr, nullptr, nullptr, nullptr, nullptr};  \
    return PyModule_Create(&module);                                                    \
  }
