// out[i] = 64 rounds of an integer hash (xor-shift, multiply) of i, for i < n.
#version 450
#extension GL_EXT_buffer_reference : require
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Words { uint v[]; };
layout(push_constant, std430) uniform Params {
  layout(offset = 0) Words outp;
  layout(offset = 8) uint n;
} p;
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i >= p.n) return;
  uint h = i;
  for (uint r = 0; r < 64; r++) {
    h ^= h >> 16;
    h *= 0x7feb352du;
    h ^= h >> 15;
    h *= 0x846ca68bu;
    h += r;
  }
  p.outp.v[i] = h;
}
