#include "hash_pipeline.hpp"

#include <cstring>

namespace kernelhub::client {

HashPipeline::HashPipeline(int workers, std::size_t max_queued_bytes) : max_queued_(max_queued_bytes) {
  for (int i = 0; i < workers; ++i) workers_.push_back(std::make_unique<Worker>());
  for (std::size_t i = 0; i < workers_.size(); ++i) workers_[i]->thread = std::thread([this, i] { run(i); });
}

HashPipeline::~HashPipeline() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  for (auto& w : workers_) w->thread.join();
}

std::size_t HashPipeline::add_stream(Update update) {
  std::lock_guard lock(mutex_);
  streams_.push_back(std::move(update));
  pending_.push_back(0);
  return streams_.size() - 1;
}

void HashPipeline::push(std::size_t id, const char* data, std::size_t size) {
  auto copy = std::make_unique<char[]>(size);
  std::memcpy(copy.get(), data, size);
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return queued_ < max_queued_; });
  queued_ += size;
  pending_[id] += size;
  workers_[id % workers_.size()]->queue.push_back(Chunk{id, std::move(copy), size});
  lock.unlock();
  changed_.notify_all();
}

void HashPipeline::drain(std::size_t id) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return pending_[id] == 0; });
}

void HashPipeline::run(std::size_t index) {
  Worker& worker = *workers_[index];
  std::unique_lock lock(mutex_);
  while (true) {
    changed_.wait(lock, [&] { return stopping_ || !worker.queue.empty(); });
    if (worker.queue.empty()) return;  // stopping, and nothing left
    Chunk chunk = std::move(worker.queue.front());
    worker.queue.pop_front();
    Update& update = streams_[chunk.stream];
    lock.unlock();
    update(chunk.data.get(), chunk.size);
    lock.lock();
    queued_ -= chunk.size;
    pending_[chunk.stream] -= chunk.size;
    changed_.notify_all();
  }
}

}  // namespace kernelhub::client
