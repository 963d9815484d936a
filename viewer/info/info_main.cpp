// handoff-info: prints the CUDA state (and why), the headless GL renderer with
// its interop extensions, the Vulkan devices, and "same GPU" lines comparing
// device UUIDs, and the video decoders (software, NVDEC). Exits 0 whatever it finds; 2 for a bad command line.
//   handoff-info [--cuda-device N]
#include <handoff/cuda.hpp>
#include <handoff/cuda_egl.hpp>
#include <handoff/gl_worker.hpp>
#include <handoff/log.hpp>
#include <handoff/media/video_decoder.hpp>
#ifdef HANDOFF_HAVE_VULKAN
#include <handoff/vk_context.hpp>
#endif

#include <EGL/egl.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace {

void line(const std::string& key, const std::string& value) {
  std::printf("%-16s %s\n", (key + ":").c_str(), value.c_str());
}

const char* yes_no(bool b) { return b ? "yes" : "no"; }

struct NamedUuid {
  std::string who;
  handoff::Uuid uuid;
};

// The devices of one API to compare with GL's, or why there are none.
struct Devices {
  std::vector<NamedUuid> list;
  std::string none_because;  // when list is empty: "CUDA unavailable", "no CUDA device 3 (1 found)", ...
};

struct GlFound {
  bool works = false;
  std::optional<NamedUuid> uuid;
};

// CUDA: the driver's state, then one line per device.
Devices print_cuda(int wanted) {
  Devices out;
  const auto& d = handoff::cuda::driver();
  line("CUDA", d.describe());
  if (!d.usable()) {
    out.none_because = "CUDA unavailable";
    return out;
  }
  try {
    const auto devices = d.devices();
    out.none_because = "no CUDA device " + std::to_string(wanted) + " (" + std::to_string(devices.size()) + " found)";
    for (const auto& dev : devices) {
      char mem[32];
      std::snprintf(mem, sizeof mem, "%.1f GiB", double(dev.total_memory) / (1024.0 * 1024.0 * 1024.0));
      line("CUDA device " + std::to_string(dev.ordinal),
           dev.name + ", compute " + std::to_string(dev.cc_major) + "." + std::to_string(dev.cc_minor) + ", " +
               mem + ", UUID " + handoff::to_string(dev.uuid) + (dev.ordinal == wanted ? " (selected)" : ""));
      if (dev.ordinal == wanted)
        out.list.push_back({"CUDA device " + std::to_string(dev.ordinal) + " '" + dev.name + "'", dev.uuid});
    }
  } catch (const std::exception& e) {
    line("CUDA devices", std::string("query failed: ") + e.what());
    out.none_because = "the CUDA device query failed";
  }
  return out;
}

// GL through a headless EGL context on the GL worker.
GlFound print_gl(int cuda_device) {
  GlFound found;
  try {
    handoff::GlWorkerOptions o;
    o.headless.cuda_device = cuda_device;
    handoff::GlWorker gl(o);
    const handoff::GlInfo& i = gl.info();
    found.works = true;
    line("GL", i.renderer + " | " + i.version + " | " + i.vendor + " | " + i.platform);
    line("Viewer colour", i.software_rasteriser()
                              ? "on the CPU at the size shown (GL is a software rasteriser; --convert gpu: the shader)"
                              : "the fragment shader (--convert cpu: on the CPU)");
    line("GL interop", std::string("GL_EXT_memory_object ") + yes_no(i.memory_object) + ", GL_EXT_memory_object_fd " +
                           yes_no(i.memory_object_fd) + ", GL_EXT_semaphore " + yes_no(i.semaphore) +
                           ", GL_EXT_semaphore_fd " + yes_no(i.semaphore_fd) + ", GL_KHR_debug " +
                           yes_no(i.khr_debug));
    // DMA-BUF planes into CUDA: external memory where the driver takes DMABUF_FD,
    // else the EGLImage route through this display.
    const std::string egl_route = gl.run([] { return handoff::egl_route_unavailable(eglGetCurrentDisplay()); });
    line("DMA-BUF->CUDA", std::string("external memory (DMABUF_FD) where the CUDA driver takes it; EGLImage route: ") +
                              (egl_route.empty() ? "yes" : "no, " + egl_route));
    if (i.device_uuid) {
      line("GL device UUID", handoff::to_string(*i.device_uuid) +
                                 (i.driver_uuid ? " (driver " + handoff::to_string(*i.driver_uuid) + ")" : ""));
      found.uuid = NamedUuid{"GL '" + i.renderer + "'", *i.device_uuid};
      return found;
    }
    line("GL device UUID", "not reported (no GL_EXT_memory_object)");
  } catch (const std::exception& e) {
    line("GL", std::string("unavailable: ") + e.what());
  }
  return found;
}

// ---- Vulkan: maintained by the Vulkan engineer -------------------------------
// Prints the Vulkan devices (one line each) and returns their device UUIDs for
// the "same GPU" lines.
Devices print_vulkan() {
  Devices out;
  out.none_because = "Vulkan unavailable";
#ifdef HANDOFF_HAVE_VULKAN
  try {
    handoff::VkCapabilities caps = handoff::vk_capabilities();
    if (!caps.loader) {
      line("Vulkan", "unavailable: " + caps.error);
      return out;
    }
    out.none_because = "no Vulkan device";
    line("Vulkan", "instance " + std::to_string(VK_API_VERSION_MAJOR(caps.instance_version)) + "." +
                       std::to_string(VK_API_VERSION_MINOR(caps.instance_version)) + ", " +
                       std::to_string(caps.devices.size()) + " device(s), validation layer " +
                       yes_no(caps.validation_layer));
    for (std::size_t n = 0; n < caps.devices.size(); ++n) {
      const auto& d = caps.devices[n];
      line("Vulkan device " + std::to_string(n),
           d.name + " | " + d.driver + " | OPAQUE_FD memory " + yes_no(d.opaque_fd_memory) + ", DMA_BUF memory " +
               yes_no(d.dma_buf_memory) + ", OPAQUE_FD semaphore " + yes_no(d.opaque_fd_semaphore) +
               " | UUID " + handoff::to_string(d.device_uuid));
      line("Vulkan device " + std::to_string(n) + " -> GL sync",
           d.opaque_fd_semaphore ? "exported semaphores where GL has GL_EXT_semaphore_fd, else CPU fences"
                                 : "CPU fences (the device exports no semaphores)");
      out.list.push_back({"Vulkan device " + std::to_string(n) + " '" + d.name + "'", d.device_uuid});
    }
  } catch (const std::exception& e) {
    line("Vulkan", std::string("query failed: ") + e.what());
    out.none_because = "the Vulkan query failed";
  }
#else
  line("Vulkan", "not built (HANDOFF_WITH_VULKAN=OFF)");
#endif
  return out;
}
// ---- end of the Vulkan part --------------------------------------------------

void print_same_gpu(const GlFound& gl, const Devices& others, const std::string& what) {
  if (!gl.works) {
    line("Same GPU", what + " and GL: unknown (no GL)");
    return;
  }
  if (!gl.uuid) {
    line("Same GPU", what + " and GL: unknown (GL reports no device UUID)");
    return;
  }
  if (others.list.empty()) {
    line("Same GPU", what + " and GL: unknown (" + others.none_because + ")");
    return;
  }
  for (const auto& o : others.list) {
    const bool same = o.uuid == gl.uuid->uuid;
    line("Same GPU", o.who + " and " + gl.uuid->who + ": " +
                         (same ? "yes" : "NO (UUID " + handoff::to_string(o.uuid) + " vs " +
                                             handoff::to_string(gl.uuid->uuid) + "): interop between them is refused"));
  }
}

// A non-negative integer, or nothing.
std::optional<int> parse_ordinal(const char* text) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < 0 || v > 1024) return std::nullopt;
  return int(v);
}

}  // namespace

int main(int argc, char** argv) {
  int cuda_device = 0;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--cuda-device")) {
      const std::optional<int> n = i + 1 < argc ? parse_ordinal(argv[i + 1]) : std::nullopt;
      if (!n) {
        std::fprintf(stderr, "handoff-info: --cuda-device needs a device ordinal (0, 1, ...)%s%s%s\n",
                     i + 1 < argc ? ", not '" : "", i + 1 < argc ? argv[i + 1] : "", i + 1 < argc ? "'" : "");
        return 2;
      }
      cuda_device = *n;
      ++i;
    } else if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
      std::printf("usage: handoff-info [--cuda-device N]\n"
                  "Prints what CUDA, headless GL (EGL) and Vulkan offer here and whether they are one GPU.\n");
      return 0;
    } else {
      std::fprintf(stderr, "handoff-info: unknown argument '%s' (try --help)\n", argv[i]);
      return 2;
    }
  }
  handoff::set_log_level(handoff::LogLevel::Error);  // the lines below say what matters
  const auto cuda = print_cuda(cuda_device);
  const auto gl = print_gl(cuda_device);
  const auto vk = print_vulkan();
  print_same_gpu(gl, cuda, "CUDA");
  print_same_gpu(gl, vk, "Vulkan");
  for (const auto& [name, state] : handoff::media::video_decoders_report()) line(name, state);
  if (!gl.works) {
    line("Frame path", "none: no GL context here, so no GL buffers to map or register (the viewer cannot run)");
  } else if (handoff::cuda::driver().usable()) {
    if (cuda.list.empty())
      line("Frame path", "host mapping of GL buffers (" + cuda.none_because + ")");
    else if (gl.uuid && cuda.list.front().uuid != gl.uuid->uuid)
      line("Frame path", "CUDA-GL registration refused (different GPUs); use MapBackend::Host or another device");
    else
      line("Frame path", "CUDA device pointers into registered GL buffers");
  } else {
    line("Frame path", "host mapping of GL buffers (glMapNamedBufferRange): CUDA unavailable");
  }
  return 0;
}
