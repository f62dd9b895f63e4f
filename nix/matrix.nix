# The reference kernels' Nix build matrix: the variants kernel-builder's Nix build makes for a
# kernel, evaluated without network or nixpkgs:
#
#   nix-instantiate --eval --strict --json nix/matrix.nix -A names
#
# It applies kernel-builder's rules (nix-builder/lib/build.nix filterApplicableBuildSets,
# lib/variants/torch.nix) to versions.nix: the backends of build.toml [general] backends, torch
# within [torch] minver/maxver, CUDA within [general.cuda] minver/maxver, and `torch-<backend>`
# for a backend without a [kernel.*] section; for a tvm-ffi kernel ([tvm-ffi], as
# kernels/tvm-ffi/build.toml), the entries kernel-builder builds tvm-ffi kernels with (tvmFfiVersion),
# named tvm-ffi<M><m>-<backend>-<system> (lib/variants/tvm-ffi.nix). The stable-ABI rules are not
# mirrored, and such a build.toml is refused. test_nix_matrix.py requires the result to equal what
# kernel-builder's own code answers.
#
# `buildToml` defaults to kernels/build.toml; `backends` to its [general] backends (pass another
# list to see the matrix of other backends: --arg backends '["cpu"]'). Attributes:
#   variants  [{ name, torch, backend, version, system, bundle }], sorted by name
#   names     the variant names, each once
#   bySystem  { <system> = [ names ]; }: what a builder of that system produces
{ buildToml ? ../kernels/build.toml
, toml ? builtins.fromTOML (builtins.readFile buildToml)
, backends ? toml.general.backends
}:
let
  inherit (builtins) any attrValues compareVersions concatMap elem filter foldl' listToAttrs map sort;
  versions = import ./versions.nix;
  variantName = import ./variant-name.nix;
  refuse = why: throw "nix/matrix.nix mirrors kernel-builder for torch arch kernels; this build.toml ${why}";
  isTvmFfi = toml ? tvm-ffi;
  checked = if (toml.torch or { }) ? stable-abi then refuse "uses the torch stable ABI" else toml;
  between = min: max: v: compareVersions v min >= 0 && compareVersions v max <= 0;
  torchOk = between (checked.torch.minver or "2.0") (checked.torch.maxver or "99.9");
  cudaOk = between (checked.general.cuda.minver or "11.8") (checked.general.cuda.maxver or "99.9");
  compiled = backend: any (kernel: kernel.backend == backend) (attrValues (checked.kernel or { }));
  wanted = filter
    (entry: elem entry.backend backends && torchOk entry.torch && (entry.backend != "cuda" || cudaOk entry.version)
      && (!isTvmFfi || entry.tvmFfi != null))
    versions;
  unique = foldl' (acc: x: if elem x acc then acc else acc ++ [ x ]) [ ];
  variants = sort (a: b: a.name < b.name) (concatMap
    (entry: map
      (system: {
        name = if isTvmFfi then variantName.tvmFfiName entry system
               else variantName.name entry system (compiled entry.backend);
        inherit (entry) torch backend version bundle;
        inherit system;
      })
      entry.systems)
    wanted);
  systems = unique (map (v: v.system) variants);
in
{
  inherit variants;
  names = unique (map (v: v.name) variants);
  bySystem = listToAttrs (map
    (system: {
      name = system;
      value = unique (map (v: v.name) (filter (v: v.system == system) variants));
    })
    systems);
}
