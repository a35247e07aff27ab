// Vulkan instance and device setup, device choice with reasons, validation message counting.
#include "context.h"

#include <fmt/format.h>
#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <regex>

#include "check.h"
#include "kernel.h"
#include "profile_overrides.h"
#include "shader_features.h"

namespace vkllm {

// --- environment (read here and nowhere else)

namespace {

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

std::optional<uint32_t> env_device_index() {
  auto v = env("VKLLM_DEVICE");
  if (!v) return std::nullopt;
  char* end = nullptr;
  unsigned long i = std::strtoul(v->c_str(), &end, 10);
  ENSURE(*end == '\0' && i < UINT32_MAX, fmt::format("VKLLM_DEVICE='{}' is not a device index", *v));
  return static_cast<uint32_t>(i);
}

// "1048576", "512K", "64M", "2GiB": bytes or powers of 1024.
uint64_t env_memory_limit() {
  auto v = env("VKLLM_MEMORY_LIMIT");
  if (!v) return 0;
  static const std::regex size(R"((\d{1,12})([KMG]?)(i?B)?)", std::regex::icase);
  std::smatch m;
  ENSURE(std::regex_match(*v, m, size),
         fmt::format("VKLLM_MEMORY_LIMIT='{}' is not a size (bytes, or a number with K, M or G)", *v));
  int shift = m[2].length() == 0 ? 0 : std::string("KMG").find(char(std::toupper(m[2].str()[0]))) * 10 + 10;
  return std::stoull(m[1].str()) << shift;
}

}  // namespace

bool validation_requested(const ContextOptions& options) {
  if (options.validation) return *options.validation;
  auto v = env("VKLLM_VALIDATE");
  return v && *v != "0";
}

bool check_requested() {
  auto v = env("VKLLM_CHECK");
  return v && *v != "0";
}

std::optional<uint32_t> requested_device(const ContextOptions& options) {
  return options.device ? options.device : env_device_index();
}

std::string requested_profile(const ContextOptions& options) {
  return options.profile.empty() ? env("VKLLM_PROFILE").value_or("") : options.profile;
}

uint64_t requested_memory_limit(const ContextOptions& options) {
  return options.memory_limit ? options.memory_limit : env_memory_limit();
}

CoopRequest coop_request(const Instance& instance, const ContextOptions& options) {
  return {.mode = options.coopmat.empty() ? env("VKLLM_COOPMAT").value_or("") : options.coopmat,
          .validation = instance.validation(),
          .layer_knows_khr = instance.layer_version() >= kLayerKnowsKhrCoopmat};
}

UsableMemory usable_memory(const DeviceCaps& caps, uint64_t memory_limit) {
  uint64_t device = caps.usable_device_bytes();
  if (memory_limit && memory_limit < device) return {.bytes = memory_limit, .limited = true};
  return {.bytes = device};
}

// --- validation messages

namespace {

std::atomic<uint64_t> g_validation_errors{0};

VKAPI_ATTR VkBool32 VKAPI_CALL on_validation_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                     VkDebugUtilsMessageTypeFlagsEXT,
                                                     const VkDebugUtilsMessengerCallbackDataEXT* data, void*) {
  bool error = severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  if (error) ++g_validation_errors;
  std::fprintf(stderr, "vulkan validation %s: %s\n", error ? "error" : "warning", data->pMessage);
  return VK_FALSE;
}

VkDebugUtilsMessengerCreateInfoEXT messenger_info() {
  return {.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
          .messageSeverity =
              VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
          .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                         VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
          .pfnUserCallback = on_validation_message};
}

// The layer's specVersion, or nothing when it is not installed.
std::optional<uint32_t> installed_layer_version(const char* name) {
  uint32_t n = 0;
  vkEnumerateInstanceLayerProperties(&n, nullptr);
  std::vector<VkLayerProperties> layers(n);
  vkEnumerateInstanceLayerProperties(&n, layers.data());
  for (const VkLayerProperties& l : layers)
    if (std::strcmp(l.layerName, name) == 0) return l.specVersion;
  return std::nullopt;
}

}  // namespace

uint64_t validation_error_count() { return g_validation_errors.load(); }

void destroy_debug_messenger(VkInstance instance, VkDebugUtilsMessengerEXT m, const VkAllocationCallbacks* a) {
  auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
      vkGetInstanceProcAddr(instance, "vkDestroyDebugUtilsMessengerEXT"));
  if (destroy) destroy(instance, m, a);
}

// --- instance

Instance::Instance(bool validation) : validation_(validation) {
  const char* kLayer = "VK_LAYER_KHRONOS_validation";
  if (validation) {
    std::optional<uint32_t> version = installed_layer_version(kLayer);
    ENSURE(version,
           "the Vulkan validation layer was requested but is not installed (apt install vulkan-validationlayers)");
    layer_version_ = *version;
  }
  uint32_t api = 0;
  ENSURE(vkEnumerateInstanceVersion(&api) == VK_SUCCESS && VK_API_VERSION_MINOR(api) >= 2,
         "the Vulkan loader is older than 1.2; install a newer libvulkan1");

  VkApplicationInfo app{.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                        .pApplicationName = "vkllm",
                        .pEngineName = "vkllm",
                        .apiVersion = VK_API_VERSION_1_3};
  std::vector<const char*> extensions;
  std::vector<const char*> layers;
  VkDebugUtilsMessengerCreateInfoEXT debug = messenger_info();
  // Synchronization validation proves the stream's barriers; it is on whenever validation is.
  VkValidationFeatureEnableEXT enables[] = {VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
  VkValidationFeaturesEXT features{.sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT,
                                   .pNext = &debug,
                                   .enabledValidationFeatureCount = 1,
                                   .pEnabledValidationFeatures = enables};
  VkInstanceCreateInfo info{.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
  if (validation) {
    layers.push_back(kLayer);
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    info.pNext = &features;
  }
  info.enabledLayerCount = static_cast<uint32_t>(layers.size());
  info.ppEnabledLayerNames = layers.data();
  info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();

  VkInstance instance = VK_NULL_HANDLE;
  VkResult r = vkCreateInstance(&info, nullptr, &instance);
  ENSURE(r != VK_ERROR_INCOMPATIBLE_DRIVER,
         "no Vulkan driver found (on a machine without a GPU: apt install mesa-vulkan-drivers)");
  VK_CHECK(r);
  instance_ = UniqueInstance(instance);
  if (validation) {
    auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance, "vkCreateDebugUtilsMessengerEXT"));
    VkDebugUtilsMessengerEXT m = VK_NULL_HANDLE;
    VK_CHECK(create(instance, &debug, nullptr, &m));
    messenger_ = Unique<destroy_debug_messenger>(instance, m);
  }
}

std::vector<VkPhysicalDevice> Instance::physical_devices() const {
  uint32_t n = 0;
  VK_CHECK(vkEnumeratePhysicalDevices(get(), &n, nullptr));
  std::vector<VkPhysicalDevice> out(n);
  VK_CHECK(vkEnumeratePhysicalDevices(get(), &n, out.data()));
  out.resize(n);
  return out;
}

std::vector<DeviceReport> survey_devices(const Instance& instance) {
  std::vector<DeviceReport> out;
  auto devices = instance.physical_devices();
  for (uint32_t i = 0; i < devices.size(); ++i) {
    DeviceReport r{.index = i, .caps = read_caps(instance.get(), devices[i])};
    r.profile = choose_profile(r.caps);
    r.problems = problems(r.caps, r.profile);
    r.coopmat = plan_coopmat(r.caps, coop_request(instance, {}));
    out.push_back(std::move(r));
  }
  return out;
}

// --- device choice

namespace {

int type_rank(const std::string& type) {
  static const char* order[] = {"discrete", "integrated", "virtual", "cpu"};
  for (int i = 0; i < 4; ++i)
    if (type == order[i]) return i;
  return 4;
}

std::string list_devices(const std::vector<DeviceReport>& reports) {
  std::string s;
  for (const DeviceReport& r : reports) {
    s += fmt::format("{}{}: {}", s.empty() ? "" : "; ", r.index, r.caps.name);
    for (const std::string& p : r.problems) s += fmt::format(" ({})", p);
  }
  return s;
}

uint32_t choose_device(const std::vector<DeviceReport>& reports, std::optional<uint32_t> requested) {
  ENSURE(!reports.empty(), "no Vulkan device found (on a machine without a GPU: apt install mesa-vulkan-drivers)");
  if (requested) {
    uint32_t i = *requested;
    ENSURE(i < reports.size(), fmt::format("device index {} is out of range: {} device(s) found ({})", i,
                                           reports.size(), list_devices(reports)));
    const DeviceReport& r = reports[i];
    ENSURE(r.problems.empty(),
           fmt::format("device {} ({}) cannot run vkllm: {}", i, r.caps.name, fmt::join(r.problems, "; ")));
    return i;
  }
  std::optional<uint32_t> best = preferred_device(reports);
  ENSURE(best, "no Vulkan device can run vkllm: " + list_devices(reports));
  return *best;
}

}  // namespace

std::optional<uint32_t> preferred_device(const std::vector<DeviceReport>& reports) {
  std::optional<uint32_t> best;
  for (const DeviceReport& r : reports)
    if (r.problems.empty() && (!best || type_rank(r.caps.type) < type_rank(reports[*best].caps.type))) best = r.index;
  return best;
}

// --- context

Context::Context(const ContextOptions& options) : instance_(validation_requested(options)) {
  std::vector<DeviceReport> reports = survey_devices(instance_);
  index_ = choose_device(reports, requested_device(options));
  physical_ = instance_.physical_devices()[index_];
  caps_ = reports[index_].caps;
  std::string profile = requested_profile(options);
  profile_ = profile.empty() ? reports[index_].profile : profile_for(parse_profile_request(profile), caps_);
  std::vector<std::string> why = problems(caps_, profile_);
  ENSURE(why.empty(), fmt::format("device {} ({}) cannot run profile {}: {}", index_, caps_.name, profile_.name,
                                  fmt::join(why, "; ")));
  memory_limit_ = requested_memory_limit(options);
  if (options.discrete_memory.value_or(env("VKLLM_DISCRETE_MEMORY").value_or("0") != "0")) caps_.uma = false;

  // Enable exactly what the kernels' SPIR-V declares (problems() has checked the device has it),
  // plus subgroup-size control, which pipelines use to require the profile's size.
  bool v13 = VK_API_VERSION_MINOR(caps_.api_version) >= 3;
  auto needed = [](ShaderFeature f) -> VkBool32 {
    const auto& uses = shader_requirements().uses;
    return std::any_of(uses.begin(), uses.end(), [f](const FeatureUse& u) { return u.feature == f; });
  };
  VkBool32 dot = needed(ShaderFeature::DotProduct);
  VkPhysicalDeviceVulkan13Features f13{.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES,
                                       .subgroupSizeControl = caps_.subgroup_size_control,
                                       .computeFullSubgroups = caps_.subgroup_size_control,
                                       .shaderIntegerDotProduct = dot};
  VkPhysicalDeviceSubgroupSizeControlFeatures ssc{
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES,
      .subgroupSizeControl = caps_.subgroup_size_control,
      .computeFullSubgroups = caps_.subgroup_size_control};
  VkPhysicalDeviceShaderIntegerDotProductFeatures dot_ext{
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES, .shaderIntegerDotProduct = dot};
  VkPhysicalDeviceVulkan12Features f12{.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                       .pNext = v13 ? static_cast<void*>(&f13) : nullptr,
                                       .storageBuffer8BitAccess = needed(ShaderFeature::Storage8),
                                       .shaderFloat16 = needed(ShaderFeature::Float16),
                                       .shaderInt8 = needed(ShaderFeature::Int8)};
  if (!v13) {  // the 1.3 features come from their extensions
    void** tail = &f12.pNext;
    if (caps_.subgroup_size_control) *tail = &ssc, tail = &ssc.pNext;
    if (dot) *tail = &dot_ext;
  }
  VkPhysicalDeviceVulkan11Features f11{.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES,
                                       .pNext = &f12,
                                       .storageBuffer16BitAccess = needed(ShaderFeature::Storage16)};
  VkPhysicalDeviceFeatures2 f2{.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &f11};
  f2.features.shaderInt16 = needed(ShaderFeature::Int16);
  f2.features.shaderInt64 = needed(ShaderFeature::Int64);

  std::vector<const char*> extensions;
  if (!v13 && caps_.subgroup_size_control) extensions.push_back(VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
  if (!v13 && dot) extensions.push_back(VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME);
  // Cooperative matrices only where the plan uses them: their extension and feature, and what the
  // matmul_coop modules declare besides (f16 arithmetic, the Vulkan memory model). They stay out
  // of shader_requirements(), which every device must meet.
  coop_plan_ = plan_coopmat(caps_, coop_request(instance_, options));
  VkPhysicalDeviceCooperativeMatrixFeaturesNV coop_nv{
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV, .cooperativeMatrix = VK_TRUE};
  khr::CooperativeMatrixFeatures coop_khr{.cooperativeMatrix = VK_TRUE};
  if (coop_plan_.api != CoopApi::None) {
    bool nv = coop_plan_.api == CoopApi::Nv;
    f12.shaderFloat16 = f12.vulkanMemoryModel = VK_TRUE;
    auto* end = reinterpret_cast<VkBaseOutStructure*>(&f2);
    while (end->pNext) end = end->pNext;
    end->pNext =
        nv ? reinterpret_cast<VkBaseOutStructure*>(&coop_nv) : reinterpret_cast<VkBaseOutStructure*>(&coop_khr);
    extensions.push_back(nv ? VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME : khr::kExtension);
  }
  // VK_EXT_memory_budget needs no enabling: read_caps queries it from the physical device.

  float priority = 1.0f;
  VkDeviceQueueCreateInfo queue{.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                .queueFamilyIndex = caps_.compute_queue_family,
                                .queueCount = 1,
                                .pQueuePriorities = &priority};
  VkDeviceCreateInfo info{.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                          .pNext = &f2,
                          .queueCreateInfoCount = 1,
                          .pQueueCreateInfos = &queue,
                          .enabledExtensionCount = static_cast<uint32_t>(extensions.size()),
                          .ppEnabledExtensionNames = extensions.data()};
  VkDevice device = VK_NULL_HANDLE;
  VK_CHECK(vkCreateDevice(physical_, &info, nullptr, &device));
  device_ = UniqueDevice(device);
  vkGetDeviceQueue(device, caps_.compute_queue_family, 0, &queue_);

  VkCommandPoolCreateInfo pool{.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                               .flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT,
                               .queueFamilyIndex = caps_.compute_queue_family};
  VkCommandPool p = VK_NULL_HANDLE;
  VK_CHECK(vkCreateCommandPool(device, &pool, nullptr, &p));
  one_off_pool_ = UniqueCommandPool(device, p);
  VkFenceCreateInfo fence{.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkFence f = VK_NULL_HANDLE;
  VK_CHECK(vkCreateFence(device, &fence, nullptr, &f));
  one_off_fence_ = UniqueFence(device, f);
  kernels_ = std::make_unique<KernelCache>(*this);
  if (instance_.validation())
    set_name_ =
        reinterpret_cast<PFN_vkSetDebugUtilsObjectNameEXT>(vkGetDeviceProcAddr(device, "vkSetDebugUtilsObjectNameEXT"));
}

Context::~Context() {
  if (device_) vkDeviceWaitIdle(device_.get());
}

void Context::run_now(const std::function<void(VkCommandBuffer)>& record) const {
  VkCommandBufferAllocateInfo alloc{.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                    .commandPool = one_off_pool_.get(),
                                    .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                    .commandBufferCount = 1};
  VkCommandBuffer cb = VK_NULL_HANDLE;
  VK_CHECK(vkAllocateCommandBuffers(device(), &alloc, &cb));
  struct Free {
    const Context* c;
    VkCommandBuffer cb;
    ~Free() { vkFreeCommandBuffers(c->device(), c->one_off_pool_.get(), 1, &cb); }
  } free_later{this, cb};
  VkCommandBufferBeginInfo begin{.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                 .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
  VK_CHECK(vkBeginCommandBuffer(cb, &begin));
  record(cb);
  VK_CHECK(vkEndCommandBuffer(cb));
  VkSubmitInfo submit{.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cb};
  VkFence fence = one_off_fence_.get();
  VK_CHECK(vkResetFences(device(), 1, &fence));
  VK_CHECK(vkQueueSubmit(queue_, 1, &submit, fence));
  wait(fence);
}

void Context::wait(VkFence fence) const {
  static const double seconds = [] {
    const char* env = std::getenv("VKLLM_GPU_TIMEOUT");
    return env && std::atof(env) > 0 ? std::atof(env) : 0.0;
  }();
  double limit = seconds > 0 ? seconds : (caps().type == "cpu" ? 600 : 60);
  VkResult r = vkWaitForFences(device(), 1, &fence, VK_TRUE, uint64_t(limit * 1e9));
  if (r == VK_TIMEOUT)
    throw DeviceLost(VK_ERROR_DEVICE_LOST,
                     fmt::format("waiting for the GPU ({} s without an answer, VKLLM_GPU_TIMEOUT)", limit).c_str(),
                     __FILE__, __LINE__);
  VK_CHECK(r);
}

std::optional<uint32_t> Context::memory_type(uint32_t type_bits, VkMemoryPropertyFlags need,
                                             VkMemoryPropertyFlags want) const {
  VkPhysicalDeviceMemoryProperties mp;
  vkGetPhysicalDeviceMemoryProperties(physical_, &mp);
  std::optional<uint32_t> fallback;
  for (uint32_t i = 0; i < mp.memoryTypeCount; ++i) {
    VkMemoryPropertyFlags flags = mp.memoryTypes[i].propertyFlags;
    if (!(type_bits & (1u << i)) || (flags & need) != need) continue;
    if ((flags & want) == want) return i;
    if (!fallback) fallback = i;
  }
  return fallback;
}

void Context::set_name(VkObjectType type, uint64_t handle, const std::string& name) const {
  if (!set_name_) return;
  VkDebugUtilsObjectNameInfoEXT info{.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_OBJECT_NAME_INFO_EXT,
                                     .objectType = type,
                                     .objectHandle = handle,
                                     .pObjectName = name.c_str()};
  set_name_(device(), &info);
}

bool Context::charge(uint64_t bytes) const {
  uint64_t now = allocated_.load();
  do {
    if (memory_limit_ && (bytes > memory_limit_ || now > memory_limit_ - bytes)) return false;
  } while (!allocated_.compare_exchange_weak(now, now + bytes));
  uint64_t peak = peak_.load();
  while (now + bytes > peak && !peak_.compare_exchange_weak(peak, now + bytes)) {
  }
  return true;
}

}  // namespace vkllm
