#pragma once
// Errors thrown by handoff. Two kinds, kept apart:
//  - handoff::UsageError: the caller broke a precondition (bad argument, wrong
//    thread, use after release). Fix the calling code.
//  - handoff::Error: a runtime condition the caller can handle (CUDA
//    unavailable, an import refused by the driver, a worker that stopped).
// Both carry the failing call and the API's own error name where there is one.
#include <stdexcept>
#include <string>
#include <string_view>

namespace handoff {

enum class Api { None, Cuda, Gl, Egl, Vulkan, System, DLPack };

std::string_view api_name(Api api) noexcept;

class Error : public std::runtime_error {
 public:
  // `call` is the API call or operation ("cuGraphicsMapResources"), `code` the
  // API's numeric result (0 when none), `code_name` its symbolic name
  // ("CUDA_ERROR_ALREADY_MAPPED"), `where` "file:line".
  Error(Api api, std::string call, long long code, std::string code_name, std::string detail,
        std::string where = {});
  explicit Error(std::string message);

  Api api() const noexcept { return api_; }
  const std::string& call() const noexcept { return call_; }
  long long code() const noexcept { return code_; }
  const std::string& code_name() const noexcept { return code_name_; }

 protected:
  // For subclasses whose message is composed already (what() == message).
  Error(std::string message, std::string call, std::string code_name);

 private:
  Api api_ = Api::None;
  std::string call_;
  long long code_ = 0;
  std::string code_name_;
};

class UsageError : public std::logic_error {
 public:
  explicit UsageError(const std::string& message) : std::logic_error(message) {}
};

// The worker was stopped (or is stopping) before a call could run.
class WorkerStopped : public Error {
 public:
  explicit WorkerStopped(const std::string& what) : Error(what) {}
};

}  // namespace handoff

#define HANDOFF_STRINGIFY_(x) #x
#define HANDOFF_STRINGIFY(x) HANDOFF_STRINGIFY_(x)
#define HANDOFF_WHERE (__FILE__ ":" HANDOFF_STRINGIFY(__LINE__))
