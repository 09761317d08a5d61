// A 5-point stencil on an n x n f32 grid: out = 0.2 * (c + w + e + north + south) inside,
// out = in on the border.
#version 450
#extension GL_EXT_buffer_reference : require
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Floats { float v[]; };
layout(push_constant, std430) uniform Params {
  layout(offset = 0) Floats inp;
  layout(offset = 8) Floats outp;
  layout(offset = 16) uint n;
} p;
void main() {
  uint x = gl_GlobalInvocationID.x, y = gl_GlobalInvocationID.y, n = p.n;
  uint i = y * n + x;
  float c = p.inp.v[i];
  if (x - 1u >= n - 2u || y - 1u >= n - 2u) {
    p.outp.v[i] = c;
    return;
  }
  float s = c + p.inp.v[i - 1];
  s = s + p.inp.v[i + 1];
  s = s + p.inp.v[i - n];
  s = s + p.inp.v[i + n];
  p.outp.v[i] = s * 0.2;
}
