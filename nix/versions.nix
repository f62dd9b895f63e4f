# The build matrix: which torch versions are built with which backend toolkits, on which systems.
# A copy, in our schema, of kernel-builder's nix-builder/versions.nix at the commit flake.nix's
# kernel-builder input pins (huggingface/kernels 8ac69fc, 2026-08-20);
# tests/python/test_nix_matrix.py evaluates kernel-builder's own code and requires matrix.nix to
# give the same variants. Plain data, no nixpkgs: `nix-instantiate --eval` reads it offline.
#
# Not here: the variants our CMake build makes for the torch of its environment (torch 2.15 now),
# which this kernel-builder does not know; nix/README.md "Variants the Nix matrix does not build".
#
# Each entry is one torch version with one backend toolkit:
#   torch    "M.m"
#   backend  "cpu" | "cuda" | "rocm" | "xpu" | "metal" | "tpu"
#   version  toolkit version as kernel-builder gives it ("12.6", "7.1", "2025.3.2"); null for
#            cpu, metal and tpu (variant names use its major.minor)
#   systems  Nix systems it is built for
#   bundle   part of the compliance set (a kernel must ship all of these for a backend/arch pair)
#   tvmFfi   the tvm-ffi version a tvm-ffi kernel is built against with it ("0.1"), kernel-builder's
#            tvmFfiVersion; null where kernel-builder builds no tvm-ffi kernel
let
  linux = [ "x86_64-linux" "aarch64-linux" ];
  cpuSystems = [ "aarch64-darwin" ] ++ linux;
  # `tvm`: the backends of this torch line kernel-builder also builds tvm-ffi kernels with.
  torchLine = torch: xpu: tvm:
    let tvmFfi = backend: version: if builtins.elem (if version == null then backend else "${backend}-${version}") tvm then "0.1" else null;
    in [
      { inherit torch; backend = "cpu"; version = null; systems = cpuSystems; bundle = true; tvmFfi = tvmFfi "cpu" null; }
      { inherit torch; backend = "cuda"; version = "12.6"; systems = linux; bundle = true; tvmFfi = tvmFfi "cuda" "12.6"; }
      { inherit torch; backend = "cuda"; version = "13.0"; systems = linux; bundle = true; tvmFfi = tvmFfi "cuda" "13.0"; }
      { inherit torch; backend = "cuda"; version = "13.2"; systems = linux; bundle = true; tvmFfi = tvmFfi "cuda" "13.2"; }
      { inherit torch; backend = "metal"; version = null; systems = [ "aarch64-darwin" ]; bundle = true; tvmFfi = null; }
      { inherit torch; backend = "rocm"; version = "7.1"; systems = [ "x86_64-linux" ]; bundle = true; tvmFfi = null; }
      { inherit torch; backend = "rocm"; version = "7.2"; systems = [ "x86_64-linux" ]; bundle = true; tvmFfi = null; }
      { inherit torch; backend = "xpu"; version = xpu; systems = [ "x86_64-linux" ]; bundle = true; tvmFfi = tvmFfi "xpu" xpu; }
    ];
in
[
  # Not in the bundle: the previous torch's CPU build (x86_64 only), and TPU.
  { torch = "2.11"; backend = "cpu"; version = null; systems = [ "x86_64-linux" ]; bundle = false; tvmFfi = null; }
  { torch = "2.11"; backend = "tpu"; version = null; systems = [ "x86_64-linux" ]; bundle = false; tvmFfi = null; }
]
++ torchLine "2.12" "2025.3.2" [ "cpu" "cuda-12.6" "cuda-13.0" "cuda-13.2" "xpu-2025.3.2" ]
++ torchLine "2.13" "2026.0.0" [ "cuda-13.2" ]
