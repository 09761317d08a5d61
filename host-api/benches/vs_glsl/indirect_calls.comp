// out[i] = 16 steps of acc = f[(i + k) mod 4](acc) from acc = i, for i < n (a switch: GLSL
// has no function pointers).
#version 450
#extension GL_EXT_buffer_reference : require
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Words { uint v[]; };
layout(push_constant, std430) uniform Params {
  layout(offset = 0) Words outp;
  layout(offset = 8) uint n;
} p;
uint f0(uint v) { return v * 3u + 1u; }
uint f1(uint v) { return (v >> 3) ^ v; }
uint f2(uint v) { return v + 0x9e3779b9u; }
uint f3(uint v) { return v * 0x5bd1e995u; }
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i >= p.n) return;
  uint acc = i;
  for (uint k = 0; k < 16; k++) {
    switch ((i + k) & 3u) {
      case 0: acc = f0(acc); break;
      case 1: acc = f1(acc); break;
      case 2: acc = f2(acc); break;
      default: acc = f3(acc); break;
    }
  }
  p.outp.v[i] = acc;
}
