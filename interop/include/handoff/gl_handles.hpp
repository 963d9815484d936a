#pragma once
// Owners of GL objects (handoff/unique_handle.hpp): one UniqueHandle alias per
// object type, deleting the object when the owner goes (glDeleteBuffers,
// glDeleteTextures, glDeleteSync, ...). Public classes hold them as members
// (GlFence, GlVkBuffer, GlVkTexture, ...), and an application may use them for
// its own objects the same way:
//   handoff::UniqueGlTexture t(name);  // glDeleteTextures(1, &name) when t goes
// Without the GL headers: a GL name is an unsigned (GLuint), a sync object a
// void* (GLsync).
//
// Every deleter calls GL, so a handle must be reset or destroyed on a thread
// where a context of the object's share group is current (as the classes
// holding them say).
#include <handoff/unique_handle.hpp>

namespace handoff {

struct GlBufferDeleter {
  void operator()(unsigned name) const noexcept;  // glDeleteBuffers
};
struct GlTextureDeleter {
  void operator()(unsigned name) const noexcept;  // glDeleteTextures
};
struct GlMemoryObjectDeleter {
  void operator()(unsigned name) const noexcept;  // glDeleteMemoryObjectsEXT
};
struct GlSemaphoreDeleter {
  void operator()(unsigned name) const noexcept;  // glDeleteSemaphoresEXT
};
struct GlSyncDeleter {
  void operator()(void* sync) const noexcept;  // glDeleteSync
};
struct GlShaderDeleter {
  void operator()(unsigned name) const noexcept;  // glDeleteShader
};
struct GlProgramDeleter {
  void operator()(unsigned name) const noexcept;  // glDeleteProgram
};
struct GlVertexArrayDeleter {
  void operator()(unsigned name) const noexcept;  // glDeleteVertexArrays
};
struct GlFramebufferDeleter {
  void operator()(unsigned name) const noexcept;  // glDeleteFramebuffers
};

using UniqueGlBuffer = UniqueHandle<unsigned, GlBufferDeleter>;
using UniqueGlTexture = UniqueHandle<unsigned, GlTextureDeleter>;
using UniqueGlMemoryObject = UniqueHandle<unsigned, GlMemoryObjectDeleter>;
using UniqueGlSemaphore = UniqueHandle<unsigned, GlSemaphoreDeleter>;
using UniqueGlSync = UniqueHandle<void*, GlSyncDeleter>;
using UniqueGlShader = UniqueHandle<unsigned, GlShaderDeleter>;
using UniqueGlProgram = UniqueHandle<unsigned, GlProgramDeleter>;
using UniqueGlVertexArray = UniqueHandle<unsigned, GlVertexArrayDeleter>;
using UniqueGlFramebuffer = UniqueHandle<unsigned, GlFramebufferDeleter>;

}  // namespace handoff
