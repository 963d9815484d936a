// RgbaImage: snapshot pixels, and their DLPack export (HxWx4 uint8 on the host).
#include <handoff/viewer.hpp>

#include <array>

namespace handoff {
namespace {

// What a tensor's manager_ctx holds: the pixels (shared) and the arrays DLTensor points at.
struct ImageExport {
  std::shared_ptr<const std::vector<std::uint8_t>> pixels;
  std::array<std::int64_t, 3> shape{};
  std::array<std::int64_t, 3> strides{};
};

template <typename Tensor>
Tensor* export_image(std::uint32_t w, std::uint32_t h, const std::shared_ptr<const std::vector<std::uint8_t>>& px) {
  if (!px) throw UsageError("RgbaImage: an empty image has nothing to export");
  auto ctx = std::make_unique<ImageExport>();
  ctx->pixels = px;
  ctx->shape = {std::int64_t(h), std::int64_t(w), 4};
  ctx->strides = {std::int64_t(w) * 4, 4, 1};
  auto t = std::make_unique<Tensor>();
  DLTensor& d = t->dl_tensor;
  d.data = const_cast<std::uint8_t*>(px->data());  // read-only (the versioned flag says so)
  d.device = DLDevice{kDLCPU, 0};
  d.ndim = 3;
  d.dtype = DLDataType{kDLUInt, 8, 1};
  d.shape = ctx->shape.data();
  d.strides = ctx->strides.data();
  d.byte_offset = 0;
  t->manager_ctx = ctx.release();
  t->deleter = [](Tensor* self) {
    delete static_cast<ImageExport*>(self->manager_ctx);
    delete self;
  };
  return t.release();
}

}  // namespace

DLManagedTensor* RgbaImage::to_dlpack() const { return export_image<DLManagedTensor>(width_, height_, pixels_); }

DLManagedTensorVersioned* RgbaImage::to_dlpack_versioned() const {
  DLManagedTensorVersioned* t = export_image<DLManagedTensorVersioned>(width_, height_, pixels_);
  t->version = DLPackVersion{kDLPackMajorVersion, kDLPackMinorVersion};
  t->flags = kDLPackFlagReadOnly;
  return t;
}

}  // namespace handoff
