#pragma once
// A peer process for the live tests (the handoff_live_peer program): started
// with posix_spawn, talked to by lines on stdin / stdout, every read bounded
// by a timeout, killed and reaped by the destructor so a failing test never
// leaves it behind.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace handoff::live::test {

class PeerProcess {
 public:
  // Runs HANDOFF_LIVE_PEER with `args`; `env` entries ("K=V") replace or add to this process's environment.
  explicit PeerProcess(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
    int in[2], out[2];
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) {
      ADD_FAILURE() << "pipe2 failed";
      return;
    }
    std::vector<std::string> full{HANDOFF_LIVE_PEER};
    full.insert(full.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& s : full) argv.push_back(s.data());
    argv.push_back(nullptr);
    std::vector<std::string> envs;
    for (char** e = environ; *e; ++e) {
      const std::string kv = *e;
      bool replaced = false;
      for (const auto& n : env) replaced = replaced || kv.rfind(n.substr(0, n.find('=') + 1), 0) == 0;
      if (!replaced) envs.push_back(kv);
    }
    envs.insert(envs.end(), env.begin(), env.end());
    std::vector<char*> envp;
    for (auto& s : envs) envp.push_back(s.data());
    envp.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    const int rc = posix_spawn(&pid_, argv[0], &fa, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&fa);
    ::close(in[0]);
    ::close(out[1]);
    stdin_ = in[1];
    stdout_ = out[0];
    if (rc != 0) {
      ADD_FAILURE() << "posix_spawn " << full[0] << ": " << rc;
      pid_ = -1;
    }
  }
  ~PeerProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      (void)wait_exit(std::chrono::seconds(10));
    }
    if (stdin_ >= 0) ::close(stdin_);
    if (stdout_ >= 0) ::close(stdout_);
  }
  PeerProcess(const PeerProcess&) = delete;
  PeerProcess& operator=(const PeerProcess&) = delete;

  pid_t pid() const { return pid_; }

  // The next line of output, or nullopt when none came within `timeout` (or it exited).
  std::optional<std::string> line(std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      if (auto n = buffer_.find('\n'); n != std::string::npos) {
        std::string l = buffer_.substr(0, n);
        buffer_.erase(0, n + 1);
        return l;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0 || stdout_ < 0) return std::nullopt;
      pollfd p{stdout_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      char chunk[4096];
      const ssize_t r = ::read(stdout_, chunk, sizeof chunk);
      if (r <= 0) {
        ::close(stdout_);
        stdout_ = -1;
        return std::nullopt;
      }
      buffer_.append(chunk, static_cast<std::size_t>(r));
    }
  }

  // Reads lines until one starts with `prefix`; returns it (a test failure and "" on timeout).
  std::string expect(const std::string& prefix, std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      auto l = line(std::max(left, std::chrono::milliseconds(0)));
      if (!l) {
        ADD_FAILURE() << "the peer did not print '" << prefix << "' in time";
        return "";
      }
      if (l->rfind(prefix, 0) == 0) return *l;
      if (l->rfind("FAIL", 0) == 0) ADD_FAILURE() << "peer: " << *l;
    }
  }

  void send(const std::string& text) {
    const std::string l = text + "\n";
    if (stdin_ >= 0) (void)!::write(stdin_, l.data(), l.size());
  }
  void close_stdin() {
    if (stdin_ >= 0) ::close(stdin_);
    stdin_ = -1;
  }
  void kill(int sig) {
    if (pid_ > 0) ::kill(pid_, sig);
  }
  // SIGSTOP, returning once the process is stopped (a signal lands
  // asynchronously: until then it may still run).
  bool stop(std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    kill(SIGSTOP);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (pid_ > 0) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG | WUNTRACED) == pid_ && WIFSTOPPED(status)) return true;
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return false;
  }
  // The exit code (-signal when killed), or nullopt when it did not exit in time.
  std::optional<int> wait_exit(std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (pid_ > 0) {
      int status = 0;
      const pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
      }
      if (std::chrono::steady_clock::now() > deadline) return std::nullopt;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return std::nullopt;
  }

 private:
  pid_t pid_ = -1;
  int stdin_ = -1;
  int stdout_ = -1;
  std::string buffer_;
};

}  // namespace handoff::live::test
