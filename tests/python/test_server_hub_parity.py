"""`kernelhub serve` answers as the Hub does where huggingface_hub's own test suite looks closely
(bench/server/README.md has the suite's score). One test per group of behaviours, each
through the real `huggingface_hub` client:

1. LFS decided by the repo's .gitattributes, uploads filtered by .gitignore;
2. auth-check, repo move, super-squash, access requests, repo listing, LFS file listing/deletion;
3. pull requests from users without write access, /discussions, PRs only against branches;
4. the Hub's error texts, codes and X-Request-Id;
5. lastCommit per path, commit authors and formatted fields, README metadata validation;
6. case-insensitive repo ids, folder deletion without a trailing slash, NDJSON commits larger than
   the JSON body limit (read line by line);
7. backslashes in paths refused (deliberately stricter than the Hub).
"""

from __future__ import annotations

import hashlib
import os

import pytest

os.environ.setdefault("HF_HUB_DISABLE_XET", "1")

huggingface_hub = pytest.importorskip("huggingface_hub")
from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi, constants  # noqa: E402
from huggingface_hub.errors import (  # noqa: E402
    BadRequestError,
    GatedRepoError,
    HfHubHTTPError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)

constants.HF_HUB_DISABLE_XET = True


@pytest.fixture(scope="module")
def api(hub_server):
    return HfApi(endpoint=hub_server.url, token=hub_server.write_token)


@pytest.fixture(scope="module")
def carol(hub_server):
    """A user with a write token who owns none of alice's repos."""
    return HfApi(endpoint=hub_server.url, token=hub_server.other_write_token)


def git_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def test_lfs_follows_gitattributes_and_uploads_follow_gitignore(api, tmp_path):
    repo = api.create_repo("acme/parity-lfs").repo_id
    api.upload_file(path_or_fileobj=b"small but tracked", path_in_repo="weights.bin", repo_id=repo)
    api.upload_file(path_or_fileobj=b"*.png filter=lfs diff=lfs merge=lfs -text\n", path_in_repo=".gitattributes",
                    repo_id=repo)
    api.upload_file(path_or_fileobj=b"tiny image", path_in_repo="img/a.png", repo_id=repo)
    api.upload_file(path_or_fileobj=b"plain text", path_in_repo="notes.txt", repo_id=repo)
    api.upload_file(path_or_fileobj=b"", path_in_repo="empty.pkl", repo_id=repo)  # empty: never LFS
    files = {s.rfilename: s for s in api.model_info(repo, files_metadata=True).siblings}
    assert files["weights.bin"].lfs["sha256"] == hashlib.sha256(b"small but tracked").hexdigest()
    assert files["img/a.png"].lfs is not None
    assert files["notes.txt"].lfs is None and files["empty.pkl"].lfs is None
    meta = huggingface_hub.get_hf_file_metadata(huggingface_hub.hf_hub_url(repo, "weights.bin", endpoint=api.endpoint),
                                                token=api.token)
    assert meta.etag == hashlib.sha256(b"small but tracked").hexdigest()

    (tmp_path / "nested").mkdir()
    (tmp_path / "nested" / "skip.bin").write_bytes(b"ignored")
    (tmp_path / "keep.txt").write_text("kept")
    (tmp_path / ".gitignore").write_text("nested/*\n")
    api.upload_folder(folder_path=tmp_path, repo_id=repo)
    assert api.file_exists(repo, "keep.txt") and not api.file_exists(repo, "nested/skip.bin")
    api.upload_file(path_or_fileobj=b"*.log\n", path_in_repo=".gitignore", repo_id=repo)  # the repo's own
    (tmp_path / "run.log").write_text("log")
    api.upload_folder(folder_path=tmp_path, repo_id=repo, allow_patterns=["run.log"])
    assert not api.file_exists(repo, "run.log")


def test_repo_endpoints_the_hub_has(api, carol, hub_server):
    repo = api.create_repo("acme/parity-endpoints").repo_id
    api.auth_check(repo)
    with pytest.raises(RepositoryNotFoundError):
        api.auth_check("acme/missing-repo")

    # Access requests on a gated repo: grant, list, cancel, reject, refused twice.
    api.update_repo_settings(repo, gated="auto")
    with pytest.raises(GatedRepoError):
        carol.auth_check(repo)
    api.grant_access(repo, "carol")
    carol.auth_check(repo)
    assert [r.username for r in api.list_accepted_access_requests(repo)] == ["carol"]
    with pytest.raises(HfHubHTTPError):
        api.grant_access(repo, "carol")
    api.cancel_access_request(repo, "carol")
    assert [r.username for r in api.list_pending_access_requests(repo)] == ["carol"]
    api.reject_access_request(repo, "carol", rejection_reason="no")
    with pytest.raises(HfHubHTTPError):
        api.reject_access_request(repo, "carol", rejection_reason="no")
    with pytest.raises(GatedRepoError):
        carol.auth_check(repo)

    # Super-squash leaves one commit with the head's files.
    api.upload_file(path_or_fileobj=b"1", path_in_repo="a.txt", repo_id=repo)
    api.upload_file(path_or_fileobj=b"2", path_in_repo="a.txt", repo_id=repo)
    api.super_squash_history(repo)
    assert [c.title for c in api.list_repo_commits(repo)] == ["Super-squash branch 'main' using huggingface_hub"]
    assert api.list_repo_files(repo) == [".gitattributes", "a.txt"]

    # LFS files listed, then permanently deleted from history.
    api.upload_file(path_or_fileobj=b"lfs one", path_in_repo="one.bin", repo_id=repo)
    api.upload_file(path_or_fileobj=b"lfs two", path_in_repo="two.bin", repo_id=repo)
    lfs = {f.filename: f for f in api.list_lfs_files(repo)}
    assert set(lfs) == {"one.bin", "two.bin"} and lfs["one.bin"].ref in ("main", "refs/heads/main")
    api.permanently_delete_lfs_files(repo, [lfs["one.bin"]])
    assert [f.filename for f in api.list_lfs_files(repo)] == ["two.bin"]
    assert "one.bin" not in api.list_repo_files(repo)

    # Listing: private repos only for their owners; move keeps the files.
    api.create_repo("acme/parity-private", private=True)
    mine = {m.id for m in api.list_models(author="acme")}
    assert {repo, "acme/parity-private"} <= mine
    anonymous = HfApi(endpoint=hub_server.url, token=False)
    assert "acme/parity-private" not in {m.id for m in anonymous.list_models(author="acme")}
    api.move_repo(repo, "acme/parity-moved")
    assert "two.bin" in api.list_repo_files("acme/parity-moved")
    assert api.repo_info(repo).id == "acme/parity-moved"  # the old id leads to the moved repo, as on the Hub
    with pytest.raises(HfHubHTTPError, match=r"A model repository called acme/parity-private already exists"):
        api.move_repo("acme/parity-moved", "acme/parity-private")


def test_pull_requests_and_discussions(api, carol):
    repo = api.create_repo("acme/parity-prs").repo_id
    head = api.repo_info(repo).sha
    # carol cannot push to alice's repo, but she can open a pull request with LFS and regular files.
    with pytest.raises(HfHubHTTPError) as refused:
        carol.upload_file(path_or_fileobj=b"x", path_in_repo="x.txt", repo_id=repo)
    assert refused.value.response.status_code == 403
    info = carol.create_commit(repo, [CommitOperationAdd("regular.txt", b"content"),
                                      CommitOperationAdd("lfs.pkl", b"content")],
                               commit_message="PR from carol", create_pr=True)
    assert info.pr_num == 1 and info.pr_revision == "refs/pr/1"
    carol.upload_file(path_or_fileobj=b"more", path_in_repo="more.txt", repo_id=repo, revision="refs/pr/1")
    assert set(api.list_repo_files(repo, revision="refs/pr/1")) >= {"regular.txt", "lfs.pkl", "more.txt"}
    assert "regular.txt" not in api.list_repo_files(repo)

    pr = api.create_pull_request(repo, title="Draft from the API")
    assert pr.num == 2 and pr.status == "draft" and pr.git_reference == "refs/pr/2" and pr.target_branch == "refs/heads/main"
    discussions = list(api.get_repo_discussions(repo))
    assert [(d.num, d.author, d.is_pull_request) for d in discussions] == [(2, "alice", True), (1, "carol", True)]
    assert [d.num for d in api.get_repo_discussions(repo, author="carol")] == [1]

    # Pull requests go against branches only.
    with pytest.raises(RevisionNotFoundError):
        api.create_commit(repo, [CommitOperationAdd("f.txt", b"c")], commit_message="x", revision=head, create_pr=True)
    with pytest.raises(RevisionNotFoundError):
        api.create_commit(repo, [CommitOperationAdd("f.txt", b"c")], commit_message="x", revision="nope",
                          create_pr=True)


def test_hub_error_texts_codes_and_request_id(api):
    with pytest.raises(RepositoryNotFoundError) as missing:
        api.create_commit("acme/not-there", [CommitOperationAdd("a", b"b")], commit_message="m")
    request_id = missing.value.response.headers.get("X-Request-Id")
    assert request_id and f"(Request ID: {request_id})" in str(missing.value)

    repo = api.create_repo("acme/parity-errors").repo_id
    api.create_branch(repo, branch="dev")
    with pytest.raises(HfHubHTTPError, match=r"Reference refs/heads/dev already exists"):
        api.create_branch(repo, branch="dev")
    with pytest.raises(HfHubHTTPError, match=r"Reference refs/heads/main already exists"):
        api.create_branch(repo, branch="main")
    with pytest.raises(HfHubHTTPError, match="Cannot delete refs/heads/main"):
        api.delete_branch(repo, branch="main")
    with pytest.raises(HfHubHTTPError, match="Invalid rev id"):
        api.delete_branch(repo, branch="no-such-branch")
    with pytest.raises(RevisionNotFoundError):  # revision checked before the tag name
        api.create_tag(repo, tag="invalid tag", revision="foobar")
    with pytest.raises(BadRequestError):
        api.create_tag(repo, tag="invalid tag")
    parent = api.repo_info(repo).sha
    api.upload_file(path_or_fileobj=b"1", path_in_repo="a.txt", repo_id=repo)
    with pytest.raises(HfHubHTTPError) as conflict:
        api.create_commit(repo, [CommitOperationAdd("b.txt", b"2")], commit_message="late", parent_commit=parent)
    assert conflict.value.response.status_code == 412
    assert "The branch was updated since you opened this page. Please refresh and try again." in str(conflict.value)


def test_last_commit_authors_and_readme_metadata(api, monkeypatch):
    repo = api.create_repo("acme/parity-history").repo_id
    first = api.upload_file(path_or_fileobj=b"a", path_in_repo="dir/a.txt", repo_id=repo).oid
    second = api.upload_file(path_or_fileobj=b"b", path_in_repo="b.txt", repo_id=repo).oid
    entries = {e.path: e for e in api.list_repo_tree(repo, expand=True)}
    assert entries["dir"].last_commit.oid == first
    assert entries["b.txt"].last_commit.oid == second
    [info] = api.get_paths_info(repo, ["dir/a.txt"], expand=True)
    assert info.last_commit.oid == first

    commits = api.list_repo_commits(repo)
    assert all(c.authors == ["alice"] for c in commits) and len(commits) == 3
    assert all(c.formatted_title is None for c in commits)
    assert all(c.formatted_title is not None for c in api.list_repo_commits(repo, formatted=True))

    invalid = "\n---\nmodel-index: foo\n---\n\nA card.\n"  # blank lines before the block are allowed
    with pytest.raises(ValueError, match="Invalid metadata in README.md"):
        api.create_commit(repo, [CommitOperationAdd("README.md", invalid.encode())], commit_message="card")
    with pytest.warns(UserWarning, match="Warnings while validating metadata in README.md"):
        api.create_commit(repo, [CommitOperationAdd("README.md", b"No metadata here")], commit_message="card")
    monkeypatch.setattr(constants, "ENDPOINT", api.endpoint)  # RepoCard.validate() asks constants.ENDPOINT
    card = huggingface_hub.RepoCard("---\nlicense: asdf\n---\ntext")
    with pytest.raises(ValueError, match='- Error: "license" must be one of'):
        card.validate()
    huggingface_hub.RepoCard("---\nlicense: mit\n---\ntext").validate()


def test_case_insensitive_ids_folder_deletes_and_streamed_commits(kernelhub_serve):
    # --max-body 1 MiB: a JSON body stays bounded by it; an NDJSON commit is read line by line
    # and may be larger in total, each of its lines within the 1 MiB.
    server = kernelhub_serve("--max-body", str(1 << 20))
    api = HfApi(endpoint=server.url, token=server.write_token)
    repo = api.create_repo("acme/Parity-Case").repo_id
    assert api.repo_info("acme/parity-case").id == "acme/Parity-Case"
    with pytest.raises(HfHubHTTPError) as exists:
        api.create_repo("acme/PARITY-case")
    assert exists.value.response.status_code == 409

    ops = [CommitOperationAdd(f"data/part{i}.txt", b"x" * (700 << 10)) for i in range(4)]  # 2.8 MB, regular files
    api.create_commit("acme/parity-case", ops, commit_message="bigger than --max-body")
    assert len([f for f in api.list_repo_files(repo) if f.startswith("data/")]) == 4
    api.create_commit(repo, [CommitOperationDelete("data")], commit_message="folder without a slash")
    assert not any(f.startswith("data/") for f in api.list_repo_files(repo))
    with pytest.raises(HfHubHTTPError) as too_long:  # one line over the 1 MiB line limit
        api.create_commit(repo, [CommitOperationAdd("huge.txt", b"y" * (900 << 10))], commit_message="one big line")
    assert too_long.value.response.status_code == 413
    assert "huge.txt" not in api.list_repo_files(repo)


def test_backslash_paths_are_refused(api):
    repo = api.create_repo("acme/parity-paths").repo_id
    with pytest.raises(HfHubHTTPError) as refused:
        api.upload_file(path_or_fileobj=b"x", path_in_repo="a\\b.txt", repo_id=repo)
    assert refused.value.response.status_code == 400
