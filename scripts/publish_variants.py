"""Publishes build/<variant>/ directories to branch v<N> of a Hub kernel repo with the real
huggingface_hub client, in one commit. `make demo` uses it against `kernelhub serve` until
hub-publish (our C++ publisher) lands.

usage: publish_variants.py REPO_ID BUILD_DIR VERSION   (HF_ENDPOINT and HF_TOKEN from the environment)
"""

import sys
from pathlib import Path

from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi


def main() -> int:
    repo_id, build_dir, version = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
    api = HfApi()
    api.create_repo(repo_id, repo_type="kernel", exist_ok=True)
    branch = f"v{version}"
    api.create_branch(repo_id, repo_type="kernel", branch=branch, exist_ok=True)
    # Each variant directory is replaced whole: files of an earlier build (an op library with
    # another namespace, say) must not stay behind, or the variant no longer matches its digest.
    existing = {f.path.split("/")[1] for f in api.list_repo_tree(repo_id, repo_type="kernel", revision=branch,
                                                               path_in_repo="build")} if any(
        f.path == "build" for f in api.list_repo_tree(repo_id, repo_type="kernel", revision=branch)) else set()
    operations = []
    for variant in sorted(p for p in build_dir.iterdir() if p.is_dir()):
        if variant.name in existing:
            operations.append(CommitOperationDelete(path_in_repo=f"build/{variant.name}/", is_folder=True))
        for f in sorted(variant.rglob("*")):
            if f.is_file() and "__pycache__" not in f.parts:
                rel = f.relative_to(build_dir).as_posix()
                operations.append(CommitOperationAdd(path_in_repo=f"build/{rel}", path_or_fileobj=str(f)))
    info = api.create_commit(repo_id, repo_type="kernel", revision=branch, operations=operations,
                             commit_message=f"Publish {len(operations)} files")
    print(f"published {len(operations)} files to {repo_id}@{branch}: {info.oid}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
