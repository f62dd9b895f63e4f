# The build matrix: which torch versions are built with which backend toolkits, on which
# systems. Mirrors kernel-builder's nix-builder/versions.nix (shared/reference/hf-kernels.md §4.4,
# "current main": torch 2.12 and 2.13, the bundle set) plus the torch 2.15 line our CMake build
# produces locally. Plain data, no nixpkgs: `nix-instantiate --eval` reads it without network.
#
# Each entry is one torch version with one backend toolkit:
#   torch    "M.m"
#   backend  "cpu" | "cuda" | "rocm" | "xpu" | "metal"
#   version  toolkit version ("12.6", "7.1", "2025.3"); null for cpu and metal
#   systems  Nix systems it is built for
#   bundle   part of the compliance set (a kernel must ship all of these for a backend/arch pair)
let
  linux = [ "x86_64-linux" "aarch64-linux" ];
  cpuSystems = linux ++ [ "aarch64-darwin" ];
  torchLine = torch: xpu: [
    { inherit torch; backend = "cpu"; version = null; systems = cpuSystems; bundle = true; }
    { inherit torch; backend = "cuda"; version = "12.6"; systems = linux; bundle = true; }
    { inherit torch; backend = "cuda"; version = "13.0"; systems = linux; bundle = true; }
    { inherit torch; backend = "cuda"; version = "13.2"; systems = linux; bundle = true; }
    { inherit torch; backend = "rocm"; version = "7.1"; systems = [ "x86_64-linux" ]; bundle = true; }
    { inherit torch; backend = "rocm"; version = "7.2"; systems = [ "x86_64-linux" ]; bundle = true; }
    { inherit torch; backend = "xpu"; version = xpu; systems = [ "x86_64-linux" ]; bundle = true; }
    { inherit torch; backend = "metal"; version = null; systems = [ "aarch64-darwin" ]; bundle = true; }
  ];
in
torchLine "2.12" "2025.3"
++ torchLine "2.13" "2026.0"
++ [
  # Not in the bundle: the previous torch's CPU build, and the line `make` builds here.
  { torch = "2.11"; backend = "cpu"; version = null; systems = linux; bundle = false; }
  { torch = "2.15"; backend = "cpu"; version = null; systems = [ "x86_64-linux" ]; bundle = false; }
  { torch = "2.15"; backend = "cuda"; version = "13.0"; systems = [ "x86_64-linux" ]; bundle = false; }
]
