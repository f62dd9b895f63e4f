# kernel-builder's build variant names (shared/reference/hf-kernels.md §3, §4.4), the names of
# the build/<variant>/ directories a Hub kernel repo holds:
#   torch<M><m>-cxx11-<backend>-<cpu>-linux     torch212-cxx11-cu126-x86_64-linux
#   torch<M><m>-<backend>-<cpu>-darwin          torch212-metal-aarch64-darwin (no C++ ABI tag)
# Backend tokens: cpu, metal, cu<M><m>, rocm<M><m>, xpu<YYYY><m> (the minor is its last digit).
let
  inherit (builtins) concatStringsSep elemAt filter isString replaceStrings split;
  parts = s: filter isString (split "\\." s);
  flat = s: concatStringsSep "" (parts s);
  cpuOf = system: elemAt (parts (replaceStrings [ "-" ] [ "." ] system)) 0;
  osOf = system: elemAt (parts (replaceStrings [ "-" ] [ "." ] system)) 1;
in
rec {
  backendToken = backend: version:
    if backend == "cpu" || backend == "metal" then backend
    else if backend == "cuda" then "cu${flat version}"
    else if backend == "rocm" then "rocm${flat version}"
    else if backend == "xpu" then "xpu${flat version}"
    else throw "unknown backend `${backend}` (expected cpu, cuda, rocm, xpu or metal)";

  torchToken = torch: "torch${flat torch}";

  # One variant name for a matrix entry on one system.
  name = { torch, backend, version, ... }: system:
    let
      os = osOf system;
      abi = if os == "linux" then [ "cxx11" ] else [ ];
    in
    concatStringsSep "-" ([ (torchToken torch) ] ++ abi ++ [ (backendToken backend version) (cpuOf system) os ]);
}
