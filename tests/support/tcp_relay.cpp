#include "support/tcp_relay.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <array>
#include <stdexcept>

namespace kernelhub::testing {

namespace {

constexpr int kPollMs = 50;  // how soon a relay notices the destructor

sockaddr_in loopback(int port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return address;
}

// Sends all of `data`; false when the peer is gone.
bool send_all(int fd, const char* data, ssize_t size) {
  while (size > 0) {
    const ssize_t sent = ::send(fd, data, static_cast<std::size_t>(size), MSG_NOSIGNAL);
    if (sent <= 0) return false;
    data += sent;
    size -= sent;
  }
  return true;
}

}  // namespace

TcpRelay::TcpRelay(int target_port) : target_port_(target_port), listener_(::socket(AF_INET, SOCK_STREAM, 0)) {
  sockaddr_in address = loopback(0);
  socklen_t length = sizeof address;
  if (!listener_ || ::bind(listener_.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(listener_.get(), 64) != 0 ||
      ::getsockname(listener_.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    throw std::runtime_error("TcpRelay: cannot listen on loopback");
  }
  port_ = ntohs(address.sin_port);
  acceptor_ = std::thread([this] { accept_loop(); });
}

TcpRelay::~TcpRelay() {
  stopping_ = true;
  acceptor_.join();
  std::lock_guard lock(mutex_);
  for (std::thread& relay : relays_) relay.join();
}

void TcpRelay::accept_loop() {
  while (!stopping_) {
    pollfd ready{listener_.get(), POLLIN, 0};
    if (::poll(&ready, 1, kPollMs) <= 0) continue;
    UniqueFd client(::accept(listener_.get(), nullptr, nullptr));
    if (!client) continue;
    ++accepted_;
    std::lock_guard lock(mutex_);
    relays_.emplace_back([this, fd = std::move(client)]() mutable { relay(std::move(fd)); });
  }
}

void TcpRelay::relay(UniqueFd client) const {
  UniqueFd server(::socket(AF_INET, SOCK_STREAM, 0));
  const sockaddr_in target = loopback(target_port_);
  if (!server || ::connect(server.get(), reinterpret_cast<const sockaddr*>(&target), sizeof target) != 0) return;
  std::array<pollfd, 2> ends{pollfd{client.get(), POLLIN, 0}, pollfd{server.get(), POLLIN, 0}};
  std::array<char, 64 * 1024> buffer{};
  while (!stopping_) {
    if (::poll(ends.data(), ends.size(), kPollMs) <= 0) continue;
    for (std::size_t from = 0; from < ends.size(); ++from) {
      if (ends[from].revents == 0) continue;
      const ssize_t got = ::recv(ends[from].fd, buffer.data(), buffer.size(), 0);
      if (got <= 0 || !send_all(ends[1 - from].fd, buffer.data(), got)) return;  // one side closed
    }
  }
}

}  // namespace kernelhub::testing
