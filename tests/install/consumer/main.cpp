// A program outside the handoff tree, built against an installed handoff: it
// makes a host NV12 frame and hands the luma plane to a DLPack consumer.
// tests/install/install_test.cmake builds it twice, through the CMake package
// (CMakeLists.txt here) and through pkg-config (Makefile here), and runs both.
#include <handoff/dlpack.hpp>
#include <handoff/host_frame.hpp>

#include <cstdio>

int main() {
  using namespace handoff;
  Frame frame = allocate_host_frame(PixelFormat::NV12, 64, 48);
  const Plane& luma = frame.planes[0];
  static_cast<unsigned char*>(luma.data)[luma.pitch * 47 + 63] = 235;  // the last luma sample

  DLManagedTensorVersioned* tensor = export_dlpack_versioned(frame, FramePart::Luma);
  frame = {};  // the tensor alone keeps the memory alive now
  const DLTensor& t = tensor->dl_tensor;
  const auto* samples = static_cast<const unsigned char*>(t.data);
  const bool ok = tensor->version.major == 1 && (tensor->flags & kDLPackFlagReadOnly) &&
                  t.device.device_type == kDLCPU && t.dtype.code == kDLUInt && t.dtype.bits == 8 &&
                  t.ndim == 2 && t.shape[0] == 48 && t.shape[1] == 64 && t.strides[1] == 1 &&
                  samples[t.byte_offset + t.strides[0] * 47 + 63] == 235;
  std::printf("consumer: %s luma (%lld, %lld), row stride %lld: %s\n", ok ? "exported" : "BAD",
              static_cast<long long>(t.shape[0]), static_cast<long long>(t.shape[1]),
              static_cast<long long>(t.strides[0]), ok ? "ok" : "unexpected tensor");
  tensor->deleter(tensor);
  return ok ? 0 : 1;
}
