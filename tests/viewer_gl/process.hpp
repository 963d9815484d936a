#pragma once
// Runs handoff-view (or another of the project's programs) as a user would:
// argv, environment changes, combined stdout + stderr, exit code; killed (and
// reported) after a timeout so a hang fails the test instead of stalling the suite.
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

extern char** environ;

namespace handoff::view::test {

struct ProcessResult {
  int exit_code = -1;  // -1 when killed by a signal / timeout
  bool timed_out = false;
  std::string output;
};

// Runs `exe` with `args` (argv[0] is `exe`).
inline ProcessResult run_program(const std::string& exe, const std::vector<std::string>& args,
                                 const std::vector<std::string>& unset_env = {},
                                 const std::vector<std::string>& set_env = {}, int timeout_s = 120) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    bool drop = false;
    for (const auto& u : unset_env)
      if (kv.rfind(u + "=", 0) == 0) drop = true;
    for (const auto& s : set_env)
      if (kv.rfind(s.substr(0, s.find('=') + 1), 0) == 0) drop = true;
    if (!drop) env.push_back(kv);
  }
  for (const auto& s : set_env) env.push_back(s);
  std::vector<char*> envp;
  for (auto& s : env) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> full{exe};
  full.insert(full.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : full) argv.push_back(s.data());
  argv.push_back(nullptr);

  int fds[2];
  ProcessResult r;
  if (pipe(fds) != 0) return r;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    r.output = std::string("posix_spawn failed: ") + std::strerror(rc);
    return r;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  char buf[4096];
  for (;;) {
    pollfd p{fds[0], POLLIN, 0};
    const int left = int(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count());
    if (left <= 0) {
      r.timed_out = true;
      kill(pid, SIGKILL);
      break;
    }
    if (poll(&p, 1, left) <= 0) continue;
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    r.output.append(buf, std::size_t(n));
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// handoff-view with --gl-debug: any KHR_debug error in the app (window or headless) exits 3.
inline ProcessResult run_viewer(const std::vector<std::string>& args, const std::vector<std::string>& unset_env = {},
                                const std::vector<std::string>& set_env = {}, int timeout_s = 120) {
  std::vector<std::string> full{"--gl-debug"};
  full.insert(full.end(), args.begin(), args.end());
  return run_program(HANDOFF_VIEW_EXE, full, unset_env, set_env, timeout_s);
}

}  // namespace handoff::view::test
