#include <handoff/log.hpp>
#include <handoff/vk_context.hpp>

#include <handoff/wait.hpp>

#include "common/spin.hpp"
#include <handoff/detail/vk_util.hpp>
#include <handoff/vk_check.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace handoff {

std::string_view vk_result_name(VkResult r) noexcept {
  switch (r) {
#define HANDOFF_VK_NAME(x) \
  case x: return #x;
    HANDOFF_VK_NAME(VK_SUCCESS)
    HANDOFF_VK_NAME(VK_NOT_READY)
    HANDOFF_VK_NAME(VK_TIMEOUT)
    HANDOFF_VK_NAME(VK_EVENT_SET)
    HANDOFF_VK_NAME(VK_EVENT_RESET)
    HANDOFF_VK_NAME(VK_INCOMPLETE)
    HANDOFF_VK_NAME(VK_ERROR_OUT_OF_HOST_MEMORY)
    HANDOFF_VK_NAME(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    HANDOFF_VK_NAME(VK_ERROR_INITIALIZATION_FAILED)
    HANDOFF_VK_NAME(VK_ERROR_DEVICE_LOST)
    HANDOFF_VK_NAME(VK_ERROR_MEMORY_MAP_FAILED)
    HANDOFF_VK_NAME(VK_ERROR_LAYER_NOT_PRESENT)
    HANDOFF_VK_NAME(VK_ERROR_EXTENSION_NOT_PRESENT)
    HANDOFF_VK_NAME(VK_ERROR_FEATURE_NOT_PRESENT)
    HANDOFF_VK_NAME(VK_ERROR_INCOMPATIBLE_DRIVER)
    HANDOFF_VK_NAME(VK_ERROR_TOO_MANY_OBJECTS)
    HANDOFF_VK_NAME(VK_ERROR_FORMAT_NOT_SUPPORTED)
    HANDOFF_VK_NAME(VK_ERROR_FRAGMENTED_POOL)
    HANDOFF_VK_NAME(VK_ERROR_UNKNOWN)
    HANDOFF_VK_NAME(VK_ERROR_OUT_OF_POOL_MEMORY)
    HANDOFF_VK_NAME(VK_ERROR_INVALID_EXTERNAL_HANDLE)
    HANDOFF_VK_NAME(VK_ERROR_FRAGMENTATION)
    HANDOFF_VK_NAME(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS)
#undef HANDOFF_VK_NAME
    default: return "VK_ERROR_(unnamed)";
  }
}

void check_vk(VkResult r, std::string_view call, const char* where, std::string_view detail) {
  if (r == VK_SUCCESS) return;
  throw Error(Api::Vulkan, std::string(detail::call_name(call)), r, std::string(vk_result_name(r)),
              std::string(detail), where ? where : "");
}

namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

bool default_validation() {
#ifndef NDEBUG
  return true;
#else
  const char* e = std::getenv("HANDOFF_VK_VALIDATION");
  return e && e[0] == '1';
#endif
}

bool has_layer(const char* name) {
  std::uint32_t n = 0;
  if (vkEnumerateInstanceLayerProperties(&n, nullptr) != VK_SUCCESS) return false;
  std::vector<VkLayerProperties> layers(n);
  if (vkEnumerateInstanceLayerProperties(&n, layers.data()) != VK_SUCCESS) return false;
  for (auto& l : layers)
    if (!std::strcmp(l.layerName, name)) return true;
  return false;
}

bool has_instance_extension(const char* name) {
  std::uint32_t n = 0;
  if (vkEnumerateInstanceExtensionProperties(nullptr, &n, nullptr) != VK_SUCCESS) return false;
  std::vector<VkExtensionProperties> ext(n);
  if (vkEnumerateInstanceExtensionProperties(nullptr, &n, ext.data()) != VK_SUCCESS) return false;
  for (auto& e : ext)
    if (!std::strcmp(e.extensionName, name)) return true;
  return false;
}

std::vector<VkExtensionProperties> device_extensions(VkPhysicalDevice pd) {
  std::uint32_t n = 0;
  HANDOFF_VK_CHECK(vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, nullptr));
  std::vector<VkExtensionProperties> ext(n);
  HANDOFF_VK_CHECK(vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, ext.data()));
  ext.resize(n);
  return ext;
}

bool has(const std::vector<VkExtensionProperties>& ext, const char* name) {
  return std::any_of(ext.begin(), ext.end(),
                     [&](const VkExtensionProperties& e) { return !std::strcmp(e.extensionName, name); });
}

bool buffer_exportable(VkPhysicalDevice pd, VkExternalMemoryHandleTypeFlagBits type) {
  auto info = vk::make<VkPhysicalDeviceExternalBufferInfo>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_BUFFER_INFO);
  info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
               VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  info.handleType = type;
  auto props = vk::make<VkExternalBufferProperties>(VK_STRUCTURE_TYPE_EXTERNAL_BUFFER_PROPERTIES);
  vkGetPhysicalDeviceExternalBufferProperties(pd, &info, &props);
  return props.externalMemoryProperties.externalMemoryFeatures &
         VK_EXTERNAL_MEMORY_FEATURE_EXPORTABLE_BIT;
}

bool semaphore_exportable(VkPhysicalDevice pd, VkExternalSemaphoreHandleTypeFlagBits type) {
  auto info = vk::make<VkPhysicalDeviceExternalSemaphoreInfo>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_SEMAPHORE_INFO);
  info.handleType = type;
  auto props = vk::make<VkExternalSemaphoreProperties>(VK_STRUCTURE_TYPE_EXTERNAL_SEMAPHORE_PROPERTIES);
  vkGetPhysicalDeviceExternalSemaphoreProperties(pd, &info, &props);
  return props.externalSemaphoreFeatures & VK_EXTERNAL_SEMAPHORE_FEATURE_EXPORTABLE_BIT;
}

bool timeline_feature(VkPhysicalDevice pd) {
  auto timeline = vk::make<VkPhysicalDeviceTimelineSemaphoreFeaturesKHR>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES_KHR);
  auto f2 = vk::make<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2);
  f2.pNext = &timeline;
  vkGetPhysicalDeviceFeatures2(pd, &f2);
  return timeline.timelineSemaphore;
}

bool storage_format(VkPhysicalDevice pd, VkFormat f) {
  VkFormatProperties p{};
  vkGetPhysicalDeviceFormatProperties(pd, f, &p);
  return p.optimalTilingFeatures & VK_FORMAT_FEATURE_STORAGE_IMAGE_BIT;
}

struct IdProps {
  VkPhysicalDeviceProperties props;
  VkPhysicalDeviceIDProperties id;
  VkPhysicalDeviceDriverProperties driver;
};

IdProps id_props(VkPhysicalDevice pd) {
  IdProps r{};
  r.id.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES;
  r.driver.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES;
  auto p2 = vk::make<VkPhysicalDeviceProperties2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2);
  p2.pNext = &r.id;
  vkGetPhysicalDeviceProperties(pd, &r.props);
  // VkPhysicalDeviceDriverProperties is core in 1.2; chain it only there.
  if (r.props.apiVersion >= VK_API_VERSION_1_2) r.id.pNext = &r.driver;
  vkGetPhysicalDeviceProperties2(pd, &p2);
  r.props = p2.properties;
  return r;
}

Uuid to_uuid(const std::uint8_t (&a)[VK_UUID_SIZE]) {
  Uuid u{};
  std::copy(a, a + VK_UUID_SIZE, u.bytes.begin());
  return u;
}

std::vector<VkPhysicalDevice> physical_devices(VkInstance instance) {
  std::uint32_t n = 0;
  HANDOFF_VK_CHECK(vkEnumeratePhysicalDevices(instance, &n, nullptr));
  std::vector<VkPhysicalDevice> pds(n);
  HANDOFF_VK_CHECK(vkEnumeratePhysicalDevices(instance, &n, pds.data()));
  pds.resize(n);
  return pds;
}

std::string version_string(std::uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) +
         "." + std::to_string(VK_API_VERSION_PATCH(v));
}

const char* type_name(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated GPU";
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete GPU";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual GPU";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "CPU";
    default: return "other";
  }
}

UniqueVkInstance make_instance(bool validation, const void* chained, bool debug_utils) {
  auto app = vk::make<VkApplicationInfo>(VK_STRUCTURE_TYPE_APPLICATION_INFO);
  app.pApplicationName = "handoff";
  app.pEngineName = "handoff";
  app.apiVersion = VK_API_VERSION_1_1;
  std::vector<const char*> layers, exts;
  if (validation) layers.push_back(kValidationLayer);
  if (debug_utils) exts.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  auto ci = vk::make<VkInstanceCreateInfo>(VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO);
  ci.pNext = chained;
  ci.pApplicationInfo = &app;
  ci.enabledLayerCount = std::uint32_t(layers.size());
  ci.ppEnabledLayerNames = layers.data();
  ci.enabledExtensionCount = std::uint32_t(exts.size());
  ci.ppEnabledExtensionNames = exts.data();
  VkInstance instance = VK_NULL_HANDLE;
  HANDOFF_VK_CHECK(vkCreateInstance(&ci, nullptr, &instance));
  return UniqueVkInstance(instance);
}

}  // namespace

// --- VkContext -----------------------------------------------------------------

VKAPI_ATTR VkBool32 VKAPI_CALL VkContext::messenger_callback(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT types,
    const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
  auto* self = static_cast<VkContext*>(user);
  VkValidationMessage m{severity, types, data && data->pMessageIdName ? data->pMessageIdName : "",
                        data && data->pMessage ? data->pMessage : ""};
  {
    std::lock_guard lock(self->messages_mutex_);
    self->messages_.push_back(m);
  }
  try {
    if (self->on_message_) {
      self->on_message_(m);
    } else {
      log(severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT ? LogLevel::Error : LogLevel::Warning,
          "Vulkan validation: " + m.id + ": " + m.message);
    }
  } catch (...) {
    // A callback must not unwind through the driver.
  }
  return VK_FALSE;  // never abort the call: the test decides
}

VkContext::VkContext(VkContextOptions options)
    : on_message_(std::move(options.on_message)),
      fence_spin_(std::make_unique<detail::SpinPolicy>(100'000, /*yield=*/true)) {
  // Each step leaves what it made in a member: a later step that throws
  // destroys it again, in reverse order.
  create_instance(options.validation.value_or(default_validation()));
  choose_physical_device(options.device_uuid);
  read_device_info();
  create_device();
}

VkContext::~VkContext() {
  std::lock_guard lock(queue_mutex_);
  if (device_) vkDeviceWaitIdle(device_.get());
}

void VkContext::create_instance(bool validation) {
  if (validation && !has_layer(kValidationLayer)) {
    throw Error(Api::Vulkan, "vkCreateInstance", VK_ERROR_LAYER_NOT_PRESENT, "VK_ERROR_LAYER_NOT_PRESENT",
                "validation was asked for but VK_LAYER_KHRONOS_validation is not installed "
                "(Debian: vulkan-validationlayers)",
                HANDOFF_WHERE);
  }
  const bool debug_utils = validation && has_instance_extension(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  auto mi = vk::make<VkDebugUtilsMessengerCreateInfoEXT>(VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT);
  mi.messageSeverity =
      VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  mi.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                   VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  mi.pfnUserCallback = &VkContext::messenger_callback;
  mi.pUserData = this;
  // Chained at creation, the messenger also sees instance creation and destruction.
  instance_ = make_instance(validation, debug_utils ? &mi : nullptr, debug_utils);
  if (!debug_utils) return;
  auto vkCreateDebugUtilsMessengerEXT = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
      vkGetInstanceProcAddr(instance_.get(), "vkCreateDebugUtilsMessengerEXT"));
  auto vkDestroyDebugUtilsMessengerEXT = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
      vkGetInstanceProcAddr(instance_.get(), "vkDestroyDebugUtilsMessengerEXT"));
  if (!vkCreateDebugUtilsMessengerEXT || !vkDestroyDebugUtilsMessengerEXT)
    throw Error(Api::Vulkan, "vkGetInstanceProcAddr", 0, {}, "VK_EXT_debug_utils entry points are missing",
                HANDOFF_WHERE);
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  HANDOFF_VK_CHECK(vkCreateDebugUtilsMessengerEXT(instance_.get(), &mi, nullptr, &messenger));
  messenger_ = UniqueVkDebugMessenger(messenger, {instance_.get(), vkDestroyDebugUtilsMessengerEXT});
}

void VkContext::choose_physical_device(const std::optional<Uuid>& want_uuid) {
  auto pds = physical_devices(instance_.get());
  if (pds.empty())
    throw Error(Api::Vulkan, "vkEnumeratePhysicalDevices", 0, {}, "no Vulkan device", HANDOFF_WHERE);
  std::string seen;
  int best_rank = -1;
  for (VkPhysicalDevice pd : pds) {
    IdProps p = id_props(pd);
    Uuid uuid = to_uuid(p.id.deviceUUID);
    seen += std::string(seen.empty() ? "" : ", ") + p.props.deviceName + " (" + to_string(uuid) + ")";
    if (p.props.apiVersion < VK_API_VERSION_1_1) continue;
    if (!has(device_extensions(pd), VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME)) continue;
    if (want_uuid) {
      if (uuid == *want_uuid) {
        physical_ = pd;
        break;
      }
      continue;
    }
    int rank = p.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU     ? 3
               : p.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ? 2
                                                                               : 1;
    if (rank > best_rank) {
      best_rank = rank;
      physical_ = pd;
    }
  }
  if (!physical_) {
    std::string want = want_uuid ? "a device with UUID " + to_string(*want_uuid) +
                                       " (the GL / CUDA device): interop across GPUs is refused"
                                 : "a Vulkan 1.1 device with VK_KHR_external_memory_fd";
    throw Error(Api::Vulkan, "select physical device", 0, {}, "found no " + want + "; devices: " + seen,
                HANDOFF_WHERE);
  }
}

void VkContext::read_device_info() {
  vkGetPhysicalDeviceMemoryProperties(physical_, &memory_props_);
  IdProps p = id_props(physical_);
  info_.name = p.props.deviceName;
  info_.device_uuid = to_uuid(p.id.deviceUUID);
  info_.driver_uuid = to_uuid(p.id.driverUUID);
  info_.api_version = p.props.apiVersion;
  info_.type = p.props.deviceType;
  auto ext = device_extensions(physical_);
  info_.opaque_fd_memory = buffer_exportable(physical_, VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT);
  info_.dma_buf_memory = has(ext, VK_EXT_EXTERNAL_MEMORY_DMA_BUF_EXTENSION_NAME) &&
                         buffer_exportable(physical_, VK_EXTERNAL_MEMORY_HANDLE_TYPE_DMA_BUF_BIT_EXT);
  const bool sem_fd = has(ext, VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME);
  info_.opaque_fd_semaphore = sem_fd && semaphore_exportable(physical_, VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT);
  info_.sync_fd_semaphore = sem_fd && semaphore_exportable(physical_, VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_SYNC_FD_BIT);
  info_.timeline_semaphore = has(ext, VK_KHR_TIMELINE_SEMAPHORE_EXTENSION_NAME) && timeline_feature(physical_);

  VkPhysicalDeviceFeatures features{};
  vkGetPhysicalDeviceFeatures(physical_, &features);
  info_.storage_image_r8_rg8 =
      features.shaderStorageImageExtendedFormats && features.shaderStorageImageWriteWithoutFormat &&
      storage_format(physical_, VK_FORMAT_R8_UNORM) && storage_format(physical_, VK_FORMAT_R8G8_UNORM) &&
      storage_format(physical_, VK_FORMAT_R16_UNORM) && storage_format(physical_, VK_FORMAT_R16G16_UNORM);

  // Queue family: compute (every compute queue also does transfers).
  std::uint32_t nq = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical_, &nq, nullptr);
  std::vector<VkQueueFamilyProperties> qf(nq);
  vkGetPhysicalDeviceQueueFamilyProperties(physical_, &nq, qf.data());
  auto compute = std::find_if(qf.begin(), qf.end(),
                              [](const VkQueueFamilyProperties& f) { return f.queueFlags & VK_QUEUE_COMPUTE_BIT; });
  if (compute == qf.end())
    throw Error(Api::Vulkan, "vkGetPhysicalDeviceQueueFamilyProperties", 0, {},
                "device " + info_.name + " has no compute queue", HANDOFF_WHERE);
  queue_family_ = std::uint32_t(compute - qf.begin());
}

void VkContext::create_device() {
  std::vector<const char*> dev_ext = {VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME};
  if (info_.dma_buf_memory) dev_ext.push_back(VK_EXT_EXTERNAL_MEMORY_DMA_BUF_EXTENSION_NAME);
  const bool sem_fd = has(device_extensions(physical_), VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME);
  if (sem_fd) dev_ext.push_back(VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME);
  auto timeline = vk::make<VkPhysicalDeviceTimelineSemaphoreFeaturesKHR>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES_KHR);
  timeline.timelineSemaphore = VK_TRUE;
  if (info_.timeline_semaphore) dev_ext.push_back(VK_KHR_TIMELINE_SEMAPHORE_EXTENSION_NAME);
  float prio = 1.0f;
  auto qci = vk::make<VkDeviceQueueCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO);
  qci.queueFamilyIndex = queue_family_;
  qci.queueCount = 1;
  qci.pQueuePriorities = &prio;
  VkPhysicalDeviceFeatures features{}, enabled{};
  vkGetPhysicalDeviceFeatures(physical_, &features);
  enabled.shaderStorageImageExtendedFormats = features.shaderStorageImageExtendedFormats;
  enabled.shaderStorageImageWriteWithoutFormat = features.shaderStorageImageWriteWithoutFormat;
  auto dci = vk::make<VkDeviceCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO);
  if (info_.timeline_semaphore) dci.pNext = &timeline;
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  dci.enabledExtensionCount = std::uint32_t(dev_ext.size());
  dci.ppEnabledExtensionNames = dev_ext.data();
  dci.pEnabledFeatures = &enabled;
  VkDevice device = VK_NULL_HANDLE;
  HANDOFF_VK_CHECK(vkCreateDevice(physical_, &dci, nullptr, &device), info_.name);
  device_ = UniqueVkDevice(device);
  vkGetDeviceQueue(device, queue_family_, 0, &queue_);
  get_memory_fd = reinterpret_cast<PFN_vkGetMemoryFdKHR>(vkGetDeviceProcAddr(device, "vkGetMemoryFdKHR"));
  if (sem_fd)
    get_semaphore_fd = reinterpret_cast<PFN_vkGetSemaphoreFdKHR>(vkGetDeviceProcAddr(device, "vkGetSemaphoreFdKHR"));
  if (!get_memory_fd)
    throw Error(Api::Vulkan, "vkGetDeviceProcAddr", 0, {}, "vkGetMemoryFdKHR is missing", HANDOFF_WHERE);

  auto pci = vk::make<VkCommandPoolCreateInfo>(VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO);
  pci.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT | VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pci.queueFamilyIndex = queue_family_;
  VkCommandPool pool = VK_NULL_HANDLE;
  HANDOFF_VK_CHECK(vkCreateCommandPool(device, &pci, nullptr, &pool));
  pool_ = UniqueVkCommandPool(pool, {device});
}

std::vector<VkValidationMessage> VkContext::validation_messages() const {
  std::lock_guard lock(messages_mutex_);
  return messages_;
}
std::size_t VkContext::validation_message_count() const {
  std::lock_guard lock(messages_mutex_);
  return messages_.size();
}
void VkContext::clear_validation_messages() {
  std::lock_guard lock(messages_mutex_);
  messages_.clear();
}

std::uint32_t VkContext::memory_type(std::uint32_t type_bits, VkMemoryPropertyFlags required) const {
  for (std::uint32_t i = 0; i < memory_props_.memoryTypeCount; ++i) {
    if ((type_bits & (1u << i)) && (memory_props_.memoryTypes[i].propertyFlags & required) == required)
      return i;
  }
  throw Error(Api::Vulkan, "vkGetPhysicalDeviceMemoryProperties", 0, {},
              "no memory type with properties 0x" + std::to_string(required) + " among type bits " +
                  std::to_string(type_bits),
              HANDOFF_WHERE);
}

void VkContext::queue_submit(const VkSubmitInfo& submit, VkFence fence) {
  std::vector<Deferred> finished;  // destroyed after the lock is released
  std::lock_guard lock(queue_mutex_);
  if (!deferred_.empty()) finished = take_finished();
  HANDOFF_VK_CHECK(vkQueueSubmit(queue_, 1, &submit, fence));
}

void VkContext::wait_idle() noexcept {
  std::lock_guard lock(queue_mutex_);
  VkResult r = vkQueueWaitIdle(queue_);
  if (r != VK_SUCCESS) log(LogLevel::Error, "VkContext: vkQueueWaitIdle failed with " + std::string(vk_result_name(r)));
}

void VkContext::wait_fence(VkFence fence, std::string_view what) {
  VkResult status = VK_NOT_READY;
  detail::SpinPolicy::Wait w;
  const bool caught = fence_spin_->spin(
      [&] {
        status = vkGetFenceStatus(device_.get(), fence);
        return status != VK_NOT_READY;
      },
      w);
  if (caught) {
    check_vk(status, "vkGetFenceStatus", HANDOFF_WHERE, what);  // VK_ERROR_DEVICE_LOST
    return;
  }
  // Slices short enough that a stuck GPU is noticed soon after the limit,
  // long enough that the waiter sleeps in the driver rather than polls.
  using Clock = std::chrono::steady_clock;
  constexpr std::chrono::nanoseconds kSlice = std::chrono::milliseconds(50);
  const std::chrono::nanoseconds limit = wait_limit();
  const Clock::time_point deadline = Clock::now() + limit;
  for (;;) {
    const auto left = std::max(std::chrono::nanoseconds(0), deadline - Clock::now());
    VkResult r = vkWaitForFences(device_.get(), 1, &fence, VK_TRUE, std::uint64_t(std::min(left, kSlice).count()));
    if (r == VK_SUCCESS) break;
    if (r != VK_TIMEOUT) check_vk(r, "vkWaitForFences", HANDOFF_WHERE, what);
    if (left == std::chrono::nanoseconds(0)) throw WaitTimeout(std::string(what), limit);
  }
  fence_spin_->slept(w);
}

std::vector<VkContext::Deferred> VkContext::take_finished() noexcept {
  // Signalled, or the device is lost: either way the GPU no longer uses them.
  auto done = std::partition(deferred_.begin(), deferred_.end(), [&](const Deferred& d) {
    return vkGetFenceStatus(device_.get(), d.fence.get()) == VK_NOT_READY;
  });
  std::vector<Deferred> finished;
  if (done == deferred_.end()) return finished;
  try {
    finished.assign(std::make_move_iterator(done), std::make_move_iterator(deferred_.end()));
  } catch (const std::bad_alloc&) {
    return finished;  // freed at a later call, or with the context
  }
  deferred_.erase(done, deferred_.end());
  return finished;
}

void VkContext::defer_destruction(std::shared_ptr<const void> objects) noexcept {
  std::vector<Deferred> finished;  // destroyed after the lock is released
  std::lock_guard lock(queue_mutex_);
  finished = take_finished();
  try {
    // A submission of no batches still signals its fence, once everything
    // submitted before it has completed.
    auto fci = vk::make<VkFenceCreateInfo>(VK_STRUCTURE_TYPE_FENCE_CREATE_INFO);
    VkFence raw = VK_NULL_HANDLE;
    HANDOFF_VK_CHECK(vkCreateFence(device_.get(), &fci, nullptr, &raw));
    UniqueVkFence fence(raw, {device_.get()});
    HANDOFF_VK_CHECK(vkQueueSubmit(queue_, 0, nullptr, raw));
    deferred_.push_back(Deferred{std::move(fence), std::move(objects)});
  } catch (const std::exception& e) {
    log(LogLevel::Error, std::string("VkContext::defer_destruction: ") + e.what() + "; waiting for the queue instead");
    vkQueueWaitIdle(queue_);
  }
}

void VkContext::submit_and_wait(const std::function<void(VkCommandBuffer)>& record) {
  std::vector<Deferred> finished;  // destroyed after the lock is released
  std::lock_guard lock(queue_mutex_);
  finished = take_finished();
  const VkDevice dev = device_.get();
  auto ai = vk::make<VkCommandBufferAllocateInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
  ai.commandPool = pool_.get();
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  VkCommandBuffer raw_cb = VK_NULL_HANDLE;
  HANDOFF_VK_CHECK(vkAllocateCommandBuffers(dev, &ai, &raw_cb));
  UniqueVkCommandBuffer cb(raw_cb, {dev, pool_.get()});
  auto bi = vk::make<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  HANDOFF_VK_CHECK(vkBeginCommandBuffer(raw_cb, &bi));
  record(raw_cb);
  HANDOFF_VK_CHECK(vkEndCommandBuffer(raw_cb));
  auto fci = vk::make<VkFenceCreateInfo>(VK_STRUCTURE_TYPE_FENCE_CREATE_INFO);
  VkFence raw_fence = VK_NULL_HANDLE;
  HANDOFF_VK_CHECK(vkCreateFence(dev, &fci, nullptr, &raw_fence));
  UniqueVkFence fence(raw_fence, {dev});
  auto si = vk::make<VkSubmitInfo>(VK_STRUCTURE_TYPE_SUBMIT_INFO);
  si.commandBufferCount = 1;
  si.pCommandBuffers = &raw_cb;
  HANDOFF_VK_CHECK(vkQueueSubmit(queue_, 1, &si, raw_fence));
  try {
    wait_fence(raw_fence, "Vulkan fence of VkContext::submit_and_wait");
  } catch (const WaitTimeout&) {
    // Still pending: the command buffer goes when its own fence has signalled.
    deferred_.push_back(Deferred{std::move(fence), std::make_shared<UniqueVkCommandBuffer>(std::move(cb))});
    throw;
  }
}

// --- capabilities ----------------------------------------------------------------

VkCapabilities vk_capabilities() {
  VkCapabilities caps;
  try {
    caps.validation_layer = has_layer(kValidationLayer);
    PFN_vkEnumerateInstanceVersion ver = reinterpret_cast<PFN_vkEnumerateInstanceVersion>(
        vkGetInstanceProcAddr(nullptr, "vkEnumerateInstanceVersion"));
    caps.instance_version = VK_API_VERSION_1_0;
    if (ver) ver(&caps.instance_version);
    UniqueVkInstance instance = make_instance(false, nullptr, false);
    caps.loader = true;
    try {
      for (VkPhysicalDevice pd : physical_devices(instance.get())) {
        VkDeviceCapabilities d;
        IdProps p = id_props(pd);
        d.name = p.props.deviceName;
        d.type = p.props.deviceType;
        d.api_version = p.props.apiVersion;
        if (p.props.apiVersion >= VK_API_VERSION_1_2)
          d.driver = std::string(p.driver.driverName) + " " + p.driver.driverInfo;
        d.device_uuid = to_uuid(p.id.deviceUUID);
        d.driver_uuid = to_uuid(p.id.driverUUID);
        auto ext = device_extensions(pd);
        d.external_memory_fd = has(ext, VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME);
        d.opaque_fd_memory = d.external_memory_fd &&
                             buffer_exportable(pd, VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT);
        d.dma_buf_memory = has(ext, VK_EXT_EXTERNAL_MEMORY_DMA_BUF_EXTENSION_NAME) &&
                           buffer_exportable(pd, VK_EXTERNAL_MEMORY_HANDLE_TYPE_DMA_BUF_BIT_EXT);
        bool sem = has(ext, VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME);
        d.opaque_fd_semaphore = sem && semaphore_exportable(pd, VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT);
        d.sync_fd_semaphore = sem && semaphore_exportable(pd, VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_SYNC_FD_BIT);
        caps.devices.push_back(std::move(d));
      }
    } catch (const std::exception& e) {
      caps.error = e.what();
    }
  } catch (const std::exception& e) {
    caps.loader = false;
    caps.error = e.what();
  }
  return caps;
}

std::string to_string(const VkCapabilities& caps) {
  std::string s;
  if (!caps.loader) return "Vulkan: unavailable (" + caps.error + ")\n";
  s += "Vulkan: instance " + version_string(caps.instance_version) + ", validation layer " +
       (caps.validation_layer ? "installed" : "not installed") + ", " +
       std::to_string(caps.devices.size()) + " device(s)\n";
  if (!caps.error.empty()) s += "  error: " + caps.error + "\n";
  auto yn = [](bool b) { return b ? "yes" : "no"; };
  for (std::size_t i = 0; i < caps.devices.size(); ++i) {
    const auto& d = caps.devices[i];
    s += "  [" + std::to_string(i) + "] " + d.name + " (" + type_name(d.type) + ", Vulkan " +
         version_string(d.api_version) + (d.driver.empty() ? "" : ", " + d.driver) + ")\n";
    s += "      device UUID " + to_string(d.device_uuid) + ", driver UUID " +
         to_string(d.driver_uuid) + "\n";
    s += "      external memory: OPAQUE_FD " + std::string(yn(d.opaque_fd_memory)) + ", DMA_BUF " +
         yn(d.dma_buf_memory) + "\n";
    s += "      external semaphores: OPAQUE_FD " + std::string(yn(d.opaque_fd_semaphore)) + ", SYNC_FD " +
         yn(d.sync_fd_semaphore) + "\n";
    s += std::string("      Vulkan -> GL sync: ") +
         (d.opaque_fd_semaphore ? "exported semaphores where GL has GL_EXT_semaphore_fd, else CPU fences"
                                : "CPU fences (no exportable semaphores)") +
         "\n";
  }
  return s;
}

}  // namespace handoff
