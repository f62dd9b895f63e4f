// The attacks docs/SIGNING.md defends against, each against a signed variant directory: every one
// must fail closed with a typed error that says what was found.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "kernelhub/signing/internal/sign.hpp"
#include "kernelhub/signing/internal/signature_file.hpp"
#include "kernelhub/signing/internal/verify.hpp"
#include "signing_fixture.hpp"

namespace kernelhub::signing {
namespace {

namespace fs = std::filesystem;
using testing::read_file;
using testing::SignedVariant;
using testing::write_file;

Error verify_error(const SignedVariant& v, const VerifyPolicy& policy = SignedVariant::trusting_publisher()) {
  auto verified = verify_variant(v.dir, v.expected(), policy);
  REQUIRE_FALSE(verified.has_value());
  return verified.error();
}

// Signs `manifest_bytes` as they are, with `key`, into the signature file beside v.dir.
void write_signed(const SignedVariant& v, const std::string& manifest_bytes, const PrivateKey& key) {
  const SignatureFile file{key.public_key().key_id(), key.sign(manifest_bytes), manifest_bytes};
  write_file(signature_path(v.dir), file.to_bytes());
}

std::string signed_manifest(const SignedVariant& v) {
  return SignatureFile::parse(read_file(signature_path(v.dir)))->manifest_bytes;
}

TEST_CASE("happy path: a signed variant verifies with the trusted key and says which") {
  SignedVariant v;
  auto verified = verify_variant(v.dir, v.expected(), SignedVariant::trusting_publisher());
  REQUIRE(verified.has_value());
  CHECK(verified->signature_checked);
  CHECK(verified->key_id == testing::publisher_key().public_key().key_id());
  CHECK(verified->key_scope == "acme");
  CHECK(verified->manifest->serial == 42);
  CHECK(verified->manifest->files.size() == 5);
  CHECK(verified->manifest->identity.source_commit == "0123456789abcdef0123456789abcdef01234567");
  // A key for the repo itself works as well as one for its org.
  VerifyPolicy by_repo;
  REQUIRE(by_repo.trusted_keys.add(testing::kRepo, testing::publisher_key().public_key()).has_value());
  CHECK(verify_variant(v.dir, v.expected(), by_repo).has_value());
  // The version is only checked when asked for; the source commit when given.
  ExpectedVariant any_version = v.expected();
  any_version.version.reset();
  any_version.source_commit = "0123456789abcdef0123456789abcdef01234567";
  CHECK(verify_variant(v.dir, any_version, SignedVariant::trusting_publisher()).has_value());
}

TEST_CASE("Python's __pycache__/*.pyc written after signing does not break the signature") {
  SignedVariant v;
  write_file(v.dir / "__pycache__" / "_ops.cpython-311.pyc", "bytecode");
  CHECK(verify_variant(v.dir, v.expected(), SignedVariant::trusting_publisher()).has_value());
}

TEST_CASE("attack: one flipped byte in the op library") {
  SignedVariant v;
  const auto lib = v.dir / "_reference_kernels_cpu_abc.abi3.so";
  std::string bytes = read_file(lib);
  bytes[1234] ^= 0x01;
  write_file(lib, bytes);
  const Error e = verify_error(v);
  CHECK(e.code == ErrorCode::kIntegrityMismatch);
  CHECK_THAT(e.message, Catch::Contains("`_reference_kernels_cpu_abc.abi3.so` has sha256") &&
                            Catch::Contains("changed after it was signed"));
}

TEST_CASE("attack: a truncated file") {
  SignedVariant v;
  write_file(v.dir / "_ops.py", "import torch\n");
  const Error e = verify_error(v);
  CHECK(e.code == ErrorCode::kIntegrityMismatch);
  CHECK_THAT(e.message, Catch::Contains("`_ops.py` is 13 bytes, signed as"));
}

TEST_CASE("attack: an extra file, also hidden in a subdirectory") {
  SignedVariant v;
  write_file(v.dir / "layers" / "evil.so",
             "\x7f"
             "ELF");
  const Error e = verify_error(v);
  CHECK(e.code == ErrorCode::kIntegrityMismatch);
  CHECK_THAT(e.message, Catch::Contains("`layers/evil.so` is not in the signed manifest"));
}

TEST_CASE("attack: a missing file") {
  SignedVariant v;
  fs::remove(v.dir / "layers" / "__init__.py");
  const Error e = verify_error(v);
  CHECK(e.code == ErrorCode::kIntegrityMismatch);
  CHECK_THAT(e.message, Catch::Contains("`layers/__init__.py` is signed but missing"));
}

TEST_CASE("attack: a file replaced by a symlink, even one to identical bytes") {
  SignedVariant v;
  const auto lib = v.dir / "_reference_kernels_cpu_abc.abi3.so";
  const auto outside = v.temp.path() / "outside.so";
  fs::rename(lib, outside);
  fs::create_symlink(outside, lib);
  const Error e = verify_error(v);
  CHECK(e.code == ErrorCode::kIntegrityMismatch);
  CHECK_THAT(e.message, Catch::Contains("`_reference_kernels_cpu_abc.abi3.so` is a symlink to"));
}

TEST_CASE("attack: a FIFO where a file should be (no hang)") {
  SignedVariant v;
  fs::remove(v.dir / "_ops.py");
  REQUIRE(::mkfifo((v.dir / "_ops.py").c_str(), 0644) == 0);
  const Error e = verify_error(v);
  CHECK(e.code == ErrorCode::kIntegrityMismatch);
  CHECK_THAT(e.message, Catch::Contains("`_ops.py` is a FIFO"));
}

TEST_CASE("the Hugging Face cache's snapshot links into the repo's blobs/ are followed, others are not") {
  // <repo>/snapshots/<commit>/build/<variant>/<file> -> ../../../../blobs/<etag>
  SignedVariant source;
  testing::TempDir cache;
  const fs::path repo = cache.path() / "kernels--acme--reference-kernels";
  const fs::path variant = repo / "snapshots" / "c0ffee" / "build" / testing::kVariant;
  fs::create_directories(repo / "blobs");
  int n = 0;
  for (const auto& entry : fs::recursive_directory_iterator(source.dir)) {
    if (!entry.is_regular_file()) continue;
    const fs::path rel = entry.path().lexically_relative(source.dir);
    const std::string etag = "blob" + std::to_string(n++);
    fs::copy_file(entry.path(), repo / "blobs" / etag);
    fs::create_directories((variant / rel).parent_path());
    fs::create_symlink(fs::relative(repo / "blobs" / etag, (variant / rel).parent_path()), variant / rel);
  }
  fs::copy_file(signature_path(source.dir), repo / "blobs" / "signature");
  fs::create_symlink(fs::relative(repo / "blobs" / "signature", variant.parent_path()), signature_path(variant));
  const ExpectedVariant expected = source.expected();
  CHECK(verify_variant(variant, expected, SignedVariant::trusting_publisher()).has_value());

  // A link out of blobs/ (here: to the original file, same bytes) is still refused.
  fs::remove(variant / "_ops.py");
  fs::create_symlink(source.dir / "_ops.py", variant / "_ops.py");
  auto verified = verify_variant(variant, expected, SignedVariant::trusting_publisher());
  REQUIRE_FALSE(verified.has_value());
  CHECK(verified.error().code == ErrorCode::kIntegrityMismatch);
  CHECK_THAT(verified.error().message, Catch::Contains("not a file in this repo's cache blobs/"));
}

TEST_CASE("attack: a signed manifest naming a path with `..` is refused before any file is read") {
  SignedVariant v;
  std::string bytes = signed_manifest(v);
  bytes += "file " + to_hex(sha256("x")) + " 1 ../../outside.so\n";
  write_signed(v, bytes, testing::publisher_key());  // a validly signed, malicious manifest
  const Error e = verify_error(v);
  CHECK(e.code == ErrorCode::kBadSignature);
  CHECK_THAT(e.message, Catch::Contains("manifest is malformed"));
}

TEST_CASE("signing refuses what a manifest cannot hold: symlinks, `..`-free but odd names") {
  testing::TempDir temp;
  const fs::path dir = temp.path() / testing::kVariant;
  write_file(dir / "a.py", "a");
  fs::create_symlink("/etc/passwd", dir / "link");
  write_file(dir / "bad\nname", "x");
  auto signed_manifest = sign_variant(dir, {testing::kRepo, 1, testing::kVariant, ""}, testing::publisher_key());
  REQUIRE_FALSE(signed_manifest.has_value());
  CHECK(signed_manifest.error().code == ErrorCode::kInvalidArgument);
  CHECK_THAT(signed_manifest.error().message, Catch::Contains("`link` is a symlink") && Catch::Contains("bad"));
  CHECK_FALSE(fs::exists(signature_path(dir)));  // nothing written
  auto bad_identity = sign_variant(dir, {"no-slash", 1, testing::kVariant, ""}, testing::publisher_key());
  REQUIRE_FALSE(bad_identity.has_value());
  CHECK(bad_identity.error().code == ErrorCode::kInvalidArgument);
}

TEST_CASE("attack: a replayed older manifest (an older version's signature over its files)") {
  SignedVariant v1(testing::kVariant, /*version=*/1);
  const Error e = verify_error(v1);  // asked: version 2
  CHECK(e.code == ErrorCode::kBadSignature);
  CHECK_THAT(e.message, Catch::Contains("version 1, asked 2") && Catch::Contains("replay"));
}

TEST_CASE("attack: an older build of the same version (lower serial) after a newer one was accepted") {
  SignedVariant v;  // serial 42
  testing::TempDir state;
  VerifyPolicy policy = SignedVariant::trusting_publisher();
  policy.serial_store_dir = state.path();
  const std::string old_signature = read_file(signature_path(v.dir));
  const std::string old_ops = read_file(v.dir / "_ops.py");
  // The publisher ships a fix with serial 43; this machine loads it.
  write_file(v.dir / "_ops.py", old_ops + "# fixed\n");
  REQUIRE(sign_variant(v.dir, {testing::kRepo, 2, testing::kVariant, ""}, testing::publisher_key(), {.serial = 43})
              .has_value());
  REQUIRE(verify_variant(v.dir, v.expected(), policy).has_value());
  CHECK(verify_variant(v.dir, v.expected(), policy).has_value());  // the same serial again is fine
  // A mirror serves the old, validly signed build again.
  write_file(v.dir / "_ops.py", old_ops);
  write_file(signature_path(v.dir), old_signature);
  REQUIRE(verify_variant(v.dir, v.expected(), SignedVariant::trusting_publisher()).has_value());  // valid alone
  const Error e = verify_error(v, policy);
  CHECK(e.code == ErrorCode::kBadSignature);
  CHECK_THAT(e.message, Catch::Contains("serial 42") && Catch::Contains("serial 43 was already accepted") &&
                            Catch::Contains("rollback"));
  // Pinned to a commit (a lock file), the caller chose those bytes: no freshness check.
  ExpectedVariant pinned = ExpectedVariant::for_revision(testing::kRepo, std::string(40, 'c'), testing::kVariant);
  CHECK(verify_variant(v.dir, pinned, policy).has_value());
}

TEST_CASE("attack: a manifest for an older source commit than asked") {
  SignedVariant v;
  ExpectedVariant expected = v.expected();
  expected.source_commit = "fedcba9876543210fedcba9876543210fedcba98";
  auto verified = verify_variant(v.dir, expected, SignedVariant::trusting_publisher());
  REQUIRE_FALSE(verified.has_value());
  CHECK(verified.error().code == ErrorCode::kBadSignature);
  CHECK_THAT(verified.error().message, Catch::Contains("source commit `0123456789abcdef"));
}

TEST_CASE("attack: the signature of another variant, or another repo, copied in") {
  SignedVariant cuda("torch215-cxx11-cu128-x86_64-linux");
  SignedVariant cpu;
  // Same files, so only the identity differs.
  fs::copy_file(signature_path(cuda.dir), signature_path(cpu.dir), fs::copy_options::overwrite_existing);
  Error e = verify_error(cpu);
  CHECK(e.code == ErrorCode::kBadSignature);
  CHECK_THAT(e.message, Catch::Contains("variant `torch215-cxx11-cu128-x86_64-linux`, asked `torch215-cxx11-cpu"));

  SignedVariant other_repo;
  ExpectedVariant expected = other_repo.expected();
  expected.repo = "acme/other-kernels";
  auto verified = verify_variant(other_repo.dir, expected, SignedVariant::trusting_publisher());
  REQUIRE_FALSE(verified.has_value());
  CHECK_THAT(verified.error().message, Catch::Contains("repo `acme/reference-kernels`, asked `acme/other-kernels`"));
}

TEST_CASE("attack: signed by a key that is not trusted for this repo") {
  SignedVariant v;
  REQUIRE(sign_variant(v.dir, {testing::kRepo, 2, testing::kVariant, ""}, testing::other_key()).has_value());
  Error e = verify_error(v);
  CHECK(e.code == ErrorCode::kBadSignature);
  CHECK_THAT(e.message, Catch::Contains("does not verify with any trusted key") &&
                            Catch::Contains(testing::other_key().public_key().key_id()));
  // The publisher's key trusted for another org does not count either.
  SignedVariant w;
  VerifyPolicy elsewhere;
  REQUIRE(elsewhere.trusted_keys.add("bob", testing::publisher_key().public_key()).has_value());
  REQUIRE(elsewhere.trusted_keys.add("acme", testing::other_key().public_key()).has_value());
  CHECK(verify_error(w, elsewhere).code == ErrorCode::kBadSignature);
}

TEST_CASE("attack: the manifest edited after signing (one space)") {
  SignedVariant v;
  std::string bytes = read_file(signature_path(v.dir));
  bytes.replace(bytes.find("serial 42"), 9, "serial  42");
  write_file(signature_path(v.dir), bytes);
  CHECK(verify_error(v).code == ErrorCode::kBadSignature);
}

TEST_CASE("a missing signature: fatal when a key is trusted or a signature required, else unchecked") {
  SignedVariant v;
  fs::remove(signature_path(v.dir));
  Error e = verify_error(v);
  CHECK(e.code == ErrorCode::kMissingSignature);
  CHECK_THAT(e.message, Catch::Contains("has no signature (`torch215-cxx11-cpu-x86_64-linux.kernelhub.sig` beside "
                                        "its folder)") &&
                            Catch::Contains("acme (key "));

  VerifyPolicy required;
  required.require_signature = true;
  e = verify_error(v, required);
  CHECK(e.code == ErrorCode::kMissingSignature);
  CHECK_THAT(e.message, Catch::Contains("a signature is required"));

  auto unchecked = verify_variant(v.dir, v.expected(), VerifyPolicy{});
  REQUIRE(unchecked.has_value());
  CHECK_FALSE(unchecked->signature_checked);

  SignedVariant signed_but_no_key;  // signed, nothing trusted, but required: not good enough
  CHECK(verify_error(signed_but_no_key, required).code == ErrorCode::kMissingSignature);
}

TEST_CASE("a malformed signature file never crashes and is a bad signature") {
  SignedVariant v;
  const std::string good = read_file(signature_path(v.dir));
  const std::string first_line = good.substr(0, good.find('\n') + 1);
  const std::string cases[] = {
      "",
      "\n",
      "kernelhub-signature v1",
      "kernelhub-signature v1 0123 AAAA\n",
      std::string(200, 'A'),
      std::string("\0\0\0\xff", 4),
      first_line,                                                    // signature over nothing
      good.substr(0, good.size() - 30),                              // truncated manifest
      "kernelhub-signature v2" + good.substr(22),                    // unknown envelope version
      good.substr(0, 23) + "ZZZZZZZZZZZZZZZZ" + good.substr(39),     // key id not hex
      good.substr(0, 40) + std::string(88, '*') + good.substr(128),  // signature not base64
  };
  for (const auto& bytes : cases) {
    INFO(bytes.substr(0, 60));
    write_file(signature_path(v.dir), bytes);
    CHECK(verify_error(v).code == ErrorCode::kBadSignature);
  }
  // Larger than the cap: refused without reading it whole.
  write_file(signature_path(v.dir), first_line + std::string(kMaxManifestSize + 8192, 'x'));
  Error e = verify_error(v);
  CHECK(e.code == ErrorCode::kBadSignature);
  CHECK_THAT(e.message, Catch::Contains("16 MiB"));
  // A link or a FIFO in its place.
  fs::remove(signature_path(v.dir));
  fs::create_symlink(v.temp.path() / "elsewhere.sig", signature_path(v.dir));
  CHECK(verify_error(v).code == ErrorCode::kBadSignature);
  fs::remove(signature_path(v.dir));
  REQUIRE(::mkfifo(signature_path(v.dir).c_str(), 0644) == 0);
  CHECK(verify_error(v).code == ErrorCode::kBadSignature);
}

TEST_CASE("re-signing replaces the signature file atomically and leaves no temp file") {
  SignedVariant v;
  auto manifest =
      sign_variant(v.dir, {testing::kRepo, 2, testing::kVariant, ""}, testing::publisher_key(), {.serial = 43});
  REQUIRE(manifest.has_value());
  CHECK(manifest->serial == 43);
  CHECK(manifest->files.size() == 5);
  int entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(v.dir)) ++entries;
  CHECK(entries == 5);  // 4 files + layers/: the signature is beside the folder
  entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(v.temp.path())) ++entries;
  CHECK(entries == 2);  // the folder and its signature, no temp file
  CHECK(verify_variant(v.dir, v.expected(), SignedVariant::trusting_publisher())->manifest->serial == 43);
}

TEST_CASE("check_variant reads the trusted keys from the environment") {
  SignedVariant v;
  const std::string key = testing::publisher_key().public_key().to_base64();
  CHECK(check_variant(v.dir, v.expected(), false, map_environment({{"KERNELHUB_TRUSTED_KEYS", "acme=" + key}}))
            .has_value());
  fs::remove(signature_path(v.dir));
  auto status = check_variant(v.dir, v.expected(), false, map_environment({{"KERNELHUB_TRUSTED_KEYS", "acme=" + key}}));
  REQUIRE_FALSE(status.has_value());
  CHECK(status.error().code == ErrorCode::kMissingSignature);
  CHECK(check_variant(v.dir, v.expected(), false, map_environment({})).has_value());
  CHECK_FALSE(
      check_variant(v.dir, v.expected(), false, map_environment({{"KERNELHUB_REQUIRE_SIGNATURE", "1"}})).has_value());
  CHECK_FALSE(check_variant(v.dir, v.expected(), true, map_environment({})).has_value());
  auto bad_config = check_variant(v.dir, v.expected(), false, map_environment({{"KERNELHUB_TRUSTED_KEYS", "acme"}}));
  REQUIRE_FALSE(bad_config.has_value());
  CHECK(bad_config.error().code == ErrorCode::kInvalidArgument);
}

TEST_CASE("ExpectedVariant::for_revision takes the version from a v<N> branch only") {
  CHECK(ExpectedVariant::for_revision("a/b", "v3", "x").version == 3);
  CHECK_FALSE(ExpectedVariant::for_revision("a/b", "main", "x").version.has_value());
  CHECK_FALSE(ExpectedVariant::for_revision("a/b", "v1.2", "x").version.has_value());
  CHECK_FALSE(ExpectedVariant::for_revision("a/b", std::string(40, 'a'), "x").version.has_value());
}

TEST_CASE("the signature lives beside the variant folder, where kernels' digest check never looks") {
  SignedVariant v;
  CHECK(signature_path(v.dir) == v.temp.path() / "torch215-cxx11-cpu-x86_64-linux.kernelhub.sig");
  CHECK(signature_path(v.dir / "") == signature_path(v.dir));
  CHECK(legacy_signature_path(v.dir) == v.dir / "kernelhub.sig");
  CHECK(signature_repo_path(testing::kVariant) == "build/torch215-cxx11-cpu-x86_64-linux.kernelhub.sig");
  CHECK(fs::is_regular_file(signature_path(v.dir)));
  CHECK_FALSE(fs::exists(legacy_signature_path(v.dir)));
  // Beside the folder it covers every file inside, a stray kernelhub.sig included.
  write_file(legacy_signature_path(v.dir), "junk");
  const Error e = verify_error(v);
  CHECK(e.code == ErrorCode::kIntegrityMismatch);
  CHECK_THAT(e.message, Catch::Contains("`kernelhub.sig` is not in the signed manifest"));
}

TEST_CASE("a variant signed in layout v1 (kernelhub.sig inside its folder) still verifies, strictly") {
  SignedVariant v;
  // What older kernelhub wrote: the same file, inside the folder, left out of what it covers.
  fs::rename(signature_path(v.dir), legacy_signature_path(v.dir));
  auto verified = verify_variant(v.dir, v.expected(), SignedVariant::trusting_publisher());
  REQUIRE(verified.has_value());
  CHECK(verified->signature_checked);
  CHECK(verified->manifest->files.size() == 5);
  // A changed file, or an edited manifest, still fails there.
  write_file(v.dir / "_ops.py", "import os\n");
  CHECK(verify_error(v).code == ErrorCode::kIntegrityMismatch);
  write_file(legacy_signature_path(v.dir), "kernelhub-signature v1 0123456789abcdef AAAA\n");
  CHECK(verify_error(v).code == ErrorCode::kBadSignature);
}

TEST_CASE("with both, the signature beside the folder is the one checked") {
  SignedVariant v;
  fs::copy_file(signature_path(v.dir), legacy_signature_path(v.dir));
  // The beside one covers all files, so the copy inside counts as an extra file: a variant holding
  // both is not what any kernelhub writes.
  CHECK(verify_error(v).code == ErrorCode::kIntegrityMismatch);
  // A damaged one beside is not rescued by a good one inside.
  fs::rename(legacy_signature_path(v.dir), v.temp.path() / "saved");
  fs::rename(signature_path(v.dir), legacy_signature_path(v.dir));
  write_file(signature_path(v.dir), "kernelhub-signature v1 garbage\n");
  CHECK(verify_error(v).code == ErrorCode::kBadSignature);
}

TEST_CASE("re-signing a folder signed the old way moves the signature beside it") {
  SignedVariant v;
  fs::rename(signature_path(v.dir), legacy_signature_path(v.dir));
  auto manifest =
      sign_variant(v.dir, {testing::kRepo, 2, testing::kVariant, ""}, testing::publisher_key(), {.serial = 44});
  REQUIRE(manifest.has_value());
  CHECK(manifest->files.size() == 5);  // the old kernelhub.sig is not one of them
  CHECK_FALSE(fs::exists(legacy_signature_path(v.dir)));
  CHECK(verify_variant(v.dir, v.expected(), SignedVariant::trusting_publisher())->manifest->serial == 44);
}

}  // namespace
}  // namespace kernelhub::signing
