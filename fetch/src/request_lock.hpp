// The lock file a fetch is made under, whichever way the request names it.
#pragma once

#include <string>

#include "kernelhub/fetch/internal/fetch.hpp"
#include "kernelhub/fetch/internal/lockfile.hpp"

namespace kernelhub {

struct RequestLock {
  LockFile lock;
  std::string source;  // the lock file's path, or what FetchRequest::lock_source says
};

inline bool has_lock(const FetchRequest& request) {
  return request.lockfile || request.lock;
}

// FetchRequest::lock, else FetchRequest::lockfile read. REQUIRES: has_lock(request).
// Errors: those of LockFile::read.
inline Result<RequestLock> request_lock(const FetchRequest& request) {
  if (request.lock) return RequestLock{*request.lock, request.lock_source};
  KH_ASSIGN_OR_RETURN(LockFile lock, LockFile::read(*request.lockfile));
  return RequestLock{std::move(lock), request.lockfile->string()};
}

// The entry for the request's repo (`repo_id`), or for exactly FetchRequest::locked_as.
inline Result<KernelLock> request_lock_entry(const RequestLock& lock, const FetchRequest& request,
                                             const std::string& repo_id) {
  return request.locked_as ? lock.lock.lock_of(*request.locked_as, lock.source)
                           : lock.lock.lock_of(repo_id, lock.source);
}

}  // namespace kernelhub
