// CUDA layers through Viewer::show against the fake CUDA driver (whose device
// memory is PROT_NONE to host code): a class map, scalar maps (fixed and
// automatic range) and instance masks in CUDA memory, pitched, give the same
// snapshot as the same layers from host memory, with no copy from or to host
// memory (fake_cuda_host_copies) and no buffer registration per frame at a
// steady stream; CUDA layers on another device or in a viewer without CUDA
// are refused naming the field, and the viewer goes on; a recording viewer
// records CUDA layers as it records host layers.
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <limits>
#include <random>
#include <vector>

#include "cuda_frames.hpp"
#include "fake_cuda_control.hpp"
#include "interop_testing.hpp"
#include <handoff/cuda_check.hpp>
#include <handoff/media/recording.hpp>
#include <layer_samples.hpp>

namespace handoff::view::test {
namespace {

constexpr std::uint32_t kW = 64, kH = 48;  // the frame
constexpr std::uint32_t kLw = 37, kLh = 29;  // the layers
constexpr Yuv kGrey{126, 128, 128};

ViewerOptions options(ViewerMemory memory) {
  ViewerOptions o;
  o.title = "cuda-layers";
  o.width = 320;
  o.height = 240;
  o.display = ViewerDisplay::Headless;
  o.memory = memory;
  o.gl_debug = true;
  // The layer shaders draw host and CUDA layers alike, so the two compare
  // exactly (a software GL's CPU colour path composites host layers on the
  // CPU, within a code or two of the shaders: LayersPaths compares those).
  o.convert = ViewerConvert::Gpu;
  return o;
}

// A device copy of host samples, pitched (16 bytes past each row) so the
// viewer's copy has to repack.
class DeviceArray {
 public:
  DeviceArray(const media::LayerArray& host) : ctx_(cuda::driver(), 0) {
    const cuda::Driver& d = cuda::driver();
    cuda::ScopedContext current(ctx_);
    const std::size_t rows = std::size_t(host.height) * host.count, pitch = host.row_bytes() + 16;
    HANDOFF_CU_CHECK(d.api().cuMemAlloc(&ptr_, pitch * rows));
    cuda::abi::CUDA_MEMCPY2D m{};
    m.srcMemoryType = cuda::abi::CU_MEMORYTYPE_HOST;
    m.srcHost = host.data;
    m.srcPitch = host.row_bytes();
    m.dstMemoryType = cuda::abi::CU_MEMORYTYPE_DEVICE;
    m.dstDevice = ptr_;
    m.dstPitch = pitch;
    m.WidthInBytes = host.row_bytes();
    m.Height = rows;
    HANDOFF_CU_CHECK(d.api().cuMemcpy2D(&m));
    array_ = host;
    array_.memory = MemoryKind::Cuda;
    array_.device = 0;
    array_.cuda_context = ctx_.handle();
    array_.data = reinterpret_cast<const void*>(ptr_);
    array_.pitch = pitch;
  }
  ~DeviceArray() {
    cuda::ScopedContext current(ctx_);
    cuda::driver().api().cuMemFree(ptr_);
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  const media::LayerArray& array() const { return array_; }

 private:
  cuda::PrimaryContext ctx_;
  cuda::abi::CUdeviceptr ptr_ = 0;
  media::LayerArray array_;
};

template <typename T>
media::LayerArray host_array(const std::vector<T>& v, media::SampleType type, std::uint32_t count = 1) {
  media::LayerArray a;
  a.data = v.data();
  a.type = type;
  a.width = kLw;
  a.height = kLh;
  a.count = count;
  return a;
}

// Host samples of every layer kind, and the overlays that show them.
struct Layers {
  std::vector<std::int16_t> ids;
  std::vector<float> values;
  std::vector<double> wide;
  std::vector<std::uint8_t> masks;
  Layers() {
    std::mt19937 rng(7);
    const std::size_t n = std::size_t(kLw) * kLh;
    for (std::size_t i = 0; i < n; ++i) {
      ids.push_back(std::int16_t(int(rng() % 9) - 2));
      values.push_back(float(rng() % 1000) / 10.0f);
      wide.push_back(double(rng() % 5000) / 50.0 - 20.0);
    }
    values[5] = std::numeric_limits<float>::quiet_NaN();
    for (std::size_t i = 0; i < 2 * n; ++i) masks.push_back(rng() % 3 == 0 ? 1 : 0);
  }
  // The overlays, each array given by `arrays` (host: as they are; CUDA: device copies).
  template <typename F>
  media::OverlayFrame overlays(F&& arrays) const {
    media::OverlayFrame f;
    f.add_box(2, 2, 30, 20, "person", 0.9f, 1);
    f.add_box(20, 10, 60, 40, "car", 0.8f, 2);
    media::ClassMap c;
    c.ids = arrays(host_array(ids, media::SampleType::I16), 0);
    c.colors = {{-1, media::Color8{250, 0, 0, 255}}, {3, media::Color8{0, 250, 0, 255}}};
    c.transparent = {0};
    c.opacity = 0.6f;
    f.layers.push_back(c);
    media::ScalarMap fixed;
    fixed.values = arrays(host_array(wide, media::SampleType::F64), 1);
    fixed.range = std::array<double, 2>{-10.0, 60.0};
    fixed.target = media::RectF{0, 0, 32, 24};
    fixed.opacity = 0.7f;
    f.layers.push_back(fixed);
    media::ScalarMap automatic;
    automatic.values = arrays(host_array(values, media::SampleType::F32), 2);
    automatic.colormap = media::Colormap::Turbo;
    automatic.target = media::RectF{32, 24, 32, 24};
    automatic.opacity = 0.8f;
    f.layers.push_back(automatic);
    media::InstanceMasks m;
    m.masks = arrays(host_array(masks, media::SampleType::U8, 2), 3);
    m.opacity = 0.5f;
    f.layers.push_back(m);
    return f;
  }
  // The same overlays with each array in CUDA memory (copies kept in `device`).
  media::OverlayFrame on_device(std::vector<std::unique_ptr<DeviceArray>>& device) const {
    return overlays([&](const media::LayerArray& a, int) {
      device.push_back(std::make_unique<DeviceArray>(a));
      return device.back()->array();
    });
  }
};

class CudaLayers : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fake_.ok()) << fake_.error();
    fake_.reset();
    const std::optional<std::string> gl = handoff::testing::gl_device_uuid();
    ASSERT_TRUE(gl) << "GL reports no GL_DEVICE_UUID_EXT";
    ASSERT_EQ(fake_.set_uuid(gl->c_str()), 0);
  }
  void TearDown() override {
    EXPECT_EQ(fake_.live_mappings(), 0);
    EXPECT_EQ(fake_.live_registrations(), 0);
    EXPECT_EQ(fake_.live_allocations(), 0);
  }
  handoff::test::FakeCuda fake_;
};

std::vector<std::uint8_t> pixels(const RgbaImage& img) {
  return std::vector<std::uint8_t>(img.data(), img.data() + img.stride() * img.height());
}

TEST_F(CudaLayers, CudaLayersShowAsTheSameLayersFromHostMemoryWithNoHostCopy) {
  const Layers l;
  const media::OverlayFrame host = l.overlays([](const media::LayerArray& a, int) { return a; });
  std::vector<std::unique_ptr<DeviceArray>> device;
  const media::OverlayFrame cuda = l.on_device(device);
  DeviceFrame frame(solid_frame(PixelFormat::NV12, kW, kH, kGrey));
  RgbaImage want, got;
  {
    Viewer v(options(ViewerMemory::Cuda));
    v.show(frame.frame(), host);
    want = v.snapshot();
  }
  {
    Viewer v(options(ViewerMemory::Cuda));
    const int host_copies = fake_.host_copies(), to_host = fake_.call_count("cuMemcpyDtoH");
    const int async = fake_.call_count("cuMemcpy2DAsync");
    v.show(frame.frame(), cuda);
    EXPECT_EQ(fake_.host_copies(), host_copies) << "no copy from or to host memory";
    EXPECT_EQ(fake_.call_count("cuMemcpyDtoH"), to_host);
    // One copy per frame plane and per layer image (masks: 2).
    EXPECT_EQ(fake_.call_count("cuMemcpy2DAsync"), async + 2 + 1 + 1 + 1 + 2);
    got = v.snapshot();
    EXPECT_EQ(fake_.host_copies(), host_copies) << "the display reads no layer back through CUDA";
    EXPECT_EQ(v.diagnostics().gl_errors, 0u) << v.diagnostics().first_gl_error;
  }
  ASSERT_EQ(got.width(), want.width());
  ASSERT_EQ(got.height(), want.height());
  EXPECT_EQ(pixels(got), pixels(want));
  // The layers changed the picture (the comparison is not of two bare frames).
  Viewer bare(options(ViewerMemory::Cuda));
  bare.show(frame.frame());
  EXPECT_NE(pixels(bare.snapshot()), pixels(want));
}

// A frame without detections: CUDA masks with count 0 are not read (before,
// one mask's bytes were copied from the caller's pointer all the same).
TEST_F(CudaLayers, NoCudaMasksAreNotRead) {
  const Layers l;
  DeviceArray one(host_array(l.masks, media::SampleType::U8, 1));
  media::InstanceMasks none;
  none.masks = one.array();
  none.masks.count = 0;
  media::OverlayFrame overlays;
  overlays.layers.push_back(none);
  DeviceFrame frame(solid_frame(PixelFormat::NV12, kW, kH, kGrey));
  Viewer v(options(ViewerMemory::Cuda));
  const int async = fake_.call_count("cuMemcpy2DAsync");
  v.show(frame.frame(), overlays);
  EXPECT_EQ(fake_.call_count("cuMemcpy2DAsync"), async + 2) << "the frame's two planes, no mask";
  const RgbaImage got = v.snapshot();
  Viewer bare(options(ViewerMemory::Cuda));
  bare.show(frame.frame());
  EXPECT_EQ(pixels(got), pixels(bare.snapshot()));
  EXPECT_EQ(v.diagnostics().gl_errors, 0u) << v.diagnostics().first_gl_error;
}

// present(): an acquired frame's CUDA layers go the same way as show()'s.
TEST_F(CudaLayers, CudaLayersOfAPresentedFrameShowAsHostLayersWithNoHostCopy) {
  const Layers l;
  std::vector<std::unique_ptr<DeviceArray>> device;
  const media::OverlayFrame cuda = l.on_device(device);
  const media::OverlayFrame host = l.overlays([](const media::LayerArray& a, int) { return a; });
  const Frame grey = solid_frame(PixelFormat::NV12, kW, kH, kGrey);
  cuda::PrimaryContext ctx(cuda::driver(), 0);
  // An acquired frame filled with the grey frame (a host copy, before the counting).
  auto presented = [&](Viewer& v, const media::OverlayFrame& overlays, int* host_copies) {
    ViewerFrame slot = v.acquire(PixelFormat::NV12, kW, kH);
    const Frame& d = slot.frame();
    {
      cuda::ScopedContext current(ctx);
      for (int p = 0; p < 2; ++p) {
        cuda::abi::CUDA_MEMCPY2D m{};
        m.srcMemoryType = cuda::abi::CU_MEMORYTYPE_HOST;
        m.srcHost = grey.planes[std::size_t(p)].data;
        m.srcPitch = grey.planes[std::size_t(p)].pitch;
        m.dstMemoryType = cuda::abi::CU_MEMORYTYPE_DEVICE;
        m.dstDevice = reinterpret_cast<cuda::abi::CUdeviceptr>(d.planes[std::size_t(p)].data);
        m.dstPitch = d.planes[std::size_t(p)].pitch;
        m.WidthInBytes = plane_layout(PixelFormat::NV12, kW, kH, p).row_bytes;
        m.Height = d.planes[std::size_t(p)].height;
        HANDOFF_CU_CHECK(cuda::driver().api().cuMemcpy2D(&m));
      }
    }
    const int before = fake_.host_copies();
    v.present(std::move(slot), overlays);
    if (host_copies) *host_copies = fake_.host_copies() - before;
    return pixels(v.snapshot());
  };
  Viewer a(options(ViewerMemory::Cuda)), b(options(ViewerMemory::Cuda));
  const std::vector<std::uint8_t> want = presented(a, host, nullptr);
  int host_copies = -1;
  EXPECT_EQ(presented(b, cuda, &host_copies), want);
  EXPECT_EQ(host_copies, 0);
  EXPECT_EQ(b.diagnostics().gl_errors, 0u) << b.diagnostics().first_gl_error;
}

TEST_F(CudaLayers, ASteadyStreamOfCudaLayersRegistersNoBufferPerFrame) {
  const Layers l;
  std::vector<std::unique_ptr<DeviceArray>> device;
  const media::OverlayFrame cuda = l.on_device(device);
  DeviceFrame frame(solid_frame(PixelFormat::NV12, kW, kH, kGrey));
  Viewer v(options(ViewerMemory::Cuda));
  for (int i = 0; i < 8; ++i) v.show(frame.frame(), cuda);  // every slot has its buffers now
  const int registered = fake_.call_count("cuGraphicsGLRegisterBuffer");
  const int host_copies = fake_.host_copies();
  for (int i = 0; i < 8; ++i) v.show(frame.frame(), cuda);
  EXPECT_EQ(fake_.call_count("cuGraphicsGLRegisterBuffer"), registered);
  EXPECT_EQ(fake_.host_copies(), host_copies);
  v.snapshot();
  EXPECT_EQ(v.diagnostics().gl_errors, 0u) << v.diagnostics().first_gl_error;
}

TEST_F(CudaLayers, ACudaLayerOnAnotherDeviceIsRefusedAndTheViewerGoesOn) {
  const Layers l;
  std::vector<std::unique_ptr<DeviceArray>> device;
  media::OverlayFrame cuda = l.overlays([&](const media::LayerArray& a, int) {
    device.push_back(std::make_unique<DeviceArray>(a));
    return device.back()->array();
  });
  std::get<media::ScalarMap>(cuda.layers[2]).values.device = 1;
  DeviceFrame frame(solid_frame(PixelFormat::NV12, kW, kH, kGrey));
  Viewer v(options(ViewerMemory::Cuda));
  try {
    v.show(frame.frame(), cuda);
    ADD_FAILURE() << "no InvalidFrame";
  } catch (const InvalidFrame& e) {
    EXPECT_EQ(e.field(), "layers[2].values.device") << e.what();
  }
  std::get<media::ScalarMap>(cuda.layers[2]).values.device = 0;
  EXPECT_NO_THROW(v.show(frame.frame(), cuda));
}

TEST_F(CudaLayers, ACudaLayerInAViewerWithoutCudaIsRefusedAndTheViewerGoesOn) {
  const Layers l;
  std::vector<std::unique_ptr<DeviceArray>> device;
  const media::OverlayFrame cuda = l.on_device(device);
  Viewer v(options(ViewerMemory::Host));
  const Frame host_frame = solid_frame(PixelFormat::NV12, kW, kH, kGrey);
  try {
    v.show(host_frame, cuda);
    ADD_FAILURE() << "no InvalidFrame";
  } catch (const InvalidFrame& e) {
    EXPECT_EQ(e.field(), "layers[0].memory") << e.what();
    EXPECT_NE(std::string(e.what()).find("no CUDA"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(v.show(host_frame, l.overlays([](const media::LayerArray& a, int) { return a; })));
  EXPECT_FALSE(v.snapshot().empty());
}

// --record: the viewer's CUDA layers (in its ring's GL buffers) are read back
// with the frame and written as its host layers are, and play back as sent.
TEST_F(CudaLayers, ARecordingViewerRecordsCudaLayersAsItRecordsHostLayers) {
  const Layers l;
  const media::OverlayFrame host = l.overlays([](const media::LayerArray& a, int) { return a; });
  std::vector<std::unique_ptr<DeviceArray>> device;
  const media::OverlayFrame cuda = l.on_device(device);
  const std::filesystem::path rec = std::filesystem::temp_directory_path() /
                                    ("handoff-cuda-layers-" + std::to_string(::getpid()) + ".mcap");
  DeviceFrame frame(solid_frame(PixelFormat::NV12, kW, kH, kGrey));
  {
    ViewerOptions o = options(ViewerMemory::Cuda);
    o.record.path = rec.string();
    Viewer v(o);
    const int host_copies = fake_.host_copies();
    v.show(frame.frame(), cuda);
    (void)v.snapshot();
    EXPECT_EQ(fake_.host_copies(), host_copies) << "the layers were read back through GL, not CUDA";
    v.close();
    EXPECT_EQ(v.stats().recorded, 1u);
    EXPECT_EQ(v.diagnostics().gl_errors, 0u) << v.diagnostics().first_gl_error;
  }
  auto src = media::open_recording(rec.string());
  media::OverlayFrame got;
  ASSERT_TRUE(src->overlays_for(0, got));
  EXPECT_EQ(handoff::test::layer_difference(got, host), "");
  src.reset();
  std::filesystem::remove(rec);
}

}  // namespace
}  // namespace handoff::view::test
