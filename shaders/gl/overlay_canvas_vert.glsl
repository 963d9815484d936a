#version 450 core
// The CPU-rasterised overlay canvas (viewer/view/src/box_renderer.cpp) over
// the whole viewport: two triangles, no vertex buffer.
const vec2 kCorners[6] = vec2[6](vec2(0.0, 0.0), vec2(1.0, 0.0), vec2(0.0, 1.0),
                                 vec2(0.0, 1.0), vec2(1.0, 0.0), vec2(1.0, 1.0));

void main() {
  const vec2 c = kCorners[gl_VertexID];
  gl_Position = vec4(c * 2.0 - 1.0, 0.0, 1.0);
}
