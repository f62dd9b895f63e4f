# kernel-builder's build variant names (nix-builder/lib/variants/torch.nix), the names of the
# build/<variant>/ directories a Hub kernel repo holds:
#   torch<M><m>-cxx11-<backend>-<cpu>-linux     torch212-cxx11-cu126-x86_64-linux
#   torch<M><m>-<backend>-<cpu>-darwin          torch212-metal-aarch64-darwin (no C++ ABI tag)
#   torch-<backend>                             a backend the kernel has no compiled code for
#   tvm-ffi<M><m>-<backend>-<cpu>-<os>           tvm-ffi01-cu130-x86_64-linux (lib/variants/tvm-ffi.nix)
# Backend tokens: cpu, metal, tpu, cu<M><m>, rocm<M><m>, xpu<M><m> (the toolkit's major.minor:
# xpu 2025.3.2 is xpu20253).
let
  inherit (builtins) concatStringsSep elemAt filter isString length replaceStrings split;
  parts = s: filter isString (split "\\." s);
  majorMinor = s: let p = parts s; in if length p < 2 then p ++ [ "0" ] else [ (elemAt p 0) (elemAt p 1) ];
  flat = s: concatStringsSep "" (majorMinor s);
  cpuOf = system: elemAt (parts (replaceStrings [ "-" ] [ "." ] system)) 0;
  osOf = system: elemAt (parts (replaceStrings [ "-" ] [ "." ] system)) 1;
in
rec {
  backendToken = backend: version:
    if backend == "cpu" || backend == "metal" || backend == "tpu" then backend
    else if backend == "cuda" then "cu${flat version}"
    else if backend == "rocm" then "rocm${flat version}"
    else if backend == "xpu" then "xpu${flat version}"
    else throw "unknown backend `${backend}` (expected cpu, cuda, rocm, xpu, metal or tpu)";

  torchToken = torch: "torch${flat torch}";

  # A tvm-ffi kernel's variant: always an arch name (no torch-<backend> form), any backend but
  # cuda, rocm, xpu and metal named cpu, as kernel-builder's tvm-ffi.nix computes it.
  tvmFfiName = { backend, version, tvmFfi, ... }: system:
    let compute = if builtins.elem backend [ "cuda" "rocm" "xpu" "metal" ] then backendToken backend version else "cpu";
    in "tvm-ffi${flat tvmFfi}-${compute}-${system}";

  # One variant name for a matrix entry on one system; `compiled`: the kernel has code for its backend.
  name = { torch, backend, version, ... }: system: compiled:
    let
      os = osOf system;
      abi = if os == "linux" then [ "cxx11" ] else [ ];
    in
    if !compiled then "torch-${backend}"
    else concatStringsSep "-" ([ (torchToken torch) ] ++ abi ++ [ (backendToken backend version) (cpuOf system) os ]);
}
