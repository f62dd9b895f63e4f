# kernelhub's flake: the reference kernels' full build matrix through kernel-builder's flake
# library, our C++ tools, and apps to copy the built variants and publish them with hub-publish.
#
#   nix build .#bundle                      every variant of the matrix (kernel-builder's bundle)
#   (cd kernels && nix run ..#build-and-copy)   ... copied into kernels/build/<variant>/
#   nix build .#tvm-ffi-bundle              the tvm-ffi variants (kernels/tvm-ffi, kernel-builder's own project)
#   nix run .#publish -- --version 1        hub-publish kernels/build to [general.hub] repo-id
#   nix build .#kernelhub                   our CLI, hub-publish and libraries
#
# The matrix (torch × backend × system) is kernel-builder's: genKernelFlakeOutputs builds it, and
# nix/matrix.nix (exported as lib.matrix) is a plain-Nix copy that `make test` evaluates without
# network and compares with kernel-builder's own answer. The variants `make build` makes with
# CMake for the torch of its environment (torch215 now) are local builds, not part of this
# matrix. nix/README.md says what needs network and how to run it.
{
  description = "kernelhub: C++ Kernel Hub client, reference kernels and hub-publish";

  nixConfig = {
    extra-substituters = [ "https://huggingface.cachix.org" ];
    extra-trusted-public-keys = [
      "huggingface.cachix.org-1:ynTPbLS0W8ofXd9fDjk1KvoFky9K2jhxe6r4nXAkc/o="
    ];
  };

  inputs = {
    kernel-builder.url = "github:huggingface/kernels";
    nixpkgs.follows = "kernel-builder/nixpkgs";
    flake-utils.url = "github:numtide/flake-utils";
  };

  outputs = { self, kernel-builder, nixpkgs, flake-utils, ... }:
    let
      # The reference kernels are a kernel-builder project in ./kernels (build.toml edition 5).
      kernelOutputs = kernel-builder.lib.genKernelFlakeOutputs {
        inherit self;
        path = ./kernels;
      };
      # The same kernels as a tvm-ffi kernel: kernel-builder builds one kind per project, so
      # kernels/tvm-ffi is a second project over the same sources (docs/TVM_FFI.md).
      tvmFfiOutputs = kernel-builder.lib.genKernelFlakeOutputs {
        inherit self;
        path = ./kernels/tvm-ffi;
      };
      matrix = import ./nix/matrix.nix { }; # what genKernelFlakeOutputs builds, as plain data
      buildToml = builtins.fromTOML (builtins.readFile ./kernels/build.toml);
      repoId = buildToml.general.hub.repo-id;

      toolOutputs = flake-utils.lib.eachSystem [ "x86_64-linux" "aarch64-linux" ] (system:
        let
          pkgs = nixpkgs.legacyPackages.${system};
          torch = pkgs.python3Packages.torch;
          kernelhub = pkgs.stdenv.mkDerivation {
            pname = "kernelhub";
            version = "0.1.0";
            src = pkgs.lib.cleanSource ./.;
            nativeBuildInputs = [ pkgs.cmake pkgs.ninja pkgs.pkg-config pkgs.python3 ];
            buildInputs = [ pkgs.curl pkgs.openssl pkgs.nlohmann_json pkgs.httplib pkgs.tomlplusplus pkgs.cli11 pkgs.catch2 torch ];
            cmakeFlags = [
              "-DKERNELHUB_DEVELOPER=OFF"
              "-DKERNELHUB_BUILD_KERNELS=OFF" # the kernels come from kernel-builder above
              "-DBUILD_TESTING=OFF"
              # kernel-builder's nixpkgs has no apache-tvm-ffi outside its own overlay: the tvm-ffi
              # loader (which needs its headers) is left out of this build.
              "-DKERNELHUB_WITH_TVM_FFI=OFF"
              "-DPython3_EXECUTABLE=${pkgs.python3.withPackages (p: [ torch ])}/bin/python"
            ];
            installPhase = ''
              runHook preInstall
              install -Dm755 bin/kernelhub $out/bin/kernelhub
              install -Dm755 bin/hub-publish $out/bin/hub-publish
              runHook postInstall
            '';
          };
          publish = pkgs.writeShellApplication {
            name = "publish";
            runtimeInputs = [ kernelhub ];
            # Builds every variant, copies them into kernels/build and publishes that directory as
            # it is: hub-publish checks it and makes one commit on branch v<version>.
            # (build-and-copy writes ./build/<variant>/ in the current directory.)
            text = ''
              cd kernels
              nix run ${self}#build-and-copy
              (cd tvm-ffi && nix run ${self}#tvm-ffi-build-and-copy && cp -r build/. ../build/)
              exec hub-publish ${repoId} --build-dir build --version ${toString buildToml.general.version} "$@"
            '';
          };
        in
        {
          packages = { inherit kernelhub; tvm-ffi-bundle = tvmFfiOutputs.packages.${system}.bundle; };
          apps.publish = { type = "app"; program = "${publish}/bin/publish"; };
          apps.tvm-ffi-build-and-copy = tvmFfiOutputs.apps.${system}.build-and-copy;
        });
    in
    nixpkgs.lib.recursiveUpdate kernelOutputs (toolOutputs // {
      lib.matrix = matrix;
    });
}
