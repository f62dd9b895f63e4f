/* Stand-ins for the Python C-API functions that kernel-builder op libraries import, so that
 * they load in a process without Python (see loader/internal/kernelhub/loader/internal/python_stub.hpp).
 * Only Python's import machinery would call these (through PyInit_*); if anything else ever
 * does, they fail the way the C API fails: NULL / -1, no side effects. The list matches
 * kKnownPythonStubSymbols in python_stub.cpp. */
#include <stddef.h>

#define KH_EXPORT __attribute__((visibility("default")))

KH_EXPORT void* PyModule_Create2(void* def, int api_version) { (void)def; (void)api_version; return NULL; }
KH_EXPORT void* PyModuleDef_Init(void* def) { (void)def; return NULL; }
KH_EXPORT void* PyModule_FromDefAndSpec2(void* def, void* spec, int v) { (void)def; (void)spec; (void)v; return NULL; }
KH_EXPORT int PyModule_AddObject(void* m, const char* n, void* o) { (void)m; (void)n; (void)o; return -1; }
KH_EXPORT int PyModule_AddObjectRef(void* m, const char* n, void* o) { (void)m; (void)n; (void)o; return -1; }
KH_EXPORT void PyErr_SetString(void* type, const char* message) { (void)type; (void)message; }
