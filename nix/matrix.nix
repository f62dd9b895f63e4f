# The reference kernels' build matrix, evaluated without network or nixpkgs:
#
#   nix-instantiate --eval --strict --json nix/matrix.nix -A names
#
# `backends` defaults to kernels/build.toml's [general] backends; pass another list to see the
# matrix of another kernel (--arg backends '["cpu"]'). Attributes:
#   variants  [{ name, torch, backend, version, system, bundle }], sorted by name
#   names     the variant names
#   bySystem  { <system> = [ names ]; }: what a builder of that system produces
{ buildToml ? ../kernels/build.toml
, backends ? (builtins.fromTOML (builtins.readFile buildToml)).general.backends
}:
let
  inherit (builtins) concatMap elem filter foldl' listToAttrs map sort;
  versions = import ./versions.nix;
  variantName = import ./variant-name.nix;
  wanted = filter (entry: elem entry.backend backends) versions;
  variants = sort (a: b: a.name < b.name) (concatMap
    (entry: map
      (system: {
        name = variantName.name entry system;
        inherit (entry) torch backend version bundle;
        inherit system;
      })
      entry.systems)
    wanted);
  systems = foldl' (acc: v: if elem v.system acc then acc else acc ++ [ v.system ]) [ ] variants;
in
{
  inherit variants;
  names = map (v: v.name) variants;
  bySystem = listToAttrs (map
    (system: {
      name = system;
      value = map (v: v.name) (filter (v: v.system == system) variants);
    })
    systems);
}
