#include <glad/gl.h>

#include <handoff/gl_handles.hpp>

namespace handoff {

void GlBufferDeleter::operator()(unsigned name) const noexcept { glDeleteBuffers(1, &name); }
void GlTextureDeleter::operator()(unsigned name) const noexcept { glDeleteTextures(1, &name); }
void GlMemoryObjectDeleter::operator()(unsigned name) const noexcept { glDeleteMemoryObjectsEXT(1, &name); }
void GlSemaphoreDeleter::operator()(unsigned name) const noexcept { glDeleteSemaphoresEXT(1, &name); }
void GlSyncDeleter::operator()(void* sync) const noexcept { glDeleteSync(static_cast<GLsync>(sync)); }
void GlShaderDeleter::operator()(unsigned name) const noexcept { glDeleteShader(name); }
void GlProgramDeleter::operator()(unsigned name) const noexcept { glDeleteProgram(name); }
void GlVertexArrayDeleter::operator()(unsigned name) const noexcept { glDeleteVertexArrays(1, &name); }
void GlFramebufferDeleter::operator()(unsigned name) const noexcept { glDeleteFramebuffers(1, &name); }

}  // namespace handoff
