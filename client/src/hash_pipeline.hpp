// HashPipeline: hashes downloaded bytes on worker threads while the transfer loop keeps
// receiving, so a download costs max(network, hashing) instead of their sum. Each stream is
// pinned to one worker, so its chunks are hashed in order; the queue is bounded (the writer
// waits when it is full), so memory stays flat whatever the file sizes.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace kernelhub::client {

class HashPipeline {
 public:
  // A stream's hashing function, called on a worker with chunks in order.
  using Update = std::function<void(const char* data, std::size_t size)>;

  explicit HashPipeline(int workers, std::size_t max_queued_bytes = 64u << 20);
  ~HashPipeline();  // drains every queue, then joins
  HashPipeline(const HashPipeline&) = delete;
  HashPipeline& operator=(const HashPipeline&) = delete;

  // Registers a stream; returns its id. The update function must outlive the stream's chunks.
  std::size_t add_stream(Update update);
  // Copies and queues `size` bytes of stream `id` (waits while the queue is full).
  void push(std::size_t id, const char* data, std::size_t size);
  // Waits until every queued chunk of stream `id` has been hashed.
  void drain(std::size_t id);

 private:
  struct Chunk {
    std::size_t stream;
    std::unique_ptr<char[]> data;
    std::size_t size;
  };
  struct Worker {
    std::deque<Chunk> queue;
    std::thread thread;
  };
  void run(std::size_t worker);

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Update> streams_;  // a deque: references stay valid while streams are added
  std::vector<std::size_t> pending_;  // queued bytes per stream
  std::vector<std::unique_ptr<Worker>> workers_;
  std::size_t queued_ = 0;
  std::size_t max_queued_;
  bool stopping_ = false;
};

}  // namespace kernelhub::client
